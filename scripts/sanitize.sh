#!/usr/bin/env bash
# Builds recq with sanitizers and runs tests under them.
#
#   bash scripts/sanitize.sh asan [ctest -R regex]   # ASan + UBSan (LSan on)
#   bash scripts/sanitize.sh tsan [ctest -R regex]   # TSan on the concurrency tests
#                                                    # (GTEST_FILTER picks the cases)
#
# Build dirs: build-asan, build-tsan (override with RECQ_BUILD_DIR), built by
# clang (scripts/sanitizers/configure.sh; build-asan also serves
# scripts/fuzz.sh). Findings fail the run (halt_on_error); PoCL's and LLVM's
# own leaks are suppressed by scripts/sanitizers/lsan.supp, and nothing in
# recq's code is.
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:?usage: sanitize.sh asan|tsan [ctest regex]}
supp=$PWD/scripts/sanitizers
case "$kind" in
  asan)
    # The engine-level suites (the op-by-op and ONNX node suites add much
    # build and run time and no engine code path the others miss), the
    # layers' own tests, the sampled fault sweep, soak and stress.
    targets="graph_test passes_test memory_planner_test replay_test bindings_test mobilenet_test
      binary_cache_test build_helper_test log_test op_registry_test patterns_test onnx_importer_test
      onnx_fuzz_regression_test shape_folding_test
      backend_conformance_test fault_sweep_test deadline_test teardown_test stress_test soak_test
      resource_test
      qcom_layer_test recq_qcom_layer recq_fault_layer"
    regex=${2:-.}
    # intercept_tls_get_addr=0: clang 14's runtime guesses the bounds of a
    # dynamic TLS block (a dlopen'ed library's, such as PoCL's) from a glibc
    # 2.19 header it expects 16 bytes before any block at page offset 16.
    # glibc 2.36 takes the block from malloc, so when one lands there the
    # guess reads ASan's chunk header: the range's start is the allocation's
    # stack id (a small number), and LeakSanitizer's tracer dies with SIGSEGV
    # scanning it at exit ("Tracer caught signal 11: addr=0x280e"). Which
    # test process hits it depends on its heap layout. Without the
    # interception LeakSanitizer still scans those blocks: it counts every
    # allocation made by the dynamic linker as reachable.
    export ASAN_OPTIONS="detect_leaks=1:intercept_tls_get_addr=0:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=0:fast_unwind_on_malloc=0:malloc_context_size=20"
    export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0:use_unaligned=1"
    export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$supp/ubsan.supp"
    # A sparser fault-sweep sample: every call is ~10x slower under ASan.
    export RECQ_FAULT_SWEEP=${RECQ_FAULT_SWEEP:-400}
    ;;
  tsan)
    targets="stress_test backend_conformance_test replay_test recq_qcom_layer recq_fault_layer"
    # ctest runs each test binary as one entry: the entries of the three
    # binaries, each running its thread, concurrency and stress cases.
    regex=${2:-^(replay_test|stress_test|(layer\.)?backend_conformance_test)$}
    export GTEST_FILTER=${GTEST_FILTER:-*Thread*:*Concurren*:*Stress*}
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$supp/tsan.supp"
    ;;
  *)
    echo "sanitize.sh: unknown kind '$kind' (asan or tsan)" >&2
    exit 2
    ;;
esac
build_dir=${RECQ_BUILD_DIR:-build-$kind}
# shellcheck source=scripts/sanitizers/configure.sh
source "$supp/configure.sh"
configure_sanitized "$kind" "$build_dir"
# shellcheck disable=SC2086
cmake --build "$build_dir" -j"${RECQ_JOBS:-$(nproc)}" --target ${RECQ_SANITIZE_TARGETS:-$targets}
export RECQ_CACHE_DIR=${RECQ_CACHE_DIR:-$PWD/$build_dir/recq-cache}
# Tests whose program is not built here (only the targets above are) are
# left out: those of gtest_discover_tests show up as "<target>_NOT_BUILT",
# those of recq_add_gtests as entries without a command (their executable is
# missing) in ctest's own test list. The examples and the CLI test are left out too.
not_built=$(ctest --test-dir "$build_dir" --show-only=json-v1 | python3 -c '
import json, os, re, sys
tests = json.load(sys.stdin)["tests"]
print("|".join("^" + re.escape(t["name"]) + "$" for t in tests
               if not t.get("command") or not os.path.exists(t["command"][0])))')
exclude="NOT_BUILT|^example\.|^cli\.${not_built:+|$not_built}${RECQ_SANITIZE_EXCLUDE:+|$RECQ_SANITIZE_EXCLUDE}"
ctest --test-dir "$build_dir" -j"$(nproc)" --output-on-failure --timeout 900 -R "$regex" \
  -E "$exclude"
