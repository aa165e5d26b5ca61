#!/usr/bin/env bash
# The Ray Serve example's throughput with 1 and 2 replicas, one GPU each,
# through HTTP from a load generator on the same host (bench/serve_replicas.py),
# on a machine with two GPUs. From the repository root:
#
#   bash bench/gpu/serve_replicas.sh [MODEL ...]     (default: resnet50 vit_b_16)
#
# Needs, carried to that machine (which has no Ray and cannot build the module):
#   gpu-bundle/        recq and the Python module for its Python, with their
#                      libraries: bash bench/gpu/prepare_python.sh here;
#   RAY_SITE           a folder with ray[serve] and the packages it needs that
#                      the machine lacks (default /tmp/site), on PYTHONPATH.
#                      Made here: `pip download "ray[serve]==2.60.0"
#                      --only-binary=:all: --python-version 3.12 --platform
#                      manylinux2014_x86_64 ...`, the wheels of packages the
#                      machine lacks unzipped into one folder (grpcio-reflection
#                      at the machine's grpcio version; Ray's jars/ and
#                      dashboard/client/build/ are not needed), packed with
#                      `tar cf - . | xz -9` (43 MB for Ray 2.60), carried in a
#                      call of its own and unpacked there into /tmp/site; the
#                      next call, within the machine's warm period, carries
#                      gpu-bundle/ and runs this script.
# The models are exported there (bench/models/export_models.py, random
# weights). SERVE_ROUNDS, SERVE_REQUESTS, SERVE_CLIENTS and SERVE_THREADS set
# the run (defaults 3, 3000, 4, 8). Reports go to $OUT (or ./gpu-results).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-gpu-results}
mkdir -p "$out"
source gpu-bundle/env.sh
export PYTHONPATH="$PWD/gpu-bundle/python:${RAY_SITE:-/tmp/site}${PYTHONPATH:+:$PYTHONPATH}"
export RECQ_CACHE_DIR=${RECQ_CACHE_DIR:-/tmp/recq-cache}  # replicas reuse one compile
export PYTHONUNBUFFERED=1
nvidia-smi -L
python3 -c "import recq, ray; print('recq devices:', recq.devices()); print('ray', ray.__version__)"
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(resnet50 vit_b_16)
python3 bench/models/export_models.py --models "$(IFS=,; echo "${models[*]}")" --out /tmp/models \
  >"$out/export.log" 2>&1 || { tail -20 "$out/export.log"; exit 1; }
# Which GPUs are busy during the runs, once a second.
nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used --format=csv -l 1 \
  >"$out/serve_gpu_use.csv" 2>&1 &
smi=$!
trap 'kill $smi 2>/dev/null || true' EXIT
# The first model's runs also time a deployment that runs nothing (Serve's
# own ceiling on this host); every model's first time the replicas' work
# without Serve.
extra=(--proxy-only)
for m in "${models[@]}"; do
  python3 bench/serve_replicas.py "/tmp/models/$m.onnx" --replicas 1,2 --device ray-gpu --gpus 1 \
    --rounds "${SERVE_ROUNDS:-3}" --requests "${SERVE_REQUESTS:-3000}" \
    --clients "${SERVE_CLIENTS:-4}" --threads "${SERVE_THREADS:-8}" --direct 800 "${extra[@]}" \
    --json "$out/serve_replicas_$m.json"
  extra=()
done
