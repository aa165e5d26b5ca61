#!/usr/bin/env bash
# The tests: install what is missing, build with warnings as errors, run ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash scripts/build.sh -DRECQ_WERROR=ON
ctest --test-dir "${RECQ_BUILD_DIR:-build}" -j"$(nproc)" --output-on-failure --timeout 600
