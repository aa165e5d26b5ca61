#!/usr/bin/env bash
# Writes the 2-layer GPT-2-style decoder with past key/values that decode
# tests load, and its generation references, into tests/models/decoder/:
#
#   gpt2_past_tiny.onnx          TorchScript exporter, opset 17
#   gpt2_past_tiny_dynamo.onnx   dynamo exporter, opset 21
#   gpt2_past_tiny_optimum.onnx  optimum-onnx text-generation-with-past, opset 18
#   STEM.decode.json             prompt, transformers' 16 greedy ids,
#                                onnxruntime's ids, logit error and margins
#   STEM.decode.prompt.i64       the 8 prompt ids, raw little-endian int64
#   STEM.decode.ids.i64          transformers' 16 greedy ids (generate(do_sample=False))
#   STEM.decode.step_logits.f32  onnxruntime's logits [23, 256], raw float32:
#                                row t after feeding token t with t cached
#                                (prompt, then the generated ids)
#
# bench/models/export_models.py, export_optimum.py and decode_reference.py
# document the model and the files. Needs BUILD/.venv-models with the
# optimum overlay: `bash bench/models/setup_venv.sh --optimum`.
set -euo pipefail
cd "$(dirname "$0")/../../.."
build=${RECQ_BUILD_DIR:-build}
py="$build/.venv-models/bin/python3"
dest=tests/models/decoder
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$py" bench/models/export_models.py --models gpt2_past_tiny --exporter both --out "$tmp" --force
"$py" bench/models/export_optimum.py --models gpt2_past_tiny --out "$tmp" --force
for stem in gpt2_past_tiny gpt2_past_tiny_dynamo gpt2_past_tiny_optimum; do
  "$py" bench/models/decode_reference.py --model gpt2_past_tiny --onnx "$tmp/$stem.onnx" \
    --out "$tmp"
  cp "$tmp/$stem.onnx" "$tmp/$stem.decode.json" "$tmp/$stem.decode.prompt.i64" \
    "$tmp/$stem.decode.ids.i64" "$tmp/$stem.decode.step_logits.f32" "$dest/"
done
ls -l "$dest"
