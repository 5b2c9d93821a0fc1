#!/usr/bin/env bash
# doctor.sh - checks what the kit needs and prints, for each, what it found or the exact fix (make doctor).
# Checks: nvcc (CUDA Toolkit 12+) and its cuBLAS, the NVIDIA driver and a GPU, Criterion, gnuplot, and pandoc and
# weasyprint (make docs; optional, as gnuplot is). Exit 0 when the kit can build and grade here (a GPU is not required:
# without one the GPU tests are skipped). Its commands say sudo only when not run as root.
set -u
[ $# = 0 ] || { echo "doctor: takes no arguments: it checks what the kit needs and prints each fix (make doctor)" >&2; exit 2; }
cd "$(dirname "$0")/../.."
nvcc=${NVCC:-nvcc}
need=0
line() { printf '  %-8s %-10s %s\n' "$1" "$2" "$3"; }
sudo='sudo ' # the fixes' commands say sudo, but not to root
[ "$(id -u)" != 0 ] || sudo=''

echo "make doctor: what xferlab needs on this machine"

if command -v "$nvcc" >/dev/null 2>&1; then
    v=$("$nvcc" --version | sed -n 's/.*release \([0-9]*\.[0-9]*\).*/\1/p')
    if [ "${v%%.*}" -ge 12 ] 2>/dev/null; then line ok nvcc "CUDA $v at $(command -v "$nvcc")"
    else line FIX nvcc "CUDA $v is too old: install the CUDA Toolkit 12 or newer (https://developer.nvidia.com/cuda-downloads)"; need=1; fi
else
    line FIX nvcc "not found: install the CUDA Toolkit 12 or newer, then add its bin/ to PATH or run make CUDA_HOME=/path/to/cuda"
    need=1
fi
# cuBLAS (lab 10's model), shared, from the toolkit nvcc belongs to: the Makefile links it from there
if v=$("$nvcc" --version 2>/dev/null | sed -n 's/.*release \([0-9]*\)\.\([0-9]*\).*/\1-\2/p') && [ -n "$v" ]; then
    cuda=$(dirname "$(dirname "$(readlink -f "$(command -v "$nvcc")")")")
    if [ -e "$cuda/lib64/libcublas.so" ]; then line ok cublas "$cuda/lib64/libcublas.so (lab 10)"
    else line FIX cublas "no $cuda/lib64/libcublas.so, which lab 10 links: ${sudo}apt-get install libcublas-dev-$v (NVIDIA's CUDA repository)"; need=1; fi
fi

if command -v nvidia-smi >/dev/null 2>&1 && q=$(nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader 2>/dev/null | head -1) && [ -n "$q" ]; then
    IFS=, read -r name drv gen width <<<"$q"
    line ok driver "NVIDIA driver$drv; GPU $name; PCIe link gen$gen x$width now (an idle GPU may show a lower gen)"
else
    line info driver "no NVIDIA driver or GPU found: everything builds, the GPU tests are SKIPPED, charts use the reference data"
fi
if [ -x build/bin/gpu-probe ]; then
    p=$(build/bin/gpu-probe); rc=$?
    if [ $rc = 0 ]; then line ok cuda "$p"; else line info cuda "$p"; fi
else
    line info cuda "run 'make' first, then 'make doctor' again to check that CUDA programs start"
fi

if [ -f build/criterion/include/criterion/criterion.h ]; then
    line ok criterion "the bundled runtime in build/criterion (make bundle)"
elif pkg-config --exists criterion 2>/dev/null; then
    line ok criterion "Criterion $(pkg-config --modversion criterion)"
else
    line FIX criterion "missing: ${sudo}apt-get install libcriterion-dev pkg-config (no packages on a GPU host? see README: GPU hosts without packages)"
    need=1
fi

if command -v gnuplot >/dev/null 2>&1; then line ok gnuplot "$(gnuplot --version)"
else line info gnuplot "missing, so no charts: ${sudo}apt-get install gnuplot-nox"; fi
for tool in pandoc weasyprint; do
    if command -v $tool >/dev/null 2>&1; then line ok $tool "$($tool --version 2>&1 | head -1)"
    else line info $tool "missing, so no make docs (grading does not need it): ${sudo}apt-get install $tool"; fi
done

if [ $need = 0 ]; then echo "make doctor: ready. Next: make demo"; else echo "make doctor: fix the lines marked FIX, then run make doctor again"; fi
exit $need
