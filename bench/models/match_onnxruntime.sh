#!/usr/bin/env bash
# Loads every exported model of the model set in recq, runs it once through a
# recording on the model's fixed input and compares the output with
# onnxruntime's stored output (NAME.ort.f32): relative L2 and max abs diff.
# A correctness sweep, not a benchmark (one run; see compare_onnxruntime.py).
#
# Usage: bash bench/models/match_onnxruntime.sh [BUILD (default build)] [MODELS (default BUILD/models)]
#
# torchvision zero-initialises ViT's classification head, so vit_b_16's logits
# are 0 in every engine: for it the class token after the encoder's LayerNorm
# (/Gather_output_0) is made the graph output (onnx, BUILD/.venv-models) and
# onnxruntime (BUILD/.venv-ort) runs on the same edited model.
# RECQ_ORT_PYTHON and RECQ_ONNX_PYTHON override those two interpreters.
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
models=${2:-$build/models}
ort_py=${RECQ_ORT_PYTHON:-$build/.venv-ort/bin/python}
onnx_py=${RECQ_ONNX_PYTHON:-$build/.venv-models/bin/python}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-30s %-6s %-10s %-10s\n' model loads rel_l2 max_abs
for f in "$models"/*.onnx; do
  n=$(basename "$f" .onnx)
  in_name=$("$ort_py" -c "import json;print(json.load(open('$models/$n.json'))['input_name'])")
  out_name=$("$ort_py" -c "import json;print(json.load(open('$models/$n.json'))['output_name'])")
  model=$f
  expected=$models/$n.ort.f32
  if [ "$n" = vit_b_16 ]; then
    out_name=/Gather_output_0
    model=$work/vit_features.onnx
    expected=$work/vit_features.ort.f32
    "$onnx_py" - "$f" "$model" <<'PY'
import sys, onnx
m = onnx.load(sys.argv[1])
del m.graph.output[:]
m.graph.output.extend([onnx.helper.make_tensor_value_info(
    "/Gather_output_0", onnx.TensorProto.FLOAT, [1, 768])])
onnx.save(m, sys.argv[2])
PY
    "$ort_py" - "$model" "$models/$n.input.f32" "$expected" <<'PY'
import sys, numpy as np, onnxruntime as ort
s = ort.InferenceSession(sys.argv[1], providers=["CPUExecutionProvider"])
x = np.fromfile(sys.argv[2], dtype=np.float32).reshape(s.get_inputs()[0].shape)
s.run(None, {s.get_inputs()[0].name: x})[0].astype(np.float32).tofile(sys.argv[3])
PY
  fi
  out=$work/$n.recq.f32
  if ! "$build/tools/recq" run "$model" --input="$in_name=$models/$n.input.f32" \
      --output="$out_name=$out" --runs=1 > "$work/$n.log" 2>&1; then
    printf '%-30s %-6s %s\n' "$n" no "$(grep -m1 -i 'error\|unimplemented\|invalid' "$work/$n.log")"
    continue
  fi
  "$ort_py" - "$out" "$expected" "$n" <<'PY'
import sys, numpy as np
a = np.fromfile(sys.argv[1], dtype=np.float32)
b = np.fromfile(sys.argv[2], dtype=np.float32)
print("%-30s %-6s %-10.2e %-10.2e" % (sys.argv[3], "yes", np.linalg.norm(a - b) / np.linalg.norm(b),
                                     np.abs(a - b).max()))
PY
done
