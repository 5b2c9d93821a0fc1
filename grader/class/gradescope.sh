#!/usr/bin/env bash
# gradescope.sh SLUG OUT.zip - the autograder zip for one lab, to Gradescope's specification: setup.sh and
# run_autograder at the top, the kit beside them (Gradescope unpacks it into /autograder/source). It holds
# the kit's sources, the lab's contract, skeleton and grader; no reference solutions and no mutants.
# Course staff only (make gradescope LAB=NN).
set -eu
cd "$(dirname "$0")/../.."
slug=${1:?usage: gradescope.sh SLUG OUT.zip}
zip=${2:?usage: gradescope.sh SLUG OUT.zip}
[ -f "labs/$slug/lab.cu" ] || { echo "gradescope: no lab $slug"; exit 2; }
mkdir -p "$(dirname "$zip")"
python3 - "$slug" "$zip" <<'PY'
import os, subprocess, sys, zipfile
slug, out = sys.argv[1], sys.argv[2]
files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "Makefile", "common", "grader",
                        "labs/" + slug],
                       capture_output=True, text=True, check=True).stdout.split()
files = [f for f in files if "/mutants/" not in f and not f.startswith("grader/class/gradescope/")]
tmp = out + ".tmp"
with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
    for name, arc in [("grader/class/gradescope/setup.sh", "setup.sh"), ("grader/class/gradescope/run_autograder", "run_autograder")]:
        info = zipfile.ZipInfo(arc)
        info.external_attr = 0o100755 << 16
        z.writestr(info, open(name, "rb").read(), zipfile.ZIP_DEFLATED)
    for f in files:
        z.write(f)
    z.writestr("xferlab-lab", slug + "\n")
os.replace(tmp, out)
print("gradescope: %s (%d files; lab %s, no solutions, no mutants)" % (out, len(files) + 3, slug))
PY
