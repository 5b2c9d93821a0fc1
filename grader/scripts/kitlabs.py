"""kitlabs.py - where the kit is and which labs it has, for the course-staff scripts (stability.py and
margins.py beside it, grader/class/class.py and docs/check.py import it)."""
import os
import re

KIT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))


def labs():
    """{'01': '01-pageable-copy', ...}: every labs/NN-slug/ that has a lab.cu, in order"""
    return {d[:2]: d for d in sorted(os.listdir(os.path.join(KIT, 'labs')))
            if re.match(r'^\d\d-', d) and os.path.isfile(os.path.join(KIT, 'labs', d, 'lab.cu'))}
