// One conformance suite, instantiated over every registered recording
// backend (RegisteredBackends(): whatever backends/*/ registers, no list
// here): each backend's outputs must be bit-identical (memcmp) to the
// replay list's on the same device. A backend the device cannot run is
// skipped with the registry's reason (BackendAvailable, the one
// Engine::Record gives). Plus qcom-specific error paths, driven by
// the qcom emulation layer's fault hook (only under OPENCL_LAYERS).
#include <dlfcn.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

#include "backends/opencl/cl_handle.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recq/recq.h"
#include "reference/reference_executor.h"
#include "testing/fault_layer_client.h"
#include "testing/test_env.h"
#include "testing/text_encoder.h"
#include "tools/models/mobilenet.h"

namespace recq {
namespace {

using testing::Download;
using testing::NewTensor;
using testing::SharedContext;

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// A seeded random chain of Conv2D (3x3 or 1x1, with or without bias), Add
// (with the input or a constant) and Relu on [1, C, H, W].
Graph RandomChain(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int64_t c = pick(1, 3) * 4, h = pick(3, 12), w = pick(3, 12);
  const int length = pick(2, 8);
  GraphBuilder b;
  TensorRef x = b.Input("x", {1, c, h, w});
  TensorRef y = x;
  for (int i = 0; i < length; ++i) {
    const std::string n = std::to_string(i);
    switch (pick(0, 3)) {
      case 0: {
        auto wt = reference::RandomTensor({c, c, 3, 3}, seed * 100 + i, -0.3f, 0.3f);
        auto bias = reference::RandomTensor({c}, seed * 100 + 50 + i);
        Conv2DAttrs pad1;
        pad1.pads = {1, 1, 1, 1};
        y = b.Conv2D(y, b.Constant("w" + n, wt.shape, wt.data),
                     b.Constant("b" + n, bias.shape, bias.data), pad1);
        break;
      }
      case 1: {
        auto wt = reference::RandomTensor({c, c, 1, 1}, seed * 100 + i, -0.5f, 0.5f);
        y = b.Conv2D(y, b.Constant("w" + n, wt.shape, wt.data), {}, {});
        break;
      }
      case 2: {
        if (pick(0, 1) == 0) {
          y = b.Add(y, x);
        } else {
          auto k = reference::RandomTensor({1, c, h, w}, seed * 100 + i);
          y = b.Add(y, b.Constant("k" + n, k.shape, k.data));
        }
        break;
      }
      default:
        y = b.Relu(y);
        break;
    }
  }
  b.Output(y, "y");
  auto g = std::move(b).Build();
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *g : Graph();
}

// The engine's single input and output, by name and desc.
struct Io {
  std::string in, out;
  TensorDesc in_desc, out_desc;
};
Io IoOf(const Engine& engine) {
  return {engine.inputs()[0].name, engine.outputs()[0].name, engine.inputs()[0].desc,
          engine.outputs()[0].desc};
}

Tensor RandomInput(const TensorDesc& desc, uint64_t seed) {
  return NewTensor(desc, reference::RandomTensor(desc.shape, seed).data);
}

// RunOnce runs `rec` with `in` -> `out` (poisoned first) and reads `out`.
std::vector<float> RunOnce(Recording& rec, const Io& io, const Tensor& in, Tensor& out) {
  EXPECT_TRUE(out.Fill(NAN).ok());
  Bindings b;
  b.Set(io.in, in);
  b.Set(io.out, out);
  absl::Status status = rec.Run(b);
  EXPECT_TRUE(status.ok()) << status;
  return Download(out);
}

class BackendConformanceTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    absl::Status available = BackendAvailable(SharedContext(), GetParam());
    if (!available.ok()) GTEST_SKIP() << available.message();
  }

  // Record records `engine` with the backend under test (available: SetUp
  // skipped the test otherwise).
  absl::StatusOr<Recording> Record(const Engine& engine) {
    absl::StatusOr<Recording> rec = engine.Record({GetParam()});
    if (rec.ok()) {
      EXPECT_EQ(rec->backend(), GetParam());
      EXPECT_FALSE(rec->backend_reason().empty());
      // Under the fault layer's mutable-dispatch emulation (ctest prefix
      // "khr_mutable."), khr_command_buffer must take the update path.
      if (GetParam() == Backend::kKhrCommandBuffer &&
          std::getenv("RECQ_FAULT_LAYER_KHR_MUTABLE") != nullptr) {
        EXPECT_THAT(rec->backend_reason(), ::testing::HasSubstr("mutable dispatch"));
      }
    }
    return rec;
  }

