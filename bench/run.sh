#!/usr/bin/env bash
# Runs recq's benchmarks side by side and prints markdown tables (the README's).
# JSON lands in ${RECQ_BUILD_DIR:-build}/bench/*.json.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${RECQ_BUILD_DIR:-build}
bash scripts/build.sh >/dev/null
"$build/bench/replay_overhead_bench" --benchmark_min_time=0.5 --benchmark_format=json \
  --benchmark_out="$build/bench/replay_overhead.json" --benchmark_out_format=json >/dev/null
# qcom through the emulation layer, with the replay list under the same layer
# for a like-for-like comparison (the layer intercepts every call).
OPENCL_LAYERS="$PWD/$build/tools/qcom_layer/libRecqQcomLayer.so" \
  "$build/bench/replay_overhead_bench" --benchmark_min_time=0.5 --benchmark_format=json \
  --benchmark_filter='/(replay|qcom)/' \
  --benchmark_out="$build/bench/replay_overhead_layer.json" --benchmark_out_format=json >/dev/null
"$build/bench/mobilenet_bench" --benchmark_format=json \
  --benchmark_out="$build/bench/mobilenet.json" --benchmark_out_format=json >/dev/null
python3 bench/summarize.py "$build/bench/replay_overhead.json" \
  "$build/bench/replay_overhead_layer.json" "$build/bench/mobilenet.json"
