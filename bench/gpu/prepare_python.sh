#!/usr/bin/env bash
# Packs recq and its Python package, built for the GPU machine's Python, into
# gpu-bundle/ (git-ignored), with the libraries they use:
#
#   bash bench/gpu/prepare_python.sh PY_INCLUDE_DIR PYBIND11_INCLUDE_DIR [EXT_SUFFIX]
#
# That machine has no Abseil or protobuf development files, so the module is
# compiled here: PY_INCLUDE_DIR holds the headers of its Python (a copy of
# the folder `python3 -c "import sysconfig; print(sysconfig.get_paths()['include'])"`
# names there; Debian's and Ubuntu's Python.h also reads the multiarch
# x86_64-linux-gnu/python3.X/pyconfig.h, looked for in the folder above it),
# PYBIND11_INCLUDE_DIR a pybind11 that supports that Python,
# and EXT_SUFFIX is its extension suffix (default .cpython-312-x86_64-linux-gnu.so).
# The module is compiled and linked with the build's own commands for
# recq._recq, the interpreter's headers and pybind11's swapped. On the GPU
# machine: `source gpu-bundle/env.sh; PYTHONPATH=gpu-bundle/python python3 ...`.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ $# -lt 2 ]; then
  sed -n '2,16p' "$0"
  exit 2
fi
py_include=$(cd "$1" && pwd)
pybind11_include=$(cd "$2" && pwd)
suffix=${3:-.cpython-312-x86_64-linux-gnu.so}
build=${RECQ_BUILD_DIR:-build}
bash scripts/build.sh --target _recq --target recq_cli >/dev/null
host_module=$(ls "$build"/python/recq/_recq*.so)
work=$build/python-gpu
rm -rf "$work"
mkdir -p "$work"
object=$work/recq_py.o
module=$work/_recq$suffix
# The include folder of the interpreter the build's module is for.
python=$(sed -n 's/^Python3_EXECUTABLE:FILEPATH=//p' "$build/CMakeCache.txt")
host_include=$("${python:-python3}" -c "import sys; print(f'python{sys.version_info[0]}.{sys.version_info[1]}')")
# The build's commands that compile and link the host's module.
cmds=$(ninja -C "$build" -t commands "${host_module#"$build"/}")
compile=$(grep -- '-c [^ ]*python/src/recq_py.cc' <<<"$cmds")
link=$(grep -- " -o ${host_module#"$build"/} " <<<"$cmds")
compile_obj=$(sed -E 's/.* -o ([^ ]+) -c .*/\1/' <<<"$compile")
compile=$(sed -E 's/ -MD -MT [^ ]+ -MF [^ ]+//' <<<"$compile")
compile=${compile/" -o $compile_obj "/" -o $PWD/$object "}
compile=$(sed -E "s#-isystem [^ ]*/${host_include}( |$)#-isystem $py_include -isystem $(dirname "$py_include") #g" <<<"$compile")
compile=${compile/" -isystem "/" -isystem $pybind11_include -isystem "}
link=${link/"$compile_obj"/"$PWD/$object"}
link=${link/" -o ${host_module#"$build"/} "/" -o $PWD/$module "}
(cd "$build" && eval "$compile" && eval "$link")
"${RECQ_GPU_BUNDLER:-../shared/tools/gpu-bundle.sh}" gpu-bundle "$build/tools/recq" "$module"
# That machine's C++ runtime is newer than this one's and backward compatible;
# the interpreter there must keep it, for its own extensions.
rm -f gpu-bundle/lib/libstdc++.so.6 gpu-bundle/lib/libgcc_s.so.1
mkdir -p gpu-bundle/python/recq
mv "gpu-bundle/bin/$(basename "$module")" gpu-bundle/python/recq/
cp python/recq/*.py gpu-bundle/python/recq/
du -sh gpu-bundle