  // ExpectMatchesReplay runs `engine` on inputs of the given seeds with the
  // backend under test and with the replay list and compares bits.
  void ExpectMatchesReplay(const Engine& engine, std::initializer_list<uint64_t> seeds) {
    absl::StatusOr<Recording> rec = Record(engine);
    ASSERT_TRUE(rec.ok()) << rec.status();
    RECQ_ASSERT_OK_AND_ASSIGN(Recording replay, engine.Record({Backend::kReplay}));
    const Io io = IoOf(engine);
    Tensor out = NewTensor(io.out_desc), expected_out = NewTensor(io.out_desc);
    for (uint64_t seed : seeds) {
      Tensor in = RandomInput(io.in_desc, seed);
      std::vector<float> expected = RunOnce(replay, io, in, expected_out);
      ASSERT_FALSE(std::isnan(expected[0]));
      EXPECT_TRUE(SameBits(RunOnce(*rec, io, in, out), expected)) << "seed " << seed;
    }
  }
};

TEST_P(BackendConformanceTest, RandomGraphs) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE(::testing::Message() << "graph seed " << seed);
    RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), RandomChain(seed)));
    ExpectMatchesReplay(engine, {seed * 7, seed * 7 + 1});
    if (IsSkipped()) return;
  }
}

TEST_P(BackendConformanceTest, MobileNetV1At64) {
  models::MobileNetOptions options;
  options.resolution = 64;
  RECQ_ASSERT_OK_AND_ASSIGN(Graph graph, models::BuildMobileNetV1(options));
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), graph));
  ExpectMatchesReplay(engine, {5, 6});
}

// A BERT-style text encoder (testing/text_encoder.h): int64 input_ids and
// attention_mask bound by name, the run-time Gather and the int64
// Expand/Cast mask chain recorded like any other dispatch. The replay list
// is checked against the CPU reference first (masked positions included),
// then the backend bit for bit against it, with fresh masks per seed.
TEST_P(BackendConformanceTest, TextEncoderWithMask) {
  const Graph graph = testing::TextEncoder();
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), graph));
  absl::StatusOr<Recording> rec = Record(engine);
  ASSERT_TRUE(rec.ok()) << rec.status();
  RECQ_ASSERT_OK_AND_ASSIGN(Recording replay, engine.Record({Backend::kReplay}));
  const TensorDesc out_desc = engine.outputs()[0].desc;
  Tensor out = NewTensor(out_desc), expected_out = NewTensor(out_desc);
  for (uint64_t seed : {31, 32, 33}) {
    SCOPED_TRACE(::testing::Message() << "input seed " << seed);
    const auto host = testing::TextEncoderInputs(seed);
    Bindings b;
    std::vector<Tensor> inputs;
    for (const auto& [name, values] : host) {
      RECQ_ASSERT_OK_AND_ASSIGN(Tensor t, testing::UploadHost(SharedContext(), values));
      b.Set(name, t);
      inputs.push_back(std::move(t));
    }
    auto run = [&](Recording& r, Tensor& o) {
      EXPECT_TRUE(o.Fill(NAN).ok());
      b.Set("hidden", o);
      absl::Status status = r.Run(b);
      EXPECT_TRUE(status.ok()) << status;
      return Download(o);
    };
    const std::vector<float> expected = run(replay, expected_out);
    RECQ_ASSERT_OK_AND_ASSIGN(auto reference, reference::RunReference(graph, host));
    const reference::CompareResult cmp =
        reference::Compare(expected, reference.at("hidden").data, 1e-4f, 1e-3f);
    EXPECT_TRUE(cmp.ok()) << cmp.ToString();
    EXPECT_TRUE(SameBits(run(*rec, out), expected));
  }
}

// Past the qcom layer's max size (64 by default, 16 in the layer run): the
// recording is split.
TEST_P(BackendConformanceTest, LongDispatchList) {
  EngineOptions options;
  options.optimize = false;
  RECQ_ASSERT_OK_AND_ASSIGN(
      Engine engine, Engine::Compile(SharedContext(), testing::ChainGraph(150, 256), options));
  ASSERT_GE(engine.stats().dispatches, 150u);
  ExpectMatchesReplay(engine, {3, 4});
}

