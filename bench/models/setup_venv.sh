#!/usr/bin/env bash
# Creates ${RECQ_BUILD_DIR:-build}/.venv-models: torch, torchvision, onnx,
# onnxruntime, openvino, numpy, matplotlib from PyPI, for
# bench/models/export_models.py and bench/compare_onnxruntime.py (openvino:
# its OpenVINO column only). Never needed by CI (.ci/run).
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
#      openvino 2026.4.1 adds a 59 MB wheel, 181 MB installed;
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
# A ready venv without openvino (made before it was added) gets openvino
# alone (pip install openvino==V: it adds openvino-telemetry and takes
# numpy as it is).
#
#   bash bench/models/setup_venv.sh --optimum   also the optimum-onnx overlay
#
# --optimum adds $venv/optimum-overlay for bench/models/export_optimum.py:
# optimum-onnx 0.1.0 (the newest) needs transformers < 4.58 and optimum
# 2.1, while the venv's transformers is 5.x; so transformers 4.57,
# huggingface_hub < 1.0, tokenizers 0.22, optimum 2.1.0 and optimum-onnx
# 0.1.0 go into a folder of their own (pip --target, --no-deps: 138 MB)
# that export_optimum.py puts first on PYTHONPATH for its export step only.
# Everything else (torch, onnx, safetensors, numpy...) is the venv's.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${RECQ_BUILD_DIR:-build}
venv="$build/.venv-models"
mode=${RECQ_MODELS_TORCH:-light}
torch_v=${RECQ_TORCH_VERSION:-2.15.0}
torchvision_v=${RECQ_TORCHVISION_VERSION:-0.29.2}
onnx_v=${RECQ_ONNX_VERSION:-1.23.2}
ort_v=${RECQ_ONNXRUNTIME_VERSION:-1.32.0}
# bench/compare_onnxruntime.py's OPENVINO_VERSION is the same pin.
ov_v=${RECQ_OPENVINO_VERSION:-2026.4.1}
others=(numpy matplotlib pillow)

case "$mode" in light|full) ;; *) echo "RECQ_MODELS_TORCH must be light or full" >&2; exit 2 ;; esac
with_optimum=0
for arg in "$@"; do
  case "$arg" in
    --optimum) with_optimum=1 ;;
    *) echo "setup_venv: unknown argument '$arg' (expected --optimum)" >&2; exit 2 ;;
  esac
done
optimum_reqs=("transformers>=4.57,<4.58" "huggingface_hub>=0.34,<1.0" "tokenizers>=0.22,<=0.23.0"
              "optimum==2.1.0" "optimum-onnx==0.1.0")
# install_optimum PY: the overlay beside the venv's packages (see above).
install_optimum() {
  local overlay="$venv/optimum-overlay"
  if [ -f "$overlay/.recq-optimum-ready" ]; then
    echo "setup_venv: $overlay is ready"
    return 0
  fi
  rm -rf "$overlay"
  "$1" -m pip install --quiet --disable-pip-version-check --no-deps --target "$overlay" \
    "${optimum_reqs[@]}"
  PYTHONPATH="$overlay" "$1" -c 'import transformers, optimum.exporters.onnx' >/dev/null
  printf '%s\n' "${optimum_reqs[@]}" >"$overlay/.recq-optimum-ready"
  du -sh "$overlay" | awk '{print "setup_venv: " $1 " in " $2}'
}
mkdir -p "$build"
# The marker is written after the smoke test passed.
if [ -f "$venv/.recq-models-ready" ] && "$venv/bin/python3" -c 'import torch, torchvision, onnx, onnxruntime, numpy, matplotlib' 2>/dev/null; then
  if ! "$venv/bin/python3" -c 'import openvino' 2>/dev/null; then
    echo "setup_venv: adding openvino $ov_v to $venv (pip's warning about torch's CUDA requirements is expected)" >&2
    "$venv/bin/python3" -m pip install --quiet --disable-pip-version-check "openvino==$ov_v" ||
      echo "setup_venv: openvino $ov_v did not install; the venv works without it" >&2
  fi
  echo "setup_venv: $venv is ready ($("$venv/bin/python3" -c 'import torch; print("torch", torch.__version__)'))"
  if [ "$with_optimum" = 1 ]; then install_optimum "$venv/bin/python3"; fi
  exit 0
fi
echo "setup_venv: creating $venv ($mode recipe: torch $torch_v, torchvision $torchvision_v, onnx $onnx_v, onnxruntime $ort_v, openvino $ov_v)"
python3 -m venv "$venv"
py="$venv/bin/python3"
pip=("$py" -m pip install --quiet --disable-pip-version-check)
"${pip[@]}" --upgrade pip
if [ "$mode" = full ]; then
  "${pip[@]}" "torch==$torch_v" "torchvision==$torchvision_v" "onnx==$onnx_v" \
    "onnxruntime==$ort_v" "openvino==$ov_v" "${others[@]}"
else
  "${pip[@]}" --no-deps "torch==$torch_v" "torchvision==$torchvision_v"
  # torch's requirements without the CUDA ones (nvidia-*, cuda-*, triton) and
  # without extras; torchvision's are numpy and pillow.
  mapfile -t deps < <("$py" bench/models/venv_check.py torch-deps)
  echo "setup_venv: (pip's warning that torch's CUDA requirements are missing is expected)"
  "${pip[@]}" "${deps[@]}" "onnx==$onnx_v" "onnxruntime==$ort_v" "openvino==$ov_v" "${others[@]}"
  site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  "$py" bench/models/cuda_stubs.py "$site"
fi
# Smoke test: import, export a small net with the exporter the benchmarks use,
# run it with onnxruntime, compare with PyTorch.
if ! "$py" bench/models/venv_check.py smoke-test; then
  echo "setup_venv: the smoke test failed in $venv; try RECQ_MODELS_TORCH=full after removing it" >&2
  exit 1
fi
echo "$mode torch==$torch_v torchvision==$torchvision_v onnx==$onnx_v onnxruntime==$ort_v openvino==$ov_v" \
  >"$venv/.recq-models-ready"
du -sh "$venv" | awk '{print "setup_venv: " $1 " in " $2}'
if [ "$with_optimum" = 1 ]; then install_optimum "$py"; fi
