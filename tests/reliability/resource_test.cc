// Resource exhaustion: models too large for the device are a clear
// ResourceExhausted at compile, checked before anything is allocated. Runs
// under the fault layer, which can report a small device
// (CL_DEVICE_GLOBAL_MEM_SIZE, CL_DEVICE_MAX_MEM_ALLOC_SIZE) to a new context.
#include <random>

#include "absl/strings/str_cat.h"
#include "testing/fault_layer_client.h"
#include "testing/test_env.h"

namespace recq {
namespace {

TEST(ResourceTest, AbsurdShapeIsResourceExhaustedBeforeAnyAllocation) {
  // 1e12 elements (4 TB): no host or device memory is touched for it.
  GraphBuilder b;
  TensorRef x = b.Input("x", {1, 1000000, 1000000});
  b.Output(b.Relu(x), "y");
  RECQ_ASSERT_OK_AND_ASSIGN(Graph graph, std::move(b).Build());
  absl::StatusOr<Engine> engine = Engine::Compile(testing::SharedContext(), graph);
  ASSERT_TRUE(absl::IsResourceExhausted(engine.status())) << engine.status();
  EXPECT_THAT(std::string(engine.status().message()),
              ::testing::HasSubstr("tensor 'x' (1x1000000x1000000) needs 4000000000000 bytes"));
  EXPECT_THAT(std::string(engine.status().message()),
              ::testing::HasSubstr("CL_DEVICE_MAX_MEM_ALLOC_SIZE"));
}

TEST(ResourceTest, IntermediateBeyondTheMaxAllocationIsResourceExhausted) {
  const DeviceInfo& device = testing::SharedContext().device_info();
  // The input fits one buffer; the concatenation of it with itself (an
  // intermediate, consumed by Relu) does not.
  const int64_t elements = static_cast<int64_t>(device.max_alloc_bytes * 3 / 5 / sizeof(float));
  GraphBuilder b;
  TensorRef x = b.Input("x", {elements});
  b.Output(b.Relu(b.AddNode(OpType::kConcat, {x, x}, ConcatAttrs{0})), "y");
  RECQ_ASSERT_OK_AND_ASSIGN(Graph graph, std::move(b).Build());
  absl::StatusOr<Engine> engine = Engine::Compile(testing::SharedContext(), graph);
  ASSERT_TRUE(absl::IsResourceExhausted(engine.status())) << engine.status();
  EXPECT_THAT(std::string(engine.status().message()),
              ::testing::HasSubstr("CL_DEVICE_MAX_MEM_ALLOC_SIZE"));
  EXPECT_THAT(std::string(engine.status().message()),
              ::testing::HasSubstr(absl::StrCat(elements * 2 * 4, " bytes")));
}

// A chain of element-wise ops without weights, compiled unoptimized: every
// op writes an intermediate of `n` floats, and the plan ping-pongs two.
Graph ClipChain(int64_t n) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {n});
  for (int i = 0; i < 6; ++i) x = b.Clip(x, -1.0f + 0.1f * i, 2.0f - 0.1f * i);
  b.Output(x, "y");
  absl::StatusOr<Graph> graph = std::move(b).Build();
  EXPECT_TRUE(graph.ok()) << graph.status();
  return *std::move(graph);
}

TEST(ResourceTest, IntermediatesBeyondTheGlobalMemoryAreResourceExhausted) {
  absl::StatusOr<testing::FaultLayerClient> layer = testing::FaultLayerClient::Find();
  if (!layer.ok()) GTEST_SKIP() << layer.status().message();
  constexpr int64_t kN = 1 << 16;
  const Graph graph = ClipChain(kN);
  EngineOptions options;
  options.optimize = false;
  // The plan on the real device.
  RECQ_ASSERT_OK_AND_ASSIGN(Engine reference,
                            Engine::Compile(testing::SharedContext(), graph, options));
  const uint64_t needed = reference.stats().intermediate_bytes + reference.stats().weight_bytes;
  ASSERT_GE(reference.stats().intermediate_bytes, 2 * kN * sizeof(float));

  // A device with one byte less global memory than that, and every single
  // tensor still within its allocation limit: Compile refuses it.
  const uint64_t max_alloc = kN * sizeof(float);
  layer->SetDeviceMemory(needed - 1, max_alloc);
  absl::StatusOr<Context> small = Context::Create();
  layer->SetDeviceMemory(0, 0);
  RECQ_ASSERT_OK(small.status());
  ASSERT_EQ(small->device_info().global_mem_bytes, needed - 1);
  ASSERT_EQ(small->device_info().max_alloc_bytes, max_alloc);
  absl::StatusOr<Engine> engine = Engine::Compile(*small, graph, options);
  ASSERT_TRUE(absl::IsResourceExhausted(engine.status())) << engine.status();
  EXPECT_THAT(
      std::string(engine.status().message()),
      ::testing::HasSubstr(absl::StrCat("need ", needed, " bytes; the device has ", needed - 1,
                                        " bytes of global memory "
                                        "(CL_DEVICE_GLOBAL_MEM_SIZE)")));

  // Exactly enough: it compiles, records and runs correctly.
  layer->SetDeviceMemory(needed, max_alloc);
  absl::StatusOr<Context> enough = Context::Create();
  layer->SetDeviceMemory(0, 0);
  RECQ_ASSERT_OK(enough.status());
  RECQ_ASSERT_OK_AND_ASSIGN(Engine fits, Engine::Compile(*enough, graph, options));
  RECQ_ASSERT_OK_AND_ASSIGN(Recording recording, fits.Record({Backend::kReplay}));
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  std::vector<float> values(kN);
  for (float& v : values) v = dist(rng);
  RECQ_ASSERT_OK_AND_ASSIGN(Tensor input, Tensor::Allocate(*enough, TensorDesc{{kN}}));
  RECQ_ASSERT_OK(input.Upload(values));
  RECQ_ASSERT_OK_AND_ASSIGN(Tensor output, Tensor::Allocate(*enough, TensorDesc{{kN}}));
  RECQ_ASSERT_OK(output.Fill(NAN));
  Bindings bindings;
  bindings.Set("x", input.mem());
  bindings.Set("y", output.mem());
  RECQ_ASSERT_OK(recording.Run(bindings));
  const std::vector<float> expected =
      testing::ReferenceOutput(graph, "x", reference::HostTensor{{kN}, values}, "y");
  RECQ_ASSERT_OK_AND_ASSIGN(std::vector<float> got, output.Download());
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], expected[i]) << i;
}

}  // namespace
}  // namespace recq
