// Harness for the per-op tests: build a small graph, compile it, run it on
// the device through the recorded and the unrecorded path, and compare every
// output element with the CPU reference (tests/reference).
//
//   TEST_P(ReluTest, MatchesReference) {
//     OpGraphBuilder b;
//     TensorRef x = b.Input("x", {2, 3, 4, 5}, -8.0f, 8.0f);
//     TensorRef y = b.graph().Relu(x);
//     RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
//   }
//
// Inputs are drawn fresh for every run from seeds that NextSeed() derives
// from the test's name, so a failure reproduces when the test runs alone.
// Outputs are poisoned with NaN before each run, so an element the engine
// never writes fails. A graph the engine cannot compile yet (Unimplemented)
// skips the test with the engine's message; any other setup error fails it.
#ifndef RECQ_TESTS_OPS_OP_TEST_UTIL_H_
#define RECQ_TESTS_OPS_OP_TEST_UTIL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "recq/context.h"
#include "recq/device_facts.h"
#include "recq/engine.h"
#include "recq/graph.h"
#include "recq/op_registry.h"
#include "reference/reference_ops.h"

namespace recq::optest {

using reference::HostTensor;

// SharedContext returns the Context shared by every test of the binary,
// created with Context::Create() on first use (thread-safe). A creation
// failure is returned to every caller.
const absl::StatusOr<Context>& SharedContext();

// TestDeviceFacts returns the facts of SharedContext's device (default
// facts where it could not be created). Tests read them where a real
// device offers less than PoCL, which CI runs: less local memory, hence
// fewer parameter sets, or matrix units that other rules pick.
DeviceFacts TestDeviceFacts();

// RejectedForLocalMemory says whether `status` is the engine's rejection of
// forced kernel parameters whose local memory exceeds the test device's,
// naming the device's limit. On a GPU with less local memory than PoCL's,
// such a rejection is the expected outcome of forcing them.
bool RejectedForLocalMemory(const absl::Status& status);

// NextSeed returns a fresh seed for the current test: a stable hash of the
// test's full name (suite, name and parameter) combined with a counter that
// restarts with every test. Outside a test it hashes "" instead.
uint64_t NextSeed();

// A graph input and the range its random values are drawn from.
// Values of an integral type are the draws rounded down (bool: draw > 0);
// float16 values are the draws rounded to half.
struct InputSpec {
  std::string name;
  std::vector<int64_t> shape;
  float lo = -1.0f;
  float hi = 1.0f;
  DataType dtype = DataType::kFloat32;
};

// OpGraph is a graph under test and how to draw values for its inputs.
struct OpGraph {
  Graph graph;
  std::vector<InputSpec> inputs;
};

// OpGraphBuilder wraps a GraphBuilder: inputs remember their value range,
// constants are filled with fresh random values.
class OpGraphBuilder {
 public:
  // Input adds a graph input whose values are drawn uniformly from [lo, hi).
  TensorRef Input(const std::string& name, std::vector<int64_t> shape, float lo = -1.0f,
                  float hi = 1.0f, DataType dtype = DataType::kFloat32);
  // Constant adds a constant of random values drawn uniformly from [lo, hi).
  TensorRef Constant(const std::string& name, std::vector<int64_t> shape, float lo = -1.0f,
                     float hi = 1.0f);
  // graph gives access to the wrapped builder for adding nodes.
  GraphBuilder& graph() { return builder_; }

  // Build marks `output` as the graph output "y" and builds the graph.
  [[nodiscard]] absl::StatusOr<OpGraph> Build(TensorRef output) &&;

