// The fault-injection sweep: every OpenCL call recq makes in a reference
// scenario is failed once, in its own run of the scenario.
//
// Runs under OPENCL_LAYERS=<qcom layer>:<fault layer> (see CMakeLists.txt).
// The reference scenario creates a context (program binaries from a disk
// cache of its own), compiles a model (MobileNet V2 at reduced size, or a
// BERT-style text encoder fed int64 token ids and an attention mask: one
// test each), records it on every backend, runs each recording 3 times with alternating input and
// output memory, reads every output back and tears everything down. Its
// trace is the (entry point, calls) list the fault layer counted. Then, for
// each (E, N) with N <= calls(E), the scenario runs again with call N of E
// failing, and the run must:
//   * return a status whose message names E, or succeed with outputs
//     bit-identical to the clean run where recq has a documented fallback
//     (kFallbacks below);
//   * not crash or hang (ctest's timeout is the hang guard);
//   * leave no OpenCL object alive after teardown and release nothing twice
//     (a failed release leaks exactly the one object it failed to release);
//   * be followed by a clean compile and run in the same process that gives
//     the clean outputs again (checked after every faulted run).
// RECQ_FAULT_SWEEP=full runs every pair; otherwise a deterministic sample
// (the first and last call of every entry point plus every k-th pair, k = 37
// or RECQ_FAULT_SWEEP=<k>) runs. RECQ_FAULT_SWEEP_PART=i/n runs every n-th
// of those pairs from the i-th (i from 0): ctest runs the sweep as two such
// parts side by side.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "recq/status_macros.h"
#include "testing/fault_layer_client.h"
#include "testing/test_env.h"
#include "testing/text_encoder.h"
#include "tools/models/mobilenet.h"

namespace recq {
namespace {

using testing::FaultLayerClient;

constexpr int kRunsPerBackend = 3;

// Entry points whose failure recq survives with correct outputs, and why.
const std::map<std::string, std::string>& Fallbacks() {
  static const auto* fallbacks = new std::map<std::string, std::string>{
      {"clCreateProgramWithBinary", "a disk-cache binary that fails to load: built from source"},
      {"clBuildProgram", "a disk-cache binary that fails to build: built from source"},
      {"clGetProgramInfo", "reading a binary back for the disk cache: the store is skipped"},
      {"clGetProgramBuildInfo", "only read for a build log"},
      {"clRetainEvent",
       "khr_command_buffer keeps a reference of the run's event: without it the run waits for its "
       "submission before returning"},
      {"clGetDeviceInfo",
       "optional capabilities (khr mutable dispatch): the backend uses its non-mutable path"},
      {"clFinish",
       "draining a queue (a recording's teardown waits for its runs): a marker is enqueued and "
       "waited for instead"},
  };
  return *fallbacks;
}

bool IsRelease(const std::string& entry) { return absl::StartsWith(entry, "clRelease"); }

struct Scenario {
  Graph graph;
  // Two input sets (the runs alternate between them), by input name.
  std::vector<absl::flat_hash_map<std::string, reference::HostTensor>> inputs;
  std::string output_name;
  TensorDesc output_desc;
  // Each backend once; khr_command_buffer twice: with its binding-set cache
  // and with the fault layer's mutable-dispatch emulation.
  std::vector<std::pair<Backend, bool>> backends;  // (backend, khr mutable)
  std::string cache_dir;
  const FaultLayerClient* layer = nullptr;
};

// RunScenario runs the reference scenario; `outputs` gets every run's output
// in order (backend-major).
absl::Status RunScenario(const Scenario& s, std::vector<std::vector<float>>* outputs) {
  outputs->clear();
  ContextOptions options;
  options.cache_dir = s.cache_dir;
  RECQ_ASSIGN_OR_RETURN(Context context, Context::Create(options));
  // Tuning off, here rather than through test_env.cc's RECQ_TUNING=off
  // (which reaches only binaries that link its object file): with tuning
  // on, a loaded machine leaves keys untuned that every later run times
  // again and may resolve to other variants, so neither the calls nor the
  // output bits of two runs would repeat.
  EngineOptions engine_options;
  engine_options.tuning = EngineOptions::Tuning::kOff;
  RECQ_ASSIGN_OR_RETURN(Engine engine, Engine::Compile(context, s.graph, engine_options));
  std::vector<std::vector<std::pair<std::string, Tensor>>> inputs;
  for (const auto& set : s.inputs) {
    std::vector<std::pair<std::string, Tensor>> tensors;
    for (const auto& [name, host] : set) {
      RECQ_ASSIGN_OR_RETURN(Tensor t, testing::UploadHost(context, host));
      tensors.emplace_back(name, std::move(t));
    }
    inputs.push_back(std::move(tensors));
  }
  for (const auto& [backend, khr_mutable] : s.backends) {
    s.layer->SetKhrMutable(khr_mutable);
    absl::StatusOr<Recording> recorded = engine.Record({backend});
    s.layer->SetKhrMutable(false);
    // (A failed optional capability query falls back to the cache path;
    // the clean trace shows that clUpdateMutableCommandsKHR runs.)
    RECQ_ASSIGN_OR_RETURN(Recording recording, std::move(recorded));
    std::vector<Tensor> out;
    for (int i = 0; i < 2; ++i) {
      RECQ_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(context, s.output_desc));
      out.push_back(std::move(t));
    }
    for (int run = 0; run < kRunsPerBackend; ++run) {
      Tensor& o = out[run % 2];
      RECQ_RETURN_IF_ERROR(o.Fill(NAN));
      Bindings b;
      for (const auto& [name, t] : inputs[run % 2]) b.Set(name, t.mem());
      b.Set(s.output_name, o.mem());
      RECQ_RETURN_IF_ERROR(recording.Run(b));
      RECQ_ASSIGN_OR_RETURN(std::vector<float> values, o.Download());
      outputs->push_back(std::move(values));
    }
  }
  // The binaries for the next start, as an application stores them once its
  // first results are out (the context's release waits for the writer).
  context.FlushBinaryCache();
  return absl::OkStatus();
}

bool BitIdentical(const std::vector<std::vector<float>>& a,
                  const std::vector<std::vector<float>>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size() ||
        std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(float)) != 0) {
      return false;
    }
  }
  return true;
}

class FaultSweepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Found once per process: ocl-icd splits OPENCL_LAYERS in place when
    // it loads the layers, so a second Find would see the first layer only.
    static const auto* const client =
        new absl::StatusOr<FaultLayerClient>(FaultLayerClient::Find());
    if (!client->ok()) GTEST_SKIP() << client->status().message();
    layer_ = **client;
    scenario_.backends = {{Backend::kReplay, false},
                          {Backend::kUnrecorded, false},
                          {Backend::kQcom, false},
                          {Backend::kKhrCommandBuffer, false},
                          {Backend::kKhrCommandBuffer, true}};
    scenario_.layer = &layer_;
    scenario_.cache_dir =
        (std::filesystem::temp_directory_path() / absl::StrCat("recq_fault_sweep_", getpid()))
            .string();
  }
  void TearDown() override {
    std::error_code ec;
    if (!scenario_.cache_dir.empty()) std::filesystem::remove_all(scenario_.cache_dir, ec);
  }

  // Sweep takes the trace of a clean run of scenario_ (set up by the test),
  // checks its outputs against the CPU reference, then fails each sampled
  // (entry point, call) pair in turn (see the file comment).
  void Sweep();

  FaultLayerClient layer_;
  Scenario scenario_;
};

void FaultSweepTest::Sweep() {
  // Warm the disk cache of program binaries, then take the trace of a
  // clean run: the first one that repeats the run before it (a check that
  // the scenario's calls are deterministic, which the sweep relies on).
  // Objects an earlier sweep of this process left alive (each failed
  // release leaks the object it failed to release) are not this sweep's.
  const std::map<std::string, uint64_t> baseline = layer_.LiveObjects();
  std::vector<std::vector<float>> clean;
  RECQ_ASSERT_OK(RunScenario(scenario_, &clean));
  std::vector<std::pair<std::string, uint64_t>> trace, previous;
  for (int run = 0; run < 5 && (trace.empty() || trace != previous); ++run) {
    RECQ_ASSERT_OK(layer_.SetFault(""));
    RECQ_ASSERT_OK(RunScenario(scenario_, &clean));
    previous = std::move(trace);
    trace = layer_.CallCounts();
  }
  ASSERT_EQ(trace, previous) << "clean runs of the scenario make different OpenCL calls";
  const std::map<std::string, uint64_t> left = testing::LiveDelta(layer_.LiveObjects(), baseline);
  ASSERT_TRUE(left.empty()) << testing::LiveObjectsText(left);

  // The clean outputs: every backend bit-identical to the replay list, and
  // the replay list within tolerance of the CPU reference.
  ASSERT_EQ(clean.size(), scenario_.backends.size() * kRunsPerBackend);
  for (size_t i = kRunsPerBackend; i < clean.size(); ++i) {
    ASSERT_EQ(0, std::memcmp(clean[i].data(), clean[i % kRunsPerBackend].data(),
                             clean[i].size() * sizeof(float)))
        << "backend " << BackendName(scenario_.backends[i / kRunsPerBackend].first) << " run "
        << i % kRunsPerBackend << " differs from the replay list";
  }
  for (int i = 0; i < 2; ++i) {
    RECQ_ASSERT_OK_AND_ASSIGN(auto reference,
                              reference::RunReference(scenario_.graph, scenario_.inputs[i]));
    const std::vector<float>& expected = reference.at(scenario_.output_name).data;
    ASSERT_EQ(expected.size(), clean[i].size());
    for (size_t k = 0; k < expected.size(); ++k) {
      ASSERT_NEAR(clean[i][k], expected[k], 1e-4f + 1e-3f * std::fabs(expected[k])) << k;
    }
  }

  std::set<std::string> traced;
  size_t pairs = 0;
  for (const auto& [entry, calls] : trace) {
    traced.insert(entry);
    pairs += calls;
  }
  // The trace must reach every layer and backend the scenario claims to.
  for (const char* must :
       {"clCreateContext", "clCreateCommandQueueWithProperties", "clCreateBuffer",
        "clCreateProgramWithBinary", "clBuildProgram", "clCreateKernel", "clSetKernelArg",
        "clEnqueueNDRangeKernel", "clWaitForEvents", "clReleaseEvent", "clNewRecordingQCOM",
        "clEnqueueRecordingQCOM", "clCreateCommandBufferKHR", "clEnqueueCommandBufferKHR"}) {
    EXPECT_TRUE(traced.count(must)) << must << " is not in the scenario's trace";
  }

  const char* mode = std::getenv("RECQ_FAULT_SWEEP");
  // RECQ_FAULT_SWEEP_ONLY=<spec prefix> (e.g. "clCreateBuffer:3:") runs the
  // matching pairs only: for reproducing one finding.
  const char* only = std::getenv("RECQ_FAULT_SWEEP_ONLY");
  // RECQ_FAULT_SWEEP_FROM=<pair index> skips the pairs before it,
  // RECQ_FAULT_SWEEP_TO=<pair index> the pairs from it on (shards of the full
  // sweep run side by side), and RECQ_FAULT_SWEEP_VERBOSE=1 prints each pair
  // before it runs.
  const size_t from = static_cast<size_t>(std::atoll(
      std::getenv("RECQ_FAULT_SWEEP_FROM") ? std::getenv("RECQ_FAULT_SWEEP_FROM") : "0"));
  const size_t to = std::getenv("RECQ_FAULT_SWEEP_TO")
                        ? static_cast<size_t>(std::atoll(std::getenv("RECQ_FAULT_SWEEP_TO")))
                        : SIZE_MAX;
  const bool verbose = std::getenv("RECQ_FAULT_SWEEP_VERBOSE") != nullptr;
  size_t part = 0, parts = 1;
  if (const char* p = std::getenv("RECQ_FAULT_SWEEP_PART")) {
    ASSERT_EQ(std::sscanf(p, "%zu/%zu", &part, &parts), 2) << "RECQ_FAULT_SWEEP_PART=" << p;
    ASSERT_TRUE(parts >= 1 && part < parts) << "RECQ_FAULT_SWEEP_PART=" << p;
  }
  size_t chosen = 0;  // pairs the sample (and any FROM/TO, ONLY) took so far
  const bool full = (mode != nullptr && std::string(mode) == "full") || only != nullptr;
  // Sample: call 1 and the last call of every entry point, plus every
  // `stride`-th pair of the whole matrix (deterministic). RECQ_FAULT_SWEEP=<n>
  // sets the stride (the sanitizer builds use a sparser sample).
  size_t stride = 37;
  if (mode != nullptr && !full && std::atoi(mode) > 0)
    stride = static_cast<size_t>(std::atoi(mode));
  if (full) stride = 1;
  size_t index = 0, ran = 0, failed_cleanly = 0, fell_back = 0;
  size_t problems = 0;
  std::set<std::string> reported;
  for (const auto& [entry, calls] : trace) {
    for (uint64_t n = 1; n <= calls; ++n, ++index) {
      if (!full && n != 1 && n != calls && index % stride != 0) continue;
      const std::string spec = absl::StrCat(entry, ":", n, ":CL_OUT_OF_RESOURCES");
      if (only != nullptr && spec.rfind(only, 0) != 0) continue;
      if (index < from || index >= to) continue;
      if (chosen++ % parts != part) continue;
      ++ran;
      if (verbose) std::fprintf(stderr, "sweep %zu %s\n", index, spec.c_str());
      const std::map<std::string, uint64_t> before = layer_.LiveObjects();
      RECQ_ASSERT_OK(layer_.SetFault(spec));
      std::vector<std::vector<float>> outputs;
      const absl::Status status = RunScenario(scenario_, &outputs);
      RECQ_ASSERT_OK(layer_.SetFault(""));

      std::string problem;
      if (status.ok()) {
        ++fell_back;
        if (!Fallbacks().count(entry) && !IsRelease(entry)) {
          problem += "succeeded although recq documents no fallback for this call; ";
        }
        if (!BitIdentical(outputs, clean)) problem += "outputs differ from the clean run; ";
      } else {
        ++failed_cleanly;
        if (!absl::StrContains(status.message(), entry)) {
          problem += absl::StrCat("the status does not name the call: ", status.ToString(), "; ");
        }
      }
      const std::map<std::string, uint64_t> after = layer_.LiveObjects();
      const std::map<std::string, uint64_t> live = testing::LiveDelta(after, before);
      std::map<std::string, uint64_t> allowed;
      if (IsRelease(entry)) allowed[testing::ReleasedKind(entry)] = 1;
      if (live != allowed) {
        problem += absl::StrCat("objects alive after teardown: ", testing::LiveObjectsText(live),
                                " (expected ", testing::LiveObjectsText(allowed), "); ");
      }
      // Recovery: a fresh compile and run in the same process.
      std::vector<std::vector<float>> again;
      const absl::Status recovered = RunScenario(scenario_, &again);
      if (!recovered.ok()) {
        problem += absl::StrCat("no recovery: ", recovered.ToString(), "; ");
      } else if (!BitIdentical(again, clean)) {
        problem += "the recovery run's outputs differ from the clean run; ";
      }
      // Leaks of the faulted run stay counted; only new ones matter now.
      if (layer_.LiveObjects() != after) {
        problem += absl::StrCat(
            "the recovery run leaked: ",
            testing::LiveObjectsText(testing::LiveDelta(layer_.LiveObjects(), after)), "; ");
      }
      if (!problem.empty()) {
        ++problems;
        // One report per entry point keeps the log readable.
        if (reported.insert(entry).second) ADD_FAILURE() << spec << ": " << problem;
      }
    }
  }
  std::printf(
      "fault sweep: %zu entry points, %zu (entry, call) pairs in the trace, %zu run (%s): %zu "
      "failed with a status, %zu succeeded (fallback or failed release), %zu with problems\n",
      trace.size(), pairs, ran, full ? "full" : "sample", failed_cleanly, fell_back, problems);
  for (const auto& [entry, calls] : trace)
    std::printf("  %-36s %llu\n", entry.c_str(), static_cast<unsigned long long>(calls));
}

