#!/usr/bin/env bash
# fp16 storage against fp32 on the GPU (bench/fp16_bench.cc), on the GPU
# machine from the repository root, after `bash bench/gpu/prepare.sh` packed
# gpu-bundle/ on the build machine and it was copied along; the models are the ONNX files of
# $RECQ_MODELS_DIR (default /tmp/recq-models, where bench/gpu/measure.sh
# models exports them; the bundle's copies of MobileNet V2/V1 are made here
# with `recq export-mobilenet` when the directory holds none):
#
#   bash bench/gpu/fp16.sh
#
# Medians of $RUNS (default 100) interleaved runs per precision; JSON in
# $OUT/fp16_h200.json (or ./gpu-results/).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-gpu-results}
mkdir -p "$out"
source gpu-bundle/env.sh
nvidia-smi -L || true
export RECQ_CACHE_DIR=${RECQ_CACHE_DIR:-/tmp/recq-cache}
dir=${RECQ_MODELS_DIR:-/tmp/recq-models}
mkdir -p "$dir"
if ! ls "$dir"/*.onnx >/dev/null 2>&1; then
  for m in v2 v1; do
    gpu-bundle/bin/recq export-mobilenet --model=$m --resolution=224 "$dir/mobilenet_$m.onnx"
  done
fi
gpu-bundle/bin/fp16_bench --runs="${RUNS:-100}" --random="${RANDOM_INPUTS:-4}" --device=nvidia \
  --json="$out/fp16_h200.json" "$dir"/*.onnx 2>&1 | tee "$out/fp16_h200.txt"
