#!/usr/bin/env bash
# The main job: install what is missing, build the `recq` tool (only it and
# the libraries it links: no tests or benchmarks), and run the MobileNet
# record-once / replay-five-times demo on the default OpenCL device (PoCL).
# Arguments go to `recq demo` (e.g. --model=v2 --device=pthread). The build
# directory is the one scripts/build.sh and scripts/test.sh use; a later
# test.sh builds the rest there.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash scripts/build.sh --target recq_cli
exec "${RECQ_BUILD_DIR:-build}/tools/recq" demo "$@"
