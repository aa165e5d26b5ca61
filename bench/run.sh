#!/usr/bin/env bash
# Runs recq's benchmarks side by side on this machine and prints markdown
# tables (the README's); JSON lands in ${RECQ_BUILD_DIR:-build}/bench/.
#   bench/run.sh            all of it, then the plots under docs/
# GPU numbers come from bench/gpu/measure.sh (GPU machine); copy its JSON
# into docs/h200/ to have them plotted too.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${RECQ_BUILD_DIR:-build}
bash scripts/build.sh >/dev/null
out="$build/bench"
"$build/bench/replay_overhead_bench" --benchmark_min_time=0.5 \
  --benchmark_out="$out/replay_overhead.json" --benchmark_out_format=json >/dev/null
# qcom through the emulation layer, with the replay list under the same layer
# for a like-for-like comparison (the layer intercepts every call).
OPENCL_LAYERS="$PWD/$build/tools/qcom_layer/libRecqQcomLayer.so" \
  "$build/bench/replay_overhead_bench" --benchmark_min_time=0.5 \
  --benchmark_filter='/(replay|qcom)/' \
  --benchmark_out="$out/replay_overhead_layer.json" --benchmark_out_format=json >/dev/null
"$build/bench/mobilenet_bench" \
  --benchmark_out="$out/mobilenet.json" --benchmark_out_format=json >/dev/null
# Cold means no binary anywhere: PoCL's own kernel cache is off too.
POCL_KERNEL_CACHE=0 "$build/bench/compile_bench" \
  --benchmark_out="$out/compile.json" --benchmark_out_format=json >/dev/null
python3 bench/compare_onnxruntime.py --build "$build" --json "$out/onnxruntime.json"
echo
python3 bench/summarize.py "$out/replay_overhead.json" "$out/replay_overhead_layer.json" \
  "$out/mobilenet.json" "$out/compile.json"
gpu_dir=""
[ -d docs/h200 ] && gpu_dir=docs/h200
"$build/.venv-ort/bin/python" -m pip install -q matplotlib
"$build/.venv-ort/bin/python" bench/plot.py "$out" $gpu_dir --out docs
