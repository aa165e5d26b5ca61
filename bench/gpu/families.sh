#!/usr/bin/env bash
# The model families beyond torchvision on the GPU machine, after
# bench/gpu/prepare.sh packed gpu-bundle/: exports them there with the
# machine's torch, transformers and timm, with both PyTorch exporters (the
# files are too large to carry), then checks that recq loads each and
# matches onnxruntime and PyTorch's fp32 output on that machine's CPU
# (bench/models/check_models.py, relative L2 below 1e-4).
#   bash bench/gpu/families.sh [MODELS] [EXPORTER]
#     MODELS: comma-separated names of export_models.py's --models
#     (default: the text and audio models and SegFormer); EXPORTER:
#     torchscript, dynamo or both (default).
# YOLOv8n and the U-Net need ultralytics and segmentation_models_pytorch,
# which the machine lacks: their wheels travel in .whl/ (git-ignored; carry
# it), downloaded here with
#   pip download --no-deps --only-binary=:all: --python-version 3.12 \
#     --implementation cp --platform manylinux_2_28_x86_64 -d .whl \
#     ultralytics==8.4.190 ultralytics-thop==2.2.3 ultralytics-platform==0.1.99 \
#     segmentation_models_pytorch==0.6.0
# JSON and a Markdown table go to $OUT (or ./gpu-results).
set -uo pipefail
cd "$(dirname "$0")/../.."
models=${1:-bert,gpt2,t5_encoder,whisper_encoder,wav2vec2,segformer}
exporter=${2:-both}
out=${OUT:-gpu-results}
mkdir -p "$out"
source gpu-bundle/env.sh
if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/recq-site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/recq-site${PYTHONPATH:+:$PYTHONPATH}
  export YOLO_OFFLINE=1
fi
build=$(mktemp -d)
mkdir -p "$build/tools" && cp gpu-bundle/bin/recq "$build/tools/recq"
dir=${RECQ_MODELS_DIR:-/tmp/recq-families}
# Exports are single-threaded Python: $JOBS processes (default 6), the
# models dealt round-robin.
jobs=${JOBS:-6}
IFS=, read -ra names <<<"$models"
for ((j = 0; j < jobs; j++)); do
  part=()
  for ((i = j; i < ${#names[@]}; i += jobs)); do part+=("${names[i]}"); done
  [ ${#part[@]} -gt 0 ] || continue
  (IFS=,; OMP_NUM_THREADS=2 python3 bench/models/export_models.py --no-venv --models "${part[*]}" \
    --exporter "$exporter" --out "$dir" >"$out/families_export_$j.log" 2>&1) &
done
wait
tail -q -n 3 "$out"/families_export_*.log
python3 bench/models/check_models.py --build "$build" --models-dir "$dir" --device nvidia \
  --json "$out/families_gpu.json" --markdown "$out/families_gpu.md"
