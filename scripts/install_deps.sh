#!/usr/bin/env bash
# Installs the Debian packages recq builds, tests and runs with (as root, or
# through sudo). Does nothing when they are all there already.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config python3 python3-venv
  opencl-headers ocl-icd-opencl-dev ocl-icd-libopencl1 pocl-opencl-icd clinfo
  libabsl-dev libgtest-dev libgmock-dev libbenchmark-dev libssl-dev
  libonnx-dev libonnx-testdata libprotobuf-dev protobuf-compiler
  libpng-dev libjpeg62-turbo-dev
  pybind11-dev python3-dev python3-numpy python3-pytest
  clang-14 libclang-rt-14-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install_deps: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq "${missing[@]}"
