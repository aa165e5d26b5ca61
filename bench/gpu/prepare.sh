#!/usr/bin/env bash
# Builds recq here and packs the programs the GPU measurement needs into
# gpu-bundle/ (git-ignored), with the libraries they use. Then copy the
# repository with gpu-bundle/ to the GPU machine and run
# `bash bench/gpu/measure.sh` (one GPU) or `bash bench/gpu/bench_multi_device.sh`
# (two GPUs) there.
# `measure.sh models` needs only recq: a build configured with
# -DRECQ_BUILD_BENCHMARKS=OFF packs just that.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${RECQ_BUILD_DIR:-build}
bash scripts/build.sh >/dev/null
bundler=${RECQ_GPU_BUNDLER:-../shared/tools/gpu-bundle.sh}
progs=("$build/tools/recq")
for p in "$build/bench/replay_overhead_bench" "$build/bench/mobilenet_bench" "$build/bench/preprocess_bench" "$build/bench/fp16_bench" "$build/bench/gemm_bench"; do
  if [ -x "$p" ]; then progs+=("$p"); else echo "prepare: no $p (benchmarks not built): measure.sh models only" >&2; fi
done
"$bundler" gpu-bundle "${progs[@]}"
