#!/usr/bin/env bash
# The tests: install what is missing, build with warnings as errors, run ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash scripts/build.sh -DRECQ_WERROR=ON
# The tests' program-binary cache stays inside the build tree.
export RECQ_CACHE_DIR=${RECQ_CACHE_DIR:-$PWD/${RECQ_BUILD_DIR:-build}/recq-cache}
# The auto-tuner off unless asked for: tests compare against references, and
# the tuner's own tests (tuner_test) set EngineOptions::tuning themselves.
export RECQ_TUNING=${RECQ_TUNING:-off}
ctest --test-dir "${RECQ_BUILD_DIR:-build}" -j"$(nproc)" --output-on-failure --timeout 600
