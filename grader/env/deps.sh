#!/usr/bin/env bash
# deps.sh - checks the kit's dependencies; installs missing Debian/Ubuntu packages when it can.
# Run by make before building. Required: nvcc (CUDA Toolkit 12+), Criterion (package or the
# bundled runtime in build/criterion). Optional: gnuplot (charts are skipped without it).
# XL_NO_INSTALL=1 only checks. Exit 0 when the build can go on, 1 with the exact fix on stderr otherwise.
# apt-get's output goes to $XL_APT_LOG (default /tmp/xferlab-apt.log).
# An optional package that apt-get could not install (a host without network) is written into a stamp,
# $XL_DEPS_TRIED (make passes build/.deps-tried), and not tried again while it is there: delete the stamp to
# try again. A required one is tried on every run.
set -u
[ $# = 0 ] || { echo "deps: takes no arguments (make runs it; XL_NO_INSTALL=1 only checks)" >&2; exit 2; }
nvcc=${NVCC:-nvcc}
bundle=${XL_CRITERION_BUNDLE:-build/criterion}
tried=${XL_DEPS_TRIED:-build/.deps-tried}
log=${XL_APT_LOG:-/tmp/xferlab-apt.log}
apt_cmd=""
if [ "$(id -u)" = 0 ]; then apt_cmd="apt-get"; elif sudo -n true 2>/dev/null; then apt_cmd="sudo apt-get"; fi

# install PKG WHY - installs PKG with apt-get if allowed; 0 when it is there afterwards, 1 when apt-get failed,
# 2 when it may not install (not root and no sudo without a password, or XL_NO_INSTALL=1)
install() {
    if [ -z "$apt_cmd" ] || [ "${XL_NO_INSTALL:-0}" = 1 ]; then return 2; fi
    echo "deps: installing $1 with apt-get ($2)"
    DEBIAN_FRONTEND=noninteractive $apt_cmd install -y -qq "$1" >"$log" 2>&1 && return 0
    DEBIAN_FRONTEND=noninteractive $apt_cmd update -qq >>"$log" 2>&1 &&
        DEBIAN_FRONTEND=noninteractive $apt_cmd install -y -qq "$1" >>"$log" 2>&1 && return 0
    echo "deps: apt-get could not install $1 (log: $log)"
    return 1
}

# install_optional PKG WHY - install, once: a package apt-get could not install is added to the stamp, and one
# the stamp names is not tried again; 0 when it is there afterwards
install_optional() {
    if grep -qxF "$1" "$tried" 2>/dev/null; then return 1; fi
    install "$1" "$2"
    case $? in
    0) return 0 ;;
    1) { mkdir -p "$(dirname "$tried")" && echo "$1" >>"$tried"; } 2>/dev/null ;;
    esac
    return 1
}

ok=0
if ! command -v "$nvcc" >/dev/null 2>&1; then
    echo "deps: nvcc not found ($nvcc): install the CUDA Toolkit 12 or newer, then put its bin/ on PATH or run make CUDA_HOME=/usr/local/cuda" >&2
    ok=1
fi
if [ ! -f "$bundle/include/criterion/criterion.h" ] && ! pkg-config --exists criterion 2>/dev/null; then
    command -v pkg-config >/dev/null 2>&1 || install pkg-config "to find Criterion" || true
    if ! install libcriterion-dev "Criterion, the test framework of the graders" || ! pkg-config --exists criterion; then
        echo "deps: Criterion is missing: run 'sudo apt-get install libcriterion-dev pkg-config', or on a GPU host without packages unpack the runtime bundle (README: GPU hosts without packages)" >&2
        ok=1
    fi
fi
if command -v gnuplot >/dev/null 2>&1 || install_optional gnuplot-nox "gnuplot, for the charts"; then
    rm -f "$tried" # gnuplot, the one optional package, is there: nothing left to skip
elif grep -qxF gnuplot-nox "$tried" 2>/dev/null; then
    echo "deps: gnuplot is missing, so charts are skipped: 'sudo apt-get install gnuplot-nox' adds them (apt-get failed at it once, so make no longer tries: delete $tried to try again)"
else
    echo "deps: gnuplot is missing, so charts are skipped: 'sudo apt-get install gnuplot-nox' adds them"
fi
exit $ok
