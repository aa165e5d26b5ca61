// MobileNet V1 and V2 end to end on the device against the CPU reference, at
// a reduced resolution so the suite fits CI (the demo runs 224x224).
#include <cmath>

#include "gtest/gtest.h"
#include "recq/recq.h"
#include "reference/reference_executor.h"
#include "testing/test_env.h"
#include "tools/models/mobilenet.h"

namespace recq {
namespace {

using testing::Download;
using testing::NewTensor;
using testing::SharedContext;

// Softmax probabilities after ~30 layers of float32 sums in another order.
constexpr float kAtol = 1e-5f;
constexpr float kRtol = 1e-3f;

struct Case {
  const char* name;
  absl::StatusOr<Graph> (*build)(const models::MobileNetOptions&);
  int64_t resolution;
  bool optimize;
};

class MobileNetTest : public ::testing::TestWithParam<Case> {};

TEST_P(MobileNetTest, RecordOnceReplayWithNewInputsMatchesReference) {
  const Case& c = GetParam();
  models::MobileNetOptions options;
  options.resolution = c.resolution;
  options.num_classes = 100;
  RECQ_ASSERT_OK_AND_ASSIGN(Graph graph, c.build(options));
  EngineOptions engine_options;
  engine_options.optimize = c.optimize;
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), graph, engine_options));
  RECQ_ASSERT_OK_AND_ASSIGN(Recording rec, engine.Record());
  Tensor out = NewTensor(engine.outputs()[0].desc);
  for (uint64_t run = 0; run < 2; ++run) {
    auto host = reference::RandomTensor({1, 3, c.resolution, c.resolution}, 900 + run);
    Tensor in = NewTensor({host.shape}, host.data);
    RECQ_ASSERT_OK(out.Fill(NAN));
    Bindings b;
    b.Set("input", in);
    b.Set("prob", out);
    RECQ_ASSERT_OK(rec.Run(b));
    std::vector<float> got = Download(out);
    auto cmp = reference::Compare(got, testing::ReferenceOutput(graph, "input", host, "prob"),
                                  kAtol, kRtol);
    EXPECT_TRUE(cmp.ok()) << c.name << " run " << run << ": " << cmp.ToString();
    double sum = 0;
    for (float p : got) sum += p;
    EXPECT_NEAR(sum, 1.0, 1e-4);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Models, MobileNetTest,
    ::testing::Values(Case{"v1_96", models::BuildMobileNetV1, 96, true},
                      Case{"v1_64_unoptimized", models::BuildMobileNetV1, 64, false},
                      Case{"v2_96", models::BuildMobileNetV2, 96, true},
                      Case{"v2_64_unoptimized", models::BuildMobileNetV2, 64, false}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

TEST(MobileNetGraphTest, BadOptionsAreAClearError) {
  models::MobileNetOptions options;
  options.resolution = 100;
  auto g = models::BuildMobileNetV1(options);
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(g.status().message()).find("multiple of 32"), std::string::npos);
}

}  // namespace
}  // namespace recq
