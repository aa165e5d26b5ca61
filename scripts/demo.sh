#!/usr/bin/env bash
# The main job: install what is missing, build, and run the MobileNet
# record-once / replay-five-times demo on the default OpenCL device (PoCL).
# Arguments go to `recq demo` (e.g. --model=v2 --device=pthread).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash scripts/build.sh
exec "${RECQ_BUILD_DIR:-build}/tools/recq" demo "$@"
