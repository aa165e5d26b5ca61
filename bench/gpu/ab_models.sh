#!/usr/bin/env bash
# Two recq builds side by side on the GPU machine, after gpu-bundle/ was
# packed with both (the second as gpu-bundle/bin/recq-before, copied there
# from an earlier bundle; both use the bundle's libraries): exports the
# torchvision models named (bench/models/export_models.py, the machine's
# torch), then in $ROUNDS interleaved rounds (default 3) runs each model
# through both, `recq run --runs=200` with the export's input and a cache
# directory per build (default fast tuning, empty at the start), and prints
# the medians over rounds, their ratio and each build's relative L2 against
# onnxruntime's output from the export. BINS="recq-before recq-x recq" names
# more builds in gpu-bundle/bin (the first is the baseline of the ratios);
# FLAGS="--precision=tf32" adds options to every run.
#   bash bench/gpu/ab_models.sh [MODELS]   (default: the set's convolution-heavy models)
# The per-run medians go to $OUT/ab.txt (or ./gpu-results/ab.txt).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-gpu-results}
mkdir -p "$out"
source gpu-bundle/env.sh
models=${1:-vgg11,resnet18,resnet50,resnext50_32x4d,fcn_resnet50,alexnet,googlenet,inception_v3}
dir=${RECQ_MODELS_DIR:-/tmp/recq-ab-models}
python3 bench/models/export_models.py --no-venv --models "$models" --out "$dir" \
  >"$out/ab_export.log" 2>&1 || tail -n 3 "$out/ab_export.log"
: >"$out/ab.txt"
for ((round = 1; round <= ${ROUNDS:-3}; round++)); do
  for bin in ${BINS:-recq-before recq}; do
    for m in ${models//,/ }; do
      ms=$(RECQ_CACHE_DIR="/tmp/recq-ab-cache-$bin" "gpu-bundle/bin/$bin" run "$dir/$m.onnx" \
        --device=nvidia --runs=200 --input="input=$dir/$m.input.f32" \
        --output="output=$dir/$m.$bin.out" ${FLAGS:-} 2>&1 | sed -n 's/.*median \([0-9.]*\) ms.*/\1/p')
      echo "$round $bin $m $ms" | tee -a "$out/ab.txt"
    done
  done
done
python3 - "$out/ab.txt" "$dir" ${BINS:-recq-before recq} <<'P'
import collections, sys
import numpy as np
sys.path.insert(0, "bench/models")
from export_models import rel_l2
bins = sys.argv[3:]
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    _, b, m, *ms = line.split()
    if ms:
        rows[(b, m)].append(float(ms[0]))
for m in sorted({m for _, m in rows}):
    ref = np.fromfile(f"{sys.argv[2]}/{m}.ort.f32", dtype="<f4")
    base = np.median(rows[(bins[0], m)])
    cols = []
    for b in bins:
        med = np.median(rows[(b, m)])
        err = rel_l2(np.fromfile(f"{sys.argv[2]}/{m}.{b}.out", dtype="<f4"), ref)
        cols.append(f"{b} {med:7.3f} ms ({med / base:5.3f}, L2 {err:.1e})")
    print(f"{m:18s} " + "  ".join(cols))
P
nvidia-smi --query-gpu=name --format=csv,noheader
