#!/usr/bin/env bash
# fp16 storage against fp32 (EngineOptions::precision) over the model set on
# this machine's default device (PoCL here): both engines per model, runs
# interleaved, medians of $RUNS (default 25), the latency ratio fp16/fp32,
# the rel-L2 distance of the fp16 output from the fp32 one and top-1
# agreement on the model's own input (MODEL.input.f32) and on $RANDOM_INPUTS
# (default 4) random inputs. See bench/fp16_bench.cc.
#
#   bash bench/fp16.sh [JSON]     (default build/fp16_bench.json)
#
# Models: $RECQ_MODELS_DIR/*.onnx (default /work/wtmodels/build/models), or
# MODELS="a b" for a subset by name.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${RECQ_BUILD_DIR:-build}
json=${1:-$build/fp16_bench.json}
dir=${RECQ_MODELS_DIR:-/work/wtmodels/build/models}
models=()
if [ -n "${MODELS:-}" ]; then
  for m in $MODELS; do models+=("$dir/$m.onnx"); done
else
  models=("$dir"/*.onnx)
fi
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
RECQ_CACHE_DIR=${RECQ_CACHE_DIR:-$PWD/$build/recq-cache} \
  "$build/bench/fp16_bench" --runs="${RUNS:-25}" --random="${RANDOM_INPUTS:-4}" \
  --json="$json" "${models[@]}"
