#!/usr/bin/env bash
# The text and audio families of the model set on the GPU machine, after
# bench/gpu/prepare.sh packed gpu-bundle/: exports them there with the
# machine's torch and transformers (TorchScript exporter; the files are too
# large to carry), then checks that recq loads each and matches onnxruntime
# (bench/models/check_models.py, relative L2 below 1e-4).
#   bash bench/gpu/families.sh [MODELS]   (default: the six text and audio models)
# JSON and a Markdown table go to $OUT (or ./gpu-results).
set -uo pipefail
cd "$(dirname "$0")/../.."
models=${1:-bert,gpt2,t5_encoder,whisper_encoder,wav2vec2,segformer}
out=${OUT:-gpu-results}
mkdir -p "$out"
source gpu-bundle/env.sh
build=$(mktemp -d)
mkdir -p "$build/tools" && cp gpu-bundle/bin/recq "$build/tools/recq"
dir=${RECQ_MODELS_DIR:-/tmp/recq-families}
python3 bench/models/export_models.py --no-venv --models "$models" --exporter torchscript \
  --out "$dir" > "$out/families_export.log" 2>&1
tail -n 8 "$out/families_export.log"
python3 bench/models/check_models.py --build "$build" --models-dir "$dir" --device nvidia \
  --json "$out/families_gpu.json" --markdown "$out/families_gpu.md"