TEST_F(FaultSweepTest, EveryCallOfTheScenarioFailsCleanly) {
  models::MobileNetOptions options;
  options.resolution = 32;
  options.width = 0.5f;
  options.num_classes = 10;
  absl::StatusOr<Graph> graph = models::BuildMobileNetV2(options);
  ASSERT_TRUE(graph.ok()) << graph.status();
  scenario_.graph = *std::move(graph);
  scenario_.output_name = "prob";
  scenario_.output_desc = TensorDesc{{1, 10}};
  for (uint64_t seed : {14, 15}) {
    scenario_.inputs.push_back({{"input", reference::RandomTensor({1, 3, 32, 32}, seed)}});
  }
  Sweep();
}

// The same sweep over a BERT-style text encoder (testing/text_encoder.h):
// int64 input_ids and attention_mask, a run-time Gather, the int64 Expand
// and Cast of the mask chain, attention with a different mask per row.
TEST_F(FaultSweepTest, EveryCallOfTheTextEncoderScenarioFailsCleanly) {
  scenario_.graph = testing::TextEncoder();
  scenario_.output_name = "hidden";
  scenario_.output_desc =
      TensorDesc{{testing::kTextBatch, testing::kTextSeq, testing::kTextHidden}};
  for (uint64_t seed : {21, 22}) scenario_.inputs.push_back(testing::TextEncoderInputs(seed));
  Sweep();
}

}  // namespace
}  // namespace recq
