#!/usr/bin/env bash
# gradescope.sh SLUG OUT.zip - the autograder zip for one lab, to Gradescope's specification: setup.sh and
# run_autograder at the top, the kit beside them (Gradescope unpacks it into /autograder/source). It holds
# the kit's sources, the lab's contract, skeleton and grader; no reference solutions and no mutants.
# Course staff only (make gradescope LAB=NN).
set -eu
cd "$(dirname "$0")/../.."
[ $# = 2 ] || { echo "usage: grader/class/gradescope.sh SLUG OUT.zip (make gradescope LAB=NN)" >&2; exit 2; }
slug=$1 zip=$2
[ -f "labs/$slug/lab.cu" ] || { echo "gradescope: no lab $slug (give its full name, e.g. $(basename labs/01-*))" >&2; exit 2; }
[ ! -d "$zip" ] || { echo "gradescope: $zip is a folder: name the zip, e.g. $zip/$slug-autograder.zip" >&2; exit 2; }
mkdir -p "$(dirname "$zip")" 2>/dev/null && [ -w "$(dirname "$zip")" ] ||
    { echo "gradescope: cannot write in $(dirname "$zip"): name a zip in a folder you can write" >&2; exit 2; }
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
