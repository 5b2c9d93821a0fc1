#!/usr/bin/env bash
# setup.sh - Gradescope runs this once, as root, when it builds the autograder's image (Ubuntu). It installs
# what the kit needs to build and grade, all from Ubuntu's packages: the compiler, the CUDA Toolkit, Criterion.
# Gradescope's own machines have no GPU: there, every test that needs one is reported SKIPPED (see
# docs/grading.md for the two ways to grade the GPU tests). XL_SETUP_DRY=1 only prints the command.
set -eu
packages="build-essential make pkg-config libcriterion-dev nvidia-cuda-toolkit"
if [ "${XL_SETUP_DRY:-0}" = 1 ]; then
    echo "apt-get install -y $packages"
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq $packages
