// Teardown while work may be in flight, on every backend (under the qcom
// emulation layer and the fault layer, which also emulates khr mutable
// dispatch):
//  * a Run whose clWaitForEvents fails returns that error only once nothing
//    of the run is in flight, so freeing everything right after it is safe
//    (regression: the full fault sweep crashed PoCL at clWaitForEvents:14,
//    the khr mutable-dispatch recording's second run, with the command
//    buffer, its kernels and the recording's memory freed under a running
//    submission);
//  * a recording destroyed right after Enqueue (no wait) waits for its runs.
// Each case tears everything down at once, checks that no OpenCL object is
// left alive, and that the completed runs wrote the reference values.
#include <cstring>
#include <random>

#include "absl/strings/match.h"
#include "testing/fault_layer_client.h"
#include "testing/test_env.h"
#include "tools/models/mobilenet.h"

namespace recq {
namespace {

using testing::FaultLayerClient;

struct Case {
  Backend backend;
  bool khr_mutable;
  const char* name;
};

class TeardownTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    absl::StatusOr<FaultLayerClient> client = FaultLayerClient::Find();
    if (!client.ok()) GTEST_SKIP() << client.status().message();
    layer_ = *client;
    models::MobileNetOptions options;
    options.resolution = 32;
    options.width = 0.5f;
    options.num_classes = 10;
    absl::StatusOr<Graph> graph = models::BuildMobileNetV2(options);
    ASSERT_TRUE(graph.ok()) << graph.status();
    graph_ = *std::move(graph);
    std::mt19937 rng(std::random_device{}());
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (int i = 0; i < 2; ++i) {
      reference::HostTensor input;
      input.shape = input_desc_.shape;
      input.data.resize(input_desc_.NumElements());
      for (float& x : input.data) x = dist(rng);
      expected_.push_back(testing::ReferenceOutput(graph_, "input", input, "prob"));
      inputs_.push_back(std::move(input.data));
    }
  }

  // ExpectNear checks a run's output against the CPU reference.
  void ExpectNear(const std::vector<float>& got, int input) const {
    const std::vector<float>& want = expected_[input];
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < want.size(); ++k) {
      ASSERT_NEAR(got[k], want[k], 1e-4f + 1e-3f * std::fabs(want[k]))
          << "input " << input << " " << k;
    }
  }

  FaultLayerClient layer_;
  Graph graph_;
  const TensorDesc input_desc_{{1, 3, 32, 32}};
  const TensorDesc output_desc_{{1, 10}};
  std::vector<std::vector<float>> inputs_;
  std::vector<std::vector<float>> expected_;
};

TEST_P(TeardownTest, FailedWaitInRunLeavesNothingInFlight) {
  const Case& c = GetParam();
  const std::map<std::string, uint64_t> before = layer_.LiveObjects();
  // Several rounds: the crash this guards against depended on timing.
  for (int round = 0; round < 4; ++round) {
    {
      RECQ_ASSERT_OK_AND_ASSIGN(Context context, Context::Create());
      RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(context, graph_));
      layer_.SetKhrMutable(c.khr_mutable);
      absl::StatusOr<Recording> recorded = engine.Record({c.backend});
      layer_.SetKhrMutable(false);
      RECQ_ASSERT_OK_AND_ASSIGN(Recording recording, std::move(recorded));
      std::vector<Tensor> in, out;
      for (int i = 0; i < 2; ++i) {
        RECQ_ASSERT_OK_AND_ASSIGN(Tensor t, Tensor::Allocate(context, input_desc_));
        RECQ_ASSERT_OK(t.Upload(inputs_[i]));
        in.push_back(std::move(t));
        RECQ_ASSERT_OK_AND_ASSIGN(Tensor o, Tensor::Allocate(context, output_desc_));
        RECQ_ASSERT_OK(o.Fill(NAN));
        out.push_back(std::move(o));
      }
      Bindings first;
      first.Set("input", in[0].mem());
      first.Set("prob", out[0].mem());
      RECQ_ASSERT_OK(recording.Run(first));
      ExpectNear(testing::Download(out[0]), 0);

      // The second run (other memory: the mutable path updates arguments)
      // fails its wait: the first clWaitForEvents from here on is Run's.
      Bindings second;
      second.Set("input", in[1].mem());
      second.Set("prob", out[1].mem());
      RECQ_ASSERT_OK(layer_.SetFault("clWaitForEvents:1:CL_OUT_OF_RESOURCES"));
      const absl::Status status = recording.Run(second);
      RECQ_ASSERT_OK(layer_.SetFault(""));
      ASSERT_FALSE(status.ok());
      EXPECT_TRUE(absl::StrContains(status.message(), "clWaitForEvents")) << status;
      // No read here: a blocking read would wait for the run itself.
      // Everything (recording, tensors, engine, context) is freed here, at
      // once.
    }
    EXPECT_EQ(layer_.LiveObjects(), before) << testing::LiveObjectsText(layer_.LiveObjects())
                                            << " vs " << testing::LiveObjectsText(before);
  }
}

TEST_P(TeardownTest, RecordingDestroyedWithRunsInFlightWaitsForThem) {
  const Case& c = GetParam();
  const std::map<std::string, uint64_t> before = layer_.LiveObjects();
  for (int round = 0; round < 4; ++round) {
    RECQ_ASSERT_OK_AND_ASSIGN(Context context, Context::Create());
    RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(context, graph_));
    std::vector<Tensor> in, out;
    for (int i = 0; i < 2; ++i) {
      RECQ_ASSERT_OK_AND_ASSIGN(Tensor t, Tensor::Allocate(context, input_desc_));
      RECQ_ASSERT_OK(t.Upload(inputs_[i]));
      in.push_back(std::move(t));
      RECQ_ASSERT_OK_AND_ASSIGN(Tensor o, Tensor::Allocate(context, output_desc_));
      RECQ_ASSERT_OK(o.Fill(NAN));
      out.push_back(std::move(o));
    }
    {
      layer_.SetKhrMutable(c.khr_mutable);
      absl::StatusOr<Recording> recorded = engine.Record({c.backend});
      layer_.SetKhrMutable(false);
      RECQ_ASSERT_OK_AND_ASSIGN(Recording recording, std::move(recorded));
      for (int run = 0; run < 4; ++run) {
        Bindings b;
        b.Set("input", in[run % 2].mem());
        b.Set("prob", out[run % 2].mem());
        RECQ_ASSERT_OK(recording.Enqueue(context.queue(), b));
      }
      ASSERT_EQ(clFlush(context.queue()), CL_SUCCESS);
      // Destroyed with up to four runs pending.
    }
    // The recording's memory is gone; the outputs hold the last runs'.
    ExpectNear(testing::Download(out[0]), 0);
    ExpectNear(testing::Download(out[1]), 1);
  }
  EXPECT_EQ(layer_.LiveObjects(), before) << testing::LiveObjectsText(layer_.LiveObjects())
                                          << " vs " << testing::LiveObjectsText(before);
}

INSTANTIATE_TEST_SUITE_P(EveryBackend, TeardownTest,
                         ::testing::Values(Case{Backend::kReplay, false, "replay"},
                                           Case{Backend::kUnrecorded, false, "unrecorded"},
                                           Case{Backend::kQcom, false, "qcom"},
                                           Case{Backend::kKhrCommandBuffer, false, "khr"},
                                           Case{Backend::kKhrCommandBuffer, true, "khr_mutable"}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace recq
