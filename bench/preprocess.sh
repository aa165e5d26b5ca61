#!/usr/bin/env bash
# NV12 1280x720 -> MobileNet V2 224x224 on this machine's default device
# (PoCL in CI): the preprocessing fused into the recording vs a separate
# pass, medians of $RUNS (default 25) interleaved runs, JSON to $1 (default
# build/preprocess_bench.json). See bench/preprocess_bench.cc.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${RECQ_BUILD_DIR:-build}
json=${1:-$build/preprocess_bench.json}
RECQ_CACHE_DIR=${RECQ_CACHE_DIR:-$PWD/$build/recq-cache} \
  "$build/bench/preprocess_bench" --runs="${RUNS:-25}" --json="$json"
echo "wrote $json"
