#!/usr/bin/env bash
# Shape profiles on the GPU machine, after bench/gpu/prepare.sh packed
# gpu-bundle/: exports ResNet-50 with a symbolic batch and BERT with a
# symbolic sequence there, then
#   ResNet-50, batch profile 1..32 in power-of-two buckets: throughput per
#     bucket (recq bench --shapes, one engine, the weights uploaded once);
#   BERT (bench/models/families.py), batch 2, lengths 1..512 in power-of-two
#     buckets: each bucket's first result in the loaded engine and its
#     steady latency against an engine built for that shape alone (--exact).
#   bash bench/gpu/shapes.sh
# JSON to $OUT (or ./gpu-results): shapes_resnet50.json, shapes_bert.json.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-gpu-results}
mkdir -p "$out"
source gpu-bundle/env.sh
dir=${RECQ_MODELS_DIR:-/tmp/recq-shapes}
python3 bench/models/export_models.py --no-venv --models resnet50 --dynamic-batch --out "$dir" \
  >"$out/shapes_export.log" 2>&1
python3 bench/models/export_models.py --no-venv --models bert --dynamic-seq --exporter torchscript \
  --out "$dir" >>"$out/shapes_export.log" 2>&1
tail -n 2 "$out/shapes_export.log"
recq=gpu-bundle/bin/recq
echo "== ResNet-50, batch 1..32"
"$recq" bench "$dir/resnet50_dyn.onnx" --device=nvidia --shapes=input:1..32/pow2x3x224x224 \
  --pad=input:0 --duration="${DURATION:-3}" --json="$out/shapes_resnet50.json"
echo "== BERT, batch 2, lengths 1..512"
P=input_ids:2x1..512/pow2,attention_mask:2x1..512/pow2
"$recq" bench "$dir/bert_seq.onnx" --device=nvidia --shapes=$P --pad=input_ids:0,attention_mask:0 \
  --duration=1 >/dev/null
"$recq" bench "$dir/bert_seq.onnx" --device=nvidia --shapes=$P --pad=input_ids:0,attention_mask:0 \
  --exact --duration="${DURATION:-3}" --json="$out/shapes_bert.json"
for len in 64 512; do
  echo "== recq run bert_seq at 2x$len (warm caches)"
  "$recq" run "$dir/bert_seq.onnx" --device=nvidia --runs=5 \
    --shapes=input_ids:2x$len,attention_mask:2x$len | grep -i "first\|compile\|load"
done