TEST_P(BackendConformanceTest, SubstitutionSequences) {
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), RandomChain(42)));
  absl::StatusOr<Recording> rec = Record(engine);
  ASSERT_TRUE(rec.ok()) << rec.status();
  RECQ_ASSERT_OK_AND_ASSIGN(Recording replay, engine.Record({Backend::kReplay}));
  const Io io = IoOf(engine);
  std::vector<Tensor> ins, outs;
  for (uint64_t i = 0; i < 4; ++i) ins.push_back(RandomInput(io.in_desc, 900 + i));
  for (int i = 0; i < 3; ++i) outs.push_back(NewTensor(io.out_desc));
  Tensor expected_out = NewTensor(io.out_desc);
  // (input, output) per run: a new input each run, a new output only, both,
  // the same memory twice, then alternating A/B.
  const std::vector<std::pair<int, int>> steps = {{0, 0}, {1, 0}, {2, 0}, {2, 1}, {3, 2}, {3, 2},
                                                  {0, 0}, {1, 1}, {0, 0}, {1, 1}, {0, 0}, {1, 1}};
  for (size_t i = 0; i < steps.size(); ++i) {
    const auto [in, out] = steps[i];
    std::vector<float> expected = RunOnce(replay, io, ins[in], expected_out);
    // The other outputs keep their (poisoned) contents: only `out` is written.
    for (int o = 0; o < 3; ++o) RECQ_ASSERT_OK(outs[o].Fill(-3.0f));
    Bindings b;
    b.Set(io.in, ins[in]);
    b.Set(io.out, outs[out]);
    RECQ_ASSERT_OK(rec->Run(b));
    EXPECT_TRUE(SameBits(Download(outs[out]), expected)) << "step " << i;
    for (int o = 0; o < 3; ++o) {
      if (o == out) continue;
      for (float v : Download(outs[o])) ASSERT_EQ(v, -3.0f) << "step " << i << " output " << o;
    }
  }
}

// Two recordings of one engine, each on its own queue and thread.
TEST_P(BackendConformanceTest, TwoRecordingsOnTwoQueuesFromTwoThreads) {
  models::MobileNetOptions options;
  options.resolution = 32;
  options.width = 0.25f;
  RECQ_ASSERT_OK_AND_ASSIGN(Graph graph, models::BuildMobileNetV1(options));
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), graph));
  absl::StatusOr<Recording> rec1 = Record(engine);
  ASSERT_TRUE(rec1.ok()) << rec1.status();
  RECQ_ASSERT_OK_AND_ASSIGN(Recording rec2, Record(engine));
  RECQ_ASSERT_OK_AND_ASSIGN(Recording replay, engine.Record({Backend::kReplay}));
  const Io io = IoOf(engine);
  constexpr int kRuns = 4;
  std::vector<Tensor> ins;
  std::vector<std::vector<float>> expected;
  Tensor expected_out = NewTensor(io.out_desc);
  for (int i = 0; i < kRuns * 2; ++i) {
    ins.push_back(RandomInput(io.in_desc, 300 + i));
    expected.push_back(RunOnce(replay, io, ins.back(), expected_out));
  }
  const Context& ctx = SharedContext();
  auto worker = [&](Recording* rec, int first, std::vector<std::string>* errors) {
    cl_int err = CL_SUCCESS;
    cl::UniqueQueue queue(
        clCreateCommandQueueWithProperties(ctx.context(), ctx.device(), nullptr, &err));
    if (err != CL_SUCCESS) {
      errors->push_back("clCreateCommandQueueWithProperties failed");
      return;
    }
    Tensor out = NewTensor(io.out_desc);
    for (int i = first; i < first + kRuns; ++i) {
      Bindings b;
      b.Set(io.in, ins[i]);
      b.Set(io.out, out);
      absl::Status status = rec->Enqueue(queue.get(), b);
      if (status.ok())
        status = clFinish(queue.get()) == CL_SUCCESS ? absl::OkStatus()
                                                     : absl::InternalError("clFinish");
      if (!status.ok()) {
        errors->push_back(std::string(status.message()));
        return;
      }
      if (!SameBits(Download(out), expected[i]))
        errors->push_back("run " + std::to_string(i) + " differs");
    }
  };
  std::vector<std::string> errors1, errors2;
  std::thread t1(worker, &*rec1, 0, &errors1);
  std::thread t2(worker, &rec2, kRuns, &errors2);
  t1.join();
  t2.join();
  EXPECT_TRUE(errors1.empty()) << errors1[0];
  EXPECT_TRUE(errors2.empty()) << errors2[0];
}

