#!/usr/bin/env bash
# The whole GPU measurement in one call, on the device machine (NVIDIA H200
# through its OpenCL driver), from the repository root, after
# bench/gpu/prepare.sh packed gpu-bundle/ here:
#   recq run on MobileNet V2 and V1 (224x224, batch 1): replay and unrecorded,
#   the replay-overhead benchmark (host CPU time per run vs the driver floor),
#   PyTorch eager and CUDA-graph replay of torchvision's MobileNet V2 on the same GPU.
# JSON and logs go to $OUT (or ./gpu-results).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-gpu-results}
mkdir -p "$out"
source gpu-bundle/env.sh
bin=gpu-bundle/bin
nvidia-smi -L || true
for m in v2 v1; do
  "$bin/recq" export-mobilenet --model=$m --resolution=224 "/tmp/mobilenet_$m.onnx"
  for backend in replay unrecorded; do
    echo "== recq run MobileNet $m, backend $backend"
    "$bin/recq" run "/tmp/mobilenet_$m.onnx" --runs=100 --backend=$backend --device=nvidia
  done
done
echo "== replay overhead (host CPU per run) on the GPU"
RECQ_DEVICE=nvidia "$bin/replay_overhead_bench" --benchmark_filter='/(floor|unrecorded|replay)/' \
  --benchmark_min_time=0.3 --benchmark_format=console \
  --benchmark_out="$out/replay_overhead_h200.json" --benchmark_out_format=json
echo "== MobileNet end to end per backend (recq, H200)"
RECQ_DEVICE=nvidia "$bin/mobilenet_bench" --benchmark_filter='/(unrecorded|replay)' \
  --benchmark_out="$out/mobilenet_h200.json" --benchmark_out_format=json
echo "== PyTorch MobileNet V2 on the same GPU"
python3 bench/gpu/torch_mobilenet.py --json "$out/torch_h200.json"
