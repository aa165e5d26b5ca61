#!/usr/bin/env bash
# The Ray Serve example's test (tests/python/test_serve.py): installs
# ray[serve] and Pillow (the image requests) from PyPI into
# ${RECQ_BUILD_DIR:-build}/venv-ray (once; it sees
# Debian's numpy and pytest through --system-site-packages), builds the
# Python module and the CLI, and runs the test against the build's module.
# The interpreter is the one the build's module is built for.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${RECQ_BUILD_DIR:-build}
[ -f "$build_dir/CMakeCache.txt" ] || bash scripts/build.sh -DRECQ_WERROR=ON
cmake --build "$build_dir" --target _recq recq_cli
python=$(sed -n 's/^Python3_EXECUTABLE:FILEPATH=//p' "$build_dir/CMakeCache.txt")
venv=$build_dir/venv-ray
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import ray.serve, PIL" 2>/dev/null; then
  "${python:-/usr/bin/python3}" -m venv --system-site-packages "$venv"
  "$venv/bin/pip" install -q "ray[serve]" pillow
fi
export PYTHONPATH=$PWD/$build_dir/python
export RECQ_CLI=$PWD/$build_dir/tools/recq
export RECQ_CACHE_DIR=${RECQ_CACHE_DIR:-$PWD/$build_dir/recq-cache}
export RECQ_TUNING=${RECQ_TUNING:-off}
export PYTHONDONTWRITEBYTECODE=1
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider -rs tests/python/test_serve.py "$@"
