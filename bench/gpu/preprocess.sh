#!/usr/bin/env bash
# NV12 1280x720 camera frames into MobileNet V2 224x224 on the GPU: the
# preprocessing fused into the recording vs a separate preprocessing pass
# (bench/preprocess_bench.cc), on the GPU machine from the repository
# root, after `bash bench/gpu/prepare.sh` packed gpu-bundle/ on the build
# machine and it was copied along:
#
#   bash bench/gpu/preprocess.sh
#
# Medians of $RUNS (default 100) interleaved runs per pipeline; JSON in
# $OUT/preprocess_gpu.json (or ./gpu-results/).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-gpu-results}
mkdir -p "$out"
source gpu-bundle/env.sh
nvidia-smi -L || true
export RECQ_CACHE_DIR=${RECQ_CACHE_DIR:-/tmp/recq-cache}
gpu-bundle/bin/preprocess_bench --runs="${RUNS:-100}" --device=nvidia \
  --json="$out/preprocess_gpu.json" 2>&1 | tee "$out/preprocess_gpu.txt"
