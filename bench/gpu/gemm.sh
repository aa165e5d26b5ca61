#!/usr/bin/env bash
# The per-shape matrix-product benchmark (bench/gemm_bench.cc) on the GPU
# machine: every MatMul variant and parameter set on each shape, against the
# roofline recq measures there. JSON to $OUT (or ./gpu-results)/gemm.json.
#   bash bench/gpu/gemm.sh [--shapes=MxNxK,...] [--runs=N]
set -euo pipefail
cd "$(dirname "$0")/../.."
source gpu-bundle/env.sh
out=${OUT:-gpu-results}
mkdir -p "$out"
gpu-bundle/bin/gemm_bench --target=gpu --json="$out/gemm.json" "$@"
