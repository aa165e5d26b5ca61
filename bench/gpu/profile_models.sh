#!/usr/bin/env bash
# Per-dispatch profiles of the model set on the GPU machine, and which
# convolution and matrix-product dispatches fall short of a roofline fraction
# (bench/roofline_report.py), after `bash bench/gpu/measure.sh models` has
# exported the models into $RECQ_MODELS_DIR (default /tmp/recq-models):
#   bash bench/gpu/profile_models.sh [MODEL ...]        (default: every NAME.onnx there)
# TUNE=exhaustive runs `recq tune --exhaustive` on each model first (the
# tuning cache is the one measure.sh's runs used when RECQ_CACHE_DIR is the
# same). Profiles and roofline.json go to $OUT (or ./gpu-results).
set -uo pipefail
cd "$(dirname "$0")/../.."
source gpu-bundle/env.sh
out=${OUT:-gpu-results}
dir=${RECQ_MODELS_DIR:-/tmp/recq-models}
mkdir -p "$out"
models=("$@")
if [ ${#models[@]} -eq 0 ]; then
  for f in "$dir"/*.onnx; do models+=("$(basename "$f" .onnx)"); done
fi
for m in "${models[@]}"; do
  [ -f "$dir/$m.onnx" ] || { echo "profile_models: no $dir/$m.onnx" >&2; continue; }
  if [ "${TUNE:-none}" = exhaustive ]; then
    gpu-bundle/bin/recq tune "$dir/$m.onnx" --device=nvidia --exhaustive >/dev/null 2>&1
  fi
  gpu-bundle/bin/recq run "$dir/$m.onnx" --device=nvidia --runs=20 --profile \
    --input="input=$dir/$m.input.f32" >"$out/prof_$m.txt" 2>&1
done
python3 bench/roofline_report.py --json "$out/roofline.json" "$out"/prof_*.txt
