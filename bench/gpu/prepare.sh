#!/usr/bin/env bash
# Builds recq here and packs the programs the GPU measurement needs into
# gpu-bundle/ (git-ignored), with the libraries they use. Then, with the
# device tool: run `bash bench/gpu/measure.sh` (one GPU) or
# `bash bench/gpu/bench_multi_device.sh` (two GPUs) carrying gpu-bundle.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${RECQ_BUILD_DIR:-build}
bash scripts/build.sh >/dev/null
bundler=${RECQ_GPU_BUNDLER:-../shared/tools/gpu-bundle.sh}
"$bundler" gpu-bundle "$build/tools/recq" "$build/bench/replay_overhead_bench" \
  "$build/bench/mobilenet_bench"
