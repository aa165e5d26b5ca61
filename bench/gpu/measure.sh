#!/usr/bin/env bash
# The whole GPU measurement in one call, on the GPU machine (an NVIDIA GPU
# through its OpenCL driver), from the repository root, after
# bench/gpu/prepare.sh packed gpu-bundle/ on the build machine:
#   bash bench/gpu/measure.sh [all|mobilenet|models]     (default all)
# mobilenet:
#   recq run on MobileNet V2 and V1 (224x224, batch 1): replay and unrecorded,
#   the replay-overhead benchmark (host CPU time per run vs the driver floor),
#   PyTorch eager and CUDA-graph replay of torchvision's MobileNet V2 on the same GPU.
# models (bench/gpu/model_set_gpu.py): the model set of
#   bench/models/export_models.py, exported there with the machine's torch
#   (or reused from $RECQ_MODELS_DIR), recq replay from the bundle vs PyTorch
#   eager and CUDA-graph replay with TF32 off and on, same weights and input,
#   medians of $RUNS (default 50) runs; MODELS=quick or MODELS=a,b for a
#   subset; TUNE=fast or TUNE=exhaustive runs `recq tune` on each model first;
#   PRECISIONS=fp32,tf32 runs recq at each precision (--precision)
#   (the whole set takes a few minutes: run `models` alone when the
#   10-minute limit of one call is tight).
# JSON and logs go to $OUT (or ./gpu-results).
set -uo pipefail
cd "$(dirname "$0")/../.."
what=${1:-all}
case "$what" in all|mobilenet|models) ;; *) echo "usage: $0 [all|mobilenet|models]" >&2; exit 2 ;; esac
out=${OUT:-gpu-results}
mkdir -p "$out"
source gpu-bundle/env.sh
bin=gpu-bundle/bin
nvidia-smi -L || true
if [ "$what" != models ]; then
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
fi
if [ "$what" != mobilenet ]; then
  echo "== model set: recq replay vs PyTorch eager / CUDA graph, TF32 off / on"
  python3 bench/gpu/model_set_gpu.py --models "${MODELS:-all}" --runs "${RUNS:-50}" --tune "${TUNE:-none}" \
    --recq "$bin/recq" --models-dir "${RECQ_MODELS_DIR:-/tmp/recq-models}" \
    --precisions "${PRECISIONS:-fp32}" --json "$out/model_set_h200.json" 2>&1 | tee "$out/model_set_h200.log"
fi