// A user event gates the run; the done event completes with it.
TEST_P(BackendConformanceTest, EventsInAndOut) {
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), RandomChain(77)));
  absl::StatusOr<Recording> rec = Record(engine);
  ASSERT_TRUE(rec.ok()) << rec.status();
  RECQ_ASSERT_OK_AND_ASSIGN(Recording replay, engine.Record({Backend::kReplay}));
  const Io io = IoOf(engine);
  Tensor in = RandomInput(io.in_desc, 1234);
  Tensor expected_out = NewTensor(io.out_desc);
  std::vector<float> expected = RunOnce(replay, io, in, expected_out);

  const Context& ctx = SharedContext();
  for (int run = 0; run < 2; ++run) {
    Tensor out = NewTensor(io.out_desc);
    cl_int err = CL_SUCCESS;
    cl::UniqueEvent gate(clCreateUserEvent(ctx.context(), &err));
    ASSERT_EQ(err, CL_SUCCESS);
    Bindings b;
    b.Set(io.in, in);
    b.Set(io.out, out);
    cl_event gate_event = gate.get();
    cl::UniqueEvent done;
    RECQ_ASSERT_OK(rec->Enqueue(ctx.queue(), b, {&gate_event, 1}, done.out()));
    ASSERT_TRUE(done);
    ASSERT_EQ(clFlush(ctx.queue()), CL_SUCCESS);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    cl_int status = CL_COMPLETE;
    ASSERT_EQ(clGetEventInfo(done.get(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status,
                             nullptr),
              CL_SUCCESS);
    EXPECT_GT(status, CL_COMPLETE) << "the run finished before its wait list";
    ASSERT_EQ(clSetUserEventStatus(gate.get(), CL_COMPLETE), CL_SUCCESS);
    cl_event done_event = done.get();
    ASSERT_EQ(clWaitForEvents(1, &done_event), CL_SUCCESS);
    EXPECT_TRUE(SameBits(Download(out), expected)) << "run " << run;
  }
}

std::string BackendParamName(const ::testing::TestParamInfo<Backend>& info) {
  return BackendName(info.param);
}

INSTANTIATE_TEST_SUITE_P(AllBackends, BackendConformanceTest,
                         ::testing::ValuesIn(RegisteredBackends()), BackendParamName);

// --- qcom error paths through the emulation layer's fault hook ---

using SetFaultFn = int (*)(const char*);

// LayerFaultHook returns recqQcomLayerSetFault from a layer named in
// OPENCL_LAYERS, or null when the layer is not loaded.
SetFaultFn LayerFaultHook() {
  const char* layers = std::getenv("OPENCL_LAYERS");
  if (layers == nullptr) return nullptr;
  std::stringstream paths(layers);
  std::string path;
  while (std::getline(paths, path, ':')) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (handle == nullptr) continue;
    auto hook = reinterpret_cast<SetFaultFn>(dlsym(handle, "recqQcomLayerSetFault"));
    dlclose(handle);
    if (hook != nullptr) return hook;
  }
  return nullptr;
}

class QcomFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RECQ_ASSERT_OK_AND_ASSIGN(engine_, Engine::Compile(SharedContext(), RandomChain(5)));
    absl::StatusOr<Recording> probe = engine_->Record({Backend::kQcom});
    if (!probe.ok()) GTEST_SKIP() << probe.status().message();
    set_fault_ = LayerFaultHook();
    if (set_fault_ == nullptr) GTEST_SKIP() << "qcom is not the emulation layer: no fault hook";
  }
  void TearDown() override {
    if (set_fault_ != nullptr) set_fault_(nullptr);
  }

  std::optional<Engine> engine_;
  SetFaultFn set_fault_ = nullptr;
};

