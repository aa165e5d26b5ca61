#!/usr/bin/env bash
# The full soak and stress runs (CI runs short versions inside ctest):
# 10,000 replays of MobileNet V2 224 sampled every 1,000 runs, 1,000
# recordings and 100 engines created and destroyed, and the concurrency
# stress with 200 rounds per thread. Prints the slopes. Needs a build
# (scripts/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${RECQ_BUILD_DIR:-build}
export RECQ_CACHE_DIR=${RECQ_CACHE_DIR:-$PWD/$build_dir/recq-cache}
RECQ_SOAK_RUNS=10000 RECQ_SOAK_SAMPLE_EVERY=1000 RECQ_SOAK_RESOLUTION=224 \
RECQ_SOAK_RECORDINGS=1000 RECQ_SOAK_ENGINES=100 \
  ctest --test-dir "$build_dir" --output-on-failure -V --timeout 7200 -R '^SoakTest\.' |
  grep -E "soak:|Passed|Failed|Failure|Expected|Which is" || true
RECQ_STRESS_RUNS=200 ctest --test-dir "$build_dir" --output-on-failure --timeout 7200 \
  -R 'ConcurrencyStressTest'
