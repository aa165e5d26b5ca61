// The fault sweep of a generation: every OpenCL call that recq::Generator
// makes in a reference scenario is failed once (a deterministic sample of
// them unless RECQ_FAULT_SWEEP=full), in its own run of the scenario, as
// tests/reliability/fault_sweep_test.cc does for a recording.
//
// The scenario: a context (program binaries from a disk cache of its own),
// the 2-layer decoder of tests/models/decoder compiled and recorded on the
// qcom backend (under the emulation layer), a greedy generation of 6 tokens
// in chunks of 2 (the caches, the state and the chunked reads), and
// teardown. A faulted run must return a status naming the failed call, or
// succeed with the clean run's ids where recq documents a fallback (or for
// a failed release); leave no OpenCL object alive but the one a failed
// release keeps; and be followed by a clean run in the same process that
// gives the clean ids again.
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "recq/generator.h"
#include "recq/status_macros.h"
#include "testing/fault_layer_client.h"
#include "testing/test_env.h"

namespace recq {
namespace {

using testing::FaultLayerClient;

// Found before any OpenCL call: ocl-icd splits OPENCL_LAYERS in place when
// it loads the layers.
const absl::StatusOr<FaultLayerClient>& Layer() {
  static const auto* layer = new absl::StatusOr<FaultLayerClient>(FaultLayerClient::Find());
  return *layer;
}
const bool kLayerFound = Layer().ok();

// Calls whose failure recq survives with correct results (as in
// fault_sweep_test.cc).
bool HasFallback(const std::string& entry) {
  static const std::set<std::string> kFallbacks = {"clCreateProgramWithBinary",
                                                   "clBuildProgram",
                                                   "clGetProgramInfo",
                                                   "clGetProgramBuildInfo",
                                                   "clRetainEvent",
                                                   "clGetDeviceInfo",
                                                   "clFinish"};
  return kFallbacks.count(entry) > 0 || absl::StartsWith(entry, "clRelease");
}

absl::StatusOr<std::vector<int64_t>> RunScenario(const std::string& cache_dir) {
  ContextOptions options;
  options.cache_dir = cache_dir;
  RECQ_ASSIGN_OR_RETURN(Context context, Context::Create(options));
  RECQ_ASSIGN_OR_RETURN(Graph graph,
                        LoadDecoderOnnx(std::string(RECQ_DECODER_DIR) + "/tiny_decoder.onnx", 12));
  GeneratorOptions go;
  go.max_length = 12;
  go.record.backend = Backend::kQcom;
  go.engine.tuning = EngineOptions::Tuning::kOff;
  go.engine.warm_up = false;
  RECQ_ASSIGN_OR_RETURN(Generator gen, Generator::Create(context, graph, go));
  GenerateOptions o;
  o.max_new_tokens = 6;
  o.chunk = 2;
  RECQ_ASSIGN_OR_RETURN(GenerateResult r, gen.Generate(std::vector<int64_t>{17, 3, 200}, o));
  context.FlushBinaryCache();
  return r.tokens;
}

TEST(GenerateFaultSweepTest, EveryCallOfAGenerationFailsCleanly) {
  if (!Layer().ok()) GTEST_SKIP() << Layer().status().message();
  const FaultLayerClient& layer = *Layer();
  const std::string cache_dir =
      (std::filesystem::temp_directory_path() / absl::StrCat("recq_gen_sweep_", getpid())).string();
  RECQ_ASSERT_OK_AND_ASSIGN(std::vector<int64_t> clean, RunScenario(cache_dir));
  RECQ_ASSERT_OK(layer.SetFault(""));
  RECQ_ASSERT_OK_AND_ASSIGN(clean, RunScenario(cache_dir));
  ASSERT_EQ(clean.size(), 6u);
  const std::vector<std::pair<std::string, uint64_t>> trace = layer.CallCounts();
  ASSERT_TRUE(layer.LiveObjects().empty()) << testing::LiveObjectsText(layer.LiveObjects());
  std::set<std::string> traced;
  for (const auto& [entry, calls] : trace) traced.insert(entry);
  for (const char* must : {"clEnqueueRecordingQCOM", "clEnqueueReadBuffer", "clEnqueueFillBuffer",
                           "clEnqueueWriteBuffer"}) {
    EXPECT_TRUE(traced.count(must)) << must << " is not in the scenario's trace";
  }

  const char* mode = std::getenv("RECQ_FAULT_SWEEP");
  const bool full = mode != nullptr && std::string(mode) == "full";
  const size_t stride = full ? 1 : 53;
  size_t index = 0, ran = 0, problems = 0;
  std::set<std::string> reported;
  for (const auto& [entry, calls] : trace) {
    for (uint64_t n = 1; n <= calls; ++n, ++index) {
      if (!full && n != 1 && n != calls && index % stride != 0) continue;
      ++ran;
      const std::string spec = absl::StrCat(entry, ":", n, ":CL_OUT_OF_RESOURCES");
      const std::map<std::string, uint64_t> before = layer.LiveObjects();
      RECQ_ASSERT_OK(layer.SetFault(spec));
      const absl::StatusOr<std::vector<int64_t>> got = RunScenario(cache_dir);
      RECQ_ASSERT_OK(layer.SetFault(""));
      std::string problem;
      if (got.ok()) {
        if (!HasFallback(entry)) problem += "succeeded although recq documents no fallback; ";
        if (*got != clean) problem += "ids differ from the clean run; ";
      } else if (!absl::StrContains(got.status().message(), entry)) {
        problem +=
            absl::StrCat("the status does not name the call: ", got.status().ToString(), "; ");
      }
      const std::map<std::string, uint64_t> after = layer.LiveObjects();
      std::map<std::string, uint64_t> allowed;
      if (absl::StartsWith(entry, "clRelease")) allowed[testing::ReleasedKind(entry)] = 1;
      if (testing::LiveDelta(after, before) != allowed) {
        problem += absl::StrCat("objects alive after teardown: ",
                                testing::LiveObjectsText(testing::LiveDelta(after, before)), "; ");
      }
      const absl::StatusOr<std::vector<int64_t>> again = RunScenario(cache_dir);
      if (!again.ok() || *again != clean) {
        problem += absl::StrCat("no clean recovery: ", again.status().ToString(), "; ");
      }
      if (!problem.empty()) {
        ++problems;
        if (reported.insert(entry).second) ADD_FAILURE() << spec << ": " << problem;
      }
    }
  }
  std::printf("generation fault sweep: %zu entry points, %zu pairs run (%s), %zu with problems\n",
              trace.size(), ran, full ? "full" : "sample", problems);
  std::error_code ec;
  std::filesystem::remove_all(cache_dir, ec);
}

}  // namespace
}  // namespace recq
