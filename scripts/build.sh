#!/usr/bin/env bash
# Configures and builds recq in Release under ${RECQ_BUILD_DIR:-build}.
# `--target NAME` (repeatable) builds only those targets and what they need,
# e.g. `--target recq_cli` for the `recq` tool alone; without it every target
# (library, tools, tests, benchmarks) is built. Other arguments go to cmake's
# configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${RECQ_BUILD_DIR:-build}
configure_args=()
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --target)
      [ $# -ge 2 ] || { echo "build.sh: --target needs a target name" >&2; exit 2; }
      targets+=(--target "$2")
      shift 2
      ;;
    --target=*)
      targets+=(--target "${1#--target=}")
      shift
      ;;
    *)
      configure_args+=("$1")
      shift
      ;;
  esac
done
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" \
  ${configure_args[@]+"${configure_args[@]}"} >/dev/null
cmake --build "$build_dir" -j"$(nproc)" ${targets[@]+"${targets[@]}"}
