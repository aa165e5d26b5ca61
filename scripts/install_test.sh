#!/usr/bin/env bash
# CI: recq as a user installs and consumes it. After scripts/test.sh built
# ${RECQ_BUILD_DIR:-build}:
#  1. configures recq without tests and benchmarks, with GTest and Google
#     Benchmark hidden (they must be needed only for those);
#  2. `cmake --install`s the build into a temporary prefix and checks what an
#     install exposes (headers under include/recq only, none including an
#     internal header);
#  3. builds examples/ as a project of its own with find_package(recq CONFIG
#     REQUIRED) and runs both examples (multi_device drives PoCL's one CPU as
#     two devices), and the installed recq CLI;
#  4. builds one example again with pkg-config instead of CMake.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${RECQ_BUILD_DIR:-build}
[ -f "$build/CMakeCache.txt" ] || { echo "install_test: build $build first (scripts/test.sh)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)

echo "== configure without tests or benchmarks, GTest and benchmark hidden"
cmake --no-warn-unused-cli -S . -B "$tmp/notests" -G Ninja -DRECQ_BUILD_TESTS=OFF -DRECQ_BUILD_BENCHMARKS=OFF \
  -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON >/dev/null
if grep -q 'reference' "$tmp/notests/build.ninja"; then
  echo "install_test: a build without tests still builds the test reference library" >&2
  exit 1
fi

echo "== cmake --install into $tmp/prefix"
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in include/recq/recq.h include/recq/stream_pool.h include/recq/onnx.h include/recq/log.h \
  lib/librecq.a lib/librecq_graph.a lib/librecq_onnx.a lib/libRecqQcomLayer.so bin/recq \
  lib/cmake/recq/recqConfig.cmake lib/cmake/recq/recqConfigVersion.cmake \
  lib/cmake/recq/recqTargets.cmake lib/pkgconfig/recq.pc lib/pkgconfig/recq-onnx.pc; do
  [ -e "$prefix/$f" ] || { echo "install_test: $f was not installed" >&2; exit 1; }
done
if [ "$(ls "$prefix/include")" != recq ]; then
  echo "install_test: include/ holds more than recq/: $(ls "$prefix/include")" >&2
  exit 1
fi
if grep -rhoE '#include "[^"]+"' "$prefix/include" | grep -vE '"(recq|absl)/'; then
  echo "install_test: an installed header includes something outside recq/ and absl/" >&2
  exit 1
fi

echo "== examples/ as a standalone project: find_package(recq CONFIG REQUIRED)"
cmake -S examples -B "$tmp/examples" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$tmp/examples" -j"$(nproc)" >/dev/null
ctest --test-dir "$tmp/examples" --output-on-failure
"$prefix/bin/recq" devices | head -3

echo "== pkg-config: one example built by hand"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
pkg-config --modversion recq
# shellcheck disable=SC2046
c++ -std=c++17 -O1 examples/user_buffers.cc -o "$tmp/user_buffers_pc" $(pkg-config --cflags --libs recq)
"$tmp/user_buffers_pc"

echo "install_test: ok in $(($(date +%s) - start)) s"