 private:
  GraphBuilder builder_;
  std::vector<InputSpec> inputs_;
};

struct CheckOptions {
  // Element tolerance: |actual - expected| <= atol + rtol * |expected|.
  // The defaults suit float32 sums of a few hundred terms of magnitude <= 1.
  float atol = 1e-4f;
  float rtol = 1e-4f;
  // The EngineOptions::optimize settings to compile with, each in turn.
  std::vector<bool> optimize = {true, false};
  // The kernel families (EngineOptions::kernel_target) to compile with, each
  // in turn: by default both, so every op's CPU and GPU variants are held
  // to the reference on whatever device runs the tests (PoCL in CI).
  std::vector<EngineOptions::KernelTarget> kernel_targets = {EngineOptions::KernelTarget::kCpu,
                                                             EngineOptions::KernelTarget::kGpu};
  // EngineOptions::emulate_matrix_units for every compile: the variants
  // built on matrix instructions (matmul_mma) fit PoCL's GPU-family compiles.
  bool emulate_matrix_units = false;
  // EngineOptions::choose_variant for every compile: how tests force one
  // kernel variant (empty: the first that fits).
  VariantChooser choose_variant;
  // EngineOptions::choose_kernel: how tests force a variant and its
  // parameters. The auto-tuner is off in op tests (EngineOptions::tuning).
  KernelChooser choose_kernel;
  // Runs of the recorded path; each run after the first uses fresh inputs
  // in newly allocated tensors, so stale arguments in a replay show up.
  int recorded_runs = 2;
  // EngineOptions::precision settings to compile with, each in turn, always
  // against the float32 reference. kFp16Storage compiles once per kernel
  // family (optimize as the first of `optimize`) and runs the recorded path
  // once, to keep CI time small. An Unimplemented compile at fp16 only (a
  // graph fp16 storage cannot retype) is noted, not skipped.
  std::vector<EngineOptions::Precision> precisions = {EngineOptions::Precision::kFp32,
                                                      EngineOptions::Precision::kFp16Storage};
  // Tolerance under fp16 storage: |actual - expected| <= fp16_rtol *
  // |expected| + fp16_atol * max(1, max |expected| of the output). Half
  // keeps 11 significant bits (2^-11 = 4.9e-4 relative per rounding) and
  // the inputs, the weights and every stored intermediate are rounded once;
  // errors of a sum with cancellation scale with its terms, bounded here by
  // the output's largest magnitude. For Exact() options (fp16_exact) it is
  // 2^-10 relative plus 2^-10 of that magnitude: two roundings, the
  // operands' and the result's (data movement and comparisons need one;
  // an exact Add of rounded operands needs both, relative to the operands
  // where it cancels).
  float fp16_atol = 1e-2f;
  float fp16_rtol = 1e-2f;
  bool fp16_exact = false;
};

// Exact returns CheckOptions that demand bit-identical results (for data
// movement and comparisons: copies, Relu, Clip, MaxPool...); under fp16
// storage, results within two half roundings (CheckOptions::fp16_exact).
CheckOptions Exact();

// ForceVariant is a VariantChooser that picks the variant named `name` for
// every node of op `op` it fits and counts those nodes in `*forced`; other
// nodes get the first variant that fits.
VariantChooser ForceVariant(OpType op, const std::string& name, std::shared_ptr<int> forced);

// KernelTargetName returns "auto", "cpu" or "gpu".
const char* KernelTargetName(EngineOptions::KernelTarget target);

// --- variant coverage ---
//
// CheckAgainstReference notes every (op, kernel variant, kernel family) it
// lowered in an engine whose runs all completed, in a process-wide set
// (thread-safe). When $RECQ_OP_COVERAGE_DIR is set, the set is written at
// the end of the process to "<dir>/<shard>.txt" (GTEST_SHARD_INDEX and
// GTEST_TOTAL_SHARDS name the shard; "0of1" unsharded), one
// "<op>\t<variant>\t<family>" line each, replacing that shard's earlier
// file. variant_coverage_test.cc reads them back and fails for any
// registered variant that no test ran.
struct VariantRun {
  std::string op;
  std::string variant;
  std::string family;  // "cpu" or "gpu" (DeviceFacts::gpu of the compile)
  bool operator<(const VariantRun& o) const {
    return std::tie(op, variant, family) < std::tie(o.op, o.variant, o.family);
  }
  bool operator==(const VariantRun& o) const {
    return op == o.op && variant == o.variant && family == o.family;
  }
};

// VariantRunsOfThisProcess returns the runs noted so far in this process.
std::vector<VariantRun> VariantRunsOfThisProcess();

// VariantCoverageFileName returns "<GTEST_SHARD_INDEX>of<GTEST_TOTAL_SHARDS>.txt"
// ("0of1.txt" without sharding).
std::string VariantCoverageFileName();

// CheckAgainstReference compiles `op.graph` in the shared context with each
// requested kernel target and optimize setting and runs it through the recorded path
// (Engine::Record(), `recorded_runs` times) and the unrecorded path
// (Record({Backend::kUnrecorded}), once). Each run draws fresh inputs,
// poisons the outputs with NaN, and compares every output element with
// reference::RunReference, reporting mismatches as non-fatal gtest failures
// that name the path, the run, the seed and the first failing index.
// Returns the first setup error: Unimplemented (from Compile or Record) when
// the engine lacks a kernel, which callers turn into a skip; anything else
// (context, allocation, transfer or Run failures, reference errors) is a
// failure of the test.
[[nodiscard]] absl::Status CheckAgainstReference(const OpGraph& op,
                                                 const CheckOptions& options = {});
// As above; a failed build of the graph is returned as is (it is a test bug
// unless the builder rejects a valid graph).
[[nodiscard]] absl::Status CheckAgainstReference(const absl::StatusOr<OpGraph>& op,
                                                 const CheckOptions& options = {});

}  // namespace recq::optest

// RECQ_EXPECT_MATCHES_REFERENCE(op_graph[, options]) runs
// CheckAgainstReference from a test body: skips the test (GTEST_SKIP) with
// the engine's message if it returns Unimplemented, fails it (fatally) on
// any other error.
#define RECQ_EXPECT_MATCHES_REFERENCE(...)                                                     \
  do {                                                                                         \
    const absl::Status recq_check_status = ::recq::optest::CheckAgainstReference(__VA_ARGS__); \
    if (absl::IsUnimplemented(recq_check_status)) {                                            \
      GTEST_SKIP() << "not implemented by the engine: " << recq_check_status.message();        \
    }                                                                                          \
    ASSERT_TRUE(recq_check_status.ok()) << recq_check_status;                                  \
  } while (0)

#endif  // RECQ_TESTS_OPS_OP_TEST_UTIL_H_
