// A device that never finishes: the fault layer holds every kernel enqueue
// behind an event of its own, so a run cannot complete until the test lets
// it. Run with a deadline must return DeadlineExceeded, keep the recording
// unusable while that run is pending, and work again once it completed.
#include <random>

#include "recq/log.h"
#include "testing/fault_layer_client.h"
#include "testing/test_env.h"

namespace recq {
namespace {

using testing::FaultLayerClient;

class DeadlineTest : public ::testing::TestWithParam<Backend> {};

TEST_P(DeadlineTest, HeldRunExceedsItsDeadlineAndTheRecordingRecovers) {
  absl::StatusOr<FaultLayerClient> layer = FaultLayerClient::Find();
  if (!layer.ok()) GTEST_SKIP() << layer.status().message();
  const Context& context = testing::SharedContext();
  constexpr int64_t kN = 4096;
  const Graph graph = testing::ChainGraph(9, kN);
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(context, graph));
  RECQ_ASSERT_OK_AND_ASSIGN(Recording recording, engine.Record({GetParam()}));

  std::mt19937 rng(9);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> values(kN);
  for (float& v : values) v = dist(rng);
  Tensor input = testing::NewTensor(TensorDesc{{kN}}, values);
  Tensor output = testing::NewTensor(TensorDesc{{kN}});
  reference::HostTensor host{{kN}, values};
  const std::vector<float> expected = testing::ReferenceOutput(graph, "x", host, "y");
  Bindings bindings;
  bindings.Set("x", input.mem());
  bindings.Set("y", output.mem());

  layer->Hold(true);
  absl::Status status = recording.Run(bindings, absl::Milliseconds(50));
  EXPECT_TRUE(absl::IsDeadlineExceeded(status)) << status;
  // While the held run is pending, the recording refuses work.
  status = recording.Run(bindings, absl::Milliseconds(50));
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  status = recording.Enqueue(context.queue(), bindings);
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("exceeded its deadline"));

  // The device finishes: the held run completes with the right values and
  // the recording works again.
  layer->Hold(false);
  ASSERT_EQ(clFinish(context.queue()), CL_SUCCESS);
  std::vector<float> got = testing::Download(output);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_FLOAT_EQ(got[i], expected[i]) << i;

  RECQ_ASSERT_OK(output.Fill(NAN));
  RECQ_ASSERT_OK(recording.Run(bindings, absl::Seconds(600)));
  got = testing::Download(output);
  for (size_t i = 0; i < got.size(); ++i) ASSERT_FLOAT_EQ(got[i], expected[i]) << i;
}

TEST_P(DeadlineTest, DestroyingAnOverdueRecordingKeepsWhatTheRunUses) {
  absl::StatusOr<FaultLayerClient> layer = FaultLayerClient::Find();
  if (!layer.ok()) GTEST_SKIP() << layer.status().message();
  const Context& context = testing::SharedContext();
  constexpr int64_t kN = 4096;
  const Graph graph = testing::ChainGraph(9, kN);
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(context, graph));
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> values(kN);
  for (float& v : values) v = dist(rng);
  Tensor input = testing::NewTensor(TensorDesc{{kN}}, values);
  Tensor output = testing::NewTensor(TensorDesc{{kN}});
  reference::HostTensor host{{kN}, values};
  const std::vector<float> expected = testing::ReferenceOutput(graph, "x", host, "y");
  Bindings bindings;
  bindings.Set("x", input.mem());
  bindings.Set("y", output.mem());

  std::vector<std::string> warnings;
  SetLogSink([&](LogLevel level, absl::string_view message) {
    if (level == LogLevel::kWarning) warnings.emplace_back(message);
  });
  layer->Hold(true);
  {
    RECQ_ASSERT_OK_AND_ASSIGN(Recording recording, engine.Record({GetParam()}));
    absl::Status status = recording.Run(bindings, absl::Milliseconds(20));
    EXPECT_TRUE(absl::IsDeadlineExceeded(status)) << status;
    // Destroyed while its run is held: must neither wait (the device may
    // never finish) nor free the memory the run uses.
  }
  layer->Hold(false);
  SetLogSink({});
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], ::testing::HasSubstr("keeps its memory and OpenCL objects"));
  // The held run completes on the kept memory with the right values.
  ASSERT_EQ(clFinish(context.queue()), CL_SUCCESS);
  std::vector<float> got = testing::Download(output);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_FLOAT_EQ(got[i], expected[i]) << i;
}

INSTANTIATE_TEST_SUITE_P(HeldKernelEnqueues, DeadlineTest,
                         ::testing::Values(Backend::kReplay, Backend::kUnrecorded),
                         [](const ::testing::TestParamInfo<Backend>& info) {
                           return std::string(BackendName(info.param));
                         });

}  // namespace
}  // namespace recq
