#!/usr/bin/env bash
# The decode loop on the GPU machine against PyTorch, after
# bench/gpu/prepare.sh packed gpu-bundle/: exports the GPT-2-small decoder
# with past key/values there (bench/models/export_models.py, TorchScript
# and dynamo exporters; the file is too large to carry), then, batch 1,
# greedy, the 16-token prompt of bench/models/decode_reference.py and 128
# new tokens, fp32:
#   recq generate (default options, medians of $REPEAT generations), its
#   ids against transformers' greedy generate and each step's logits against
#   onnxruntime's (bench/models/decode_reference.py, check_decode.py)
#   PyTorch eager with the static cache and one static-cache step captured
#   as a CUDA graph (bench/gpu/decode_torch.py, TF32 off, same weights)
#   bash bench/gpu/decode.sh
# JSON to $OUT (or ./gpu-results): recq_generate_*.json, check_decode_*.json,
# decode_torch.json.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-gpu-results}
mkdir -p "$out"
source gpu-bundle/env.sh
dir=${RECQ_MODELS_DIR:-/tmp/recq-decoders}
python3 bench/models/export_models.py --no-venv --models gpt2_past --exporter both --out "$dir" \
  >"$out/decode_export.log" 2>&1
tail -n 2 "$out/decode_export.log"
P=3622,45135,10775,1162,24960,23403,11562,15994,29651,24963,24367,19289,24189,18526,8478,21864
for stem in gpt2_past gpt2_past_dynamo; do
  [ -f "$dir/$stem.onnx" ] || { echo "decode.sh: no $dir/$stem.onnx" >&2; continue; }
  echo "== recq generate $stem"
  gpu-bundle/bin/recq generate "$dir/$stem.onnx" --device=nvidia --prompt-ids=$P \
    --max-new-tokens=128 --max-length=144 --repeat="${REPEAT:-20}" \
    --json="$out/recq_generate_$stem.json" --logits="$dir/$stem.recq_logits.f32" |
    grep -v "^ids\|^prompt"
  # The ids against transformers' greedy generate, each step's logits against
  # onnxruntime running the same file one token per run.
  python3 bench/models/decode_reference.py --no-venv --model gpt2_past --onnx "$dir/$stem.onnx" \
    --out "$dir" --prompt-length 16 --new-tokens 128 >"$out/decode_reference_$stem.log" 2>&1 ||
    tail -n 3 "$out/decode_reference_$stem.log"
  python3 bench/models/check_decode.py --ref "$dir/$stem.decode.npz" \
    --recq "$out/recq_generate_$stem.json" --json "$out/check_decode_$stem.json"
done
gpu-bundle/bin/recq generate "$dir/gpt2_past.onnx" --device=nvidia --prompt-ids=$P \
  --max-new-tokens=8 --max-length=144 --repeat=1 --profile-step | sed -n '/one step/,$p'
echo "== PyTorch"
python3 bench/gpu/decode_torch.py --device cuda --model gpt2_past --runs "${RUNS:-20}" \
  --modes eager_static,cuda_graph --json "$out/decode_torch.json" | tail -n 4
