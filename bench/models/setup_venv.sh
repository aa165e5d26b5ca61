#!/usr/bin/env bash
# Creates ${RECQ_BUILD_DIR:-build}/.venv-models: torch, torchvision, onnx,
# onnxruntime, numpy, matplotlib from PyPI, for bench/models/export_models.py
# and bench/compare_onnxruntime.py. Never needed by CI (.ci/run).
#
#   bash bench/models/setup_venv.sh            the light recipe (default)
#   RECQ_MODELS_TORCH=full bash bench/models/setup_venv.sh   torch with its CUDA wheels
#
# PyPI's Linux torch wheel is a CUDA build: `pip install torch torchvision`
# downloads 3.1 GB (torch 2.15.0: the 539 MB wheel plus cuDNN 519 MB, cuBLAS
# 405 MB, triton 286 MB, cuSOLVER, cuFFT, NCCL, cuSPARSELt, cuSPARSE, NVSHMEM,
# ...) and installs 5.6 GB. `pip install --no-deps torch` alone does not
# import here ("libcufile.so.0: cannot open shared object file": libtorch_cuda
# and torch._C link the CUDA libraries at load time). The light recipe:
#   1. torch and torchvision with --no-deps, their pure-Python dependencies
#      (read from torch's own metadata, CUDA ones left out), onnx,
#      onnxruntime, numpy, matplotlib: about 640 MB downloaded, 1.6 GB installed;
#   2. bench/models/cuda_stubs.py writes tiny stand-ins for the 14 missing CUDA
#      libraries into torch/lib (same sonames and symbol versions, every
#      imported symbol defined, functions return cudaErrorNoDevice); the CPU
#      path never calls them, torch.cuda.is_available() is False;
#   3. a smoke test exports a small net and checks it with onnxruntime.
# Checked: the light and the full venv export byte-identical ONNX files and
# outputs (same versions). If the smoke test fails, this script says so and
# stops; RECQ_MODELS_TORCH=full is the fallback. The venv is for machines
# without a GPU: on a CUDA machine use the full recipe (or the machine's torch).
#
# Versions are pinned so exports are reproducible; override with
# RECQ_TORCH_VERSION etc. (torch and torchvision must be a matching pair).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${RECQ_BUILD_DIR:-build}
venv="$build/.venv-models"
mode=${RECQ_MODELS_TORCH:-light}
torch_v=${RECQ_TORCH_VERSION:-2.15.0}
torchvision_v=${RECQ_TORCHVISION_VERSION:-0.29.2}
onnx_v=${RECQ_ONNX_VERSION:-1.23.2}
ort_v=${RECQ_ONNXRUNTIME_VERSION:-1.32.0}
others=(numpy matplotlib pillow)

case "$mode" in light|full) ;; *) echo "RECQ_MODELS_TORCH must be light or full" >&2; exit 2 ;; esac
mkdir -p "$build"
# The marker is written after the smoke test passed.
if [ -f "$venv/.recq-models-ready" ] && "$venv/bin/python3" -c 'import torch, torchvision, onnx, onnxruntime, numpy, matplotlib' 2>/dev/null; then
  echo "setup_venv: $venv is ready ($("$venv/bin/python3" -c 'import torch; print("torch", torch.__version__)'))"
  exit 0
fi
echo "setup_venv: creating $venv ($mode recipe: torch $torch_v, torchvision $torchvision_v, onnx $onnx_v, onnxruntime $ort_v)"
python3 -m venv "$venv"
py="$venv/bin/python3"
pip=("$py" -m pip install --quiet --disable-pip-version-check)
"${pip[@]}" --upgrade pip
if [ "$mode" = full ]; then
  "${pip[@]}" "torch==$torch_v" "torchvision==$torchvision_v" "onnx==$onnx_v" \
    "onnxruntime==$ort_v" "${others[@]}"
else
  "${pip[@]}" --no-deps "torch==$torch_v" "torchvision==$torchvision_v"
  # torch's requirements without the CUDA ones (nvidia-*, cuda-*, triton) and
  # without extras; torchvision's are numpy and pillow.
  mapfile -t deps < <("$py" bench/models/venv_check.py torch-deps)
  echo "setup_venv: (pip's warning that torch's CUDA requirements are missing is expected)"
  "${pip[@]}" "${deps[@]}" "onnx==$onnx_v" "onnxruntime==$ort_v" "${others[@]}"
  site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  "$py" bench/models/cuda_stubs.py "$site"
fi
# Smoke test: import, export a small net with the exporter the benchmarks use,
# run it with onnxruntime, compare with PyTorch.
if ! "$py" bench/models/venv_check.py smoke-test; then
  echo "setup_venv: the smoke test failed in $venv; try RECQ_MODELS_TORCH=full after removing it" >&2
  exit 1
fi
echo "$mode torch==$torch_v torchvision==$torchvision_v onnx==$onnx_v onnxruntime==$ort_v" \
  >"$venv/.recq-models-ready"
du -sh "$venv" | awk '{print "setup_venv: " $1 " in " $2}'
