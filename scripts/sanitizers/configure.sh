# Sourced by scripts/sanitize.sh and scripts/fuzz.sh.
#
# configure_sanitized KIND BUILD_DIR configures a clang build of recq with
# sanitizers: "asan" is ASan + UBSan with libFuzzer's coverage
# instrumentation (RECQ_FUZZ), so that the fuzzers and the ASan tests share
# one build of the libraries; "tsan" is TSan. clang, not gcc: gcc took
# 1094 s to build the ASan targets on the project's 2-core machine, clang
# about 680 s (cold, no ccache, 2026-11-27).
configure_sanitized() {
  local kind=$1 dir=$2 flags fuzz=OFF
  case "$kind" in
    asan) flags="address,undefined" fuzz=ON ;;
    tsan) flags="thread" ;;
    *)
      echo "configure_sanitized: unknown kind '$kind' (asan or tsan)" >&2
      return 2
      ;;
  esac
  local cc cxx
  cc=$(command -v clang-14 || command -v clang)
  cxx=$(command -v clang++-14 || command -v clang++)
  local launcher=()
  if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  CC=$cc CXX=$cxx cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRECQ_WERROR=ON \
    -DRECQ_BUILD_BENCHMARKS=OFF -DRECQ_SANITIZE="$flags" -DRECQ_FUZZ="$fuzz" "${launcher[@]}" >/dev/null
}