TEST_F(QcomFaultTest, FailedReplayNamesTheCallAndTheNextRunWorks) {
  RECQ_ASSERT_OK_AND_ASSIGN(Recording rec, engine_->Record({Backend::kQcom}));
  RECQ_ASSERT_OK_AND_ASSIGN(Recording replay, engine_->Record({Backend::kReplay}));
  const Io io = IoOf(*engine_);
  Tensor in = RandomInput(io.in_desc, 55);
  Tensor out = NewTensor(io.out_desc), expected_out = NewTensor(io.out_desc);
  Bindings b;
  b.Set(io.in, in);
  b.Set(io.out, out);
  ASSERT_EQ(set_fault_("clEnqueueRecordingQCOM:1:CL_OUT_OF_RESOURCES"), CL_SUCCESS);
  absl::Status failed = rec.Run(b);
  EXPECT_FALSE(failed.ok());
  EXPECT_NE(failed.message().find("clEnqueueRecordingQCOM"), absl::string_view::npos) << failed;
  EXPECT_NE(failed.message().find("CL_OUT_OF_RESOURCES"), absl::string_view::npos) << failed;
  std::vector<float> expected = RunOnce(replay, io, in, expected_out);
  RECQ_ASSERT_OK(out.Fill(NAN));
  RECQ_ASSERT_OK(rec.Run(b));
  EXPECT_TRUE(SameBits(Download(out), expected));
}

TEST_F(QcomFaultTest, FailedNewRecordingIsAClearStatus) {
  ASSERT_EQ(set_fault_("clNewRecordingQCOM:1:CL_OUT_OF_HOST_MEMORY"), CL_SUCCESS);
  absl::StatusOr<Recording> rec = engine_->Record({Backend::kQcom});
  ASSERT_FALSE(rec.ok());
  EXPECT_NE(rec.status().message().find("clNewRecordingQCOM: CL_OUT_OF_HOST_MEMORY"),
            absl::string_view::npos)
      << rec.status();
  // Nothing is left broken: the next recording works.
  RECQ_ASSERT_OK_AND_ASSIGN(Recording again, engine_->Record({Backend::kQcom}));
  EXPECT_EQ(again.backend(), Backend::kQcom);
}

// --- khr mutable dispatch through the fault layer's emulation ---

// A failed clUpdateMutableCommandsKHR is a status naming it; the next run
// updates every slot again and is bit-identical to the replay list.
TEST(KhrMutableFaultTest, FailedUpdateNamesTheCallAndTheNextRunWorks) {
  absl::StatusOr<testing::FaultLayerClient> layer = testing::FaultLayerClient::Find();
  if (!layer.ok()) GTEST_SKIP() << layer.status().message();
  if (std::getenv("RECQ_FAULT_LAYER_KHR_MUTABLE") == nullptr) {
    GTEST_SKIP() << "needs the fault layer's mutable-dispatch emulation";
  }
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), RandomChain(7)));
  RECQ_ASSERT_OK_AND_ASSIGN(Recording rec, engine.Record({Backend::kKhrCommandBuffer}));
  ASSERT_THAT(rec.backend_reason(), ::testing::HasSubstr("mutable dispatch"));
  RECQ_ASSERT_OK_AND_ASSIGN(Recording replay, engine.Record({Backend::kReplay}));
  const Io io = IoOf(engine);
  Tensor in1 = RandomInput(io.in_desc, 71), in2 = RandomInput(io.in_desc, 72);
  Tensor out = NewTensor(io.out_desc), expected_out = NewTensor(io.out_desc);
  const std::vector<float> expected1 = RunOnce(replay, io, in1, expected_out);
  const std::vector<float> expected2 = RunOnce(replay, io, in2, expected_out);
  EXPECT_TRUE(SameBits(RunOnce(rec, io, in1, out), expected1));

  RECQ_ASSERT_OK(layer->SetFault("clUpdateMutableCommandsKHR:1:CL_OUT_OF_RESOURCES"));
  Bindings b;
  b.Set(io.in, in2);
  b.Set(io.out, out);
  const absl::Status failed = rec.Run(b);
  RECQ_ASSERT_OK(layer->SetFault(""));
  EXPECT_FALSE(failed.ok());
  EXPECT_THAT(std::string(failed.message()),
              ::testing::HasSubstr("clUpdateMutableCommandsKHR: CL_OUT_OF_RESOURCES"));

  EXPECT_TRUE(SameBits(RunOnce(rec, io, in2, out), expected2));
  EXPECT_TRUE(SameBits(RunOnce(rec, io, in1, out), expected1));
  uint64_t updates = 0;
  for (const auto& [entry, calls] : layer->CallCounts()) {
    if (entry == "clUpdateMutableCommandsKHR") updates = calls;
  }
  EXPECT_EQ(updates, 2u) << "each run with new memory is one update";
}

}  // namespace
}  // namespace recq
