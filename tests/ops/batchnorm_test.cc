// BatchNorm (inference) against the CPU reference, standalone (not folded:
// there is no producer conv) and with a fused activation.
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "ops/op_test_util.h"
#include "recq/graph.h"

namespace recq::optest {
namespace {

struct BatchNormCase {
  std::string name;
  std::vector<int64_t> x;
  float epsilon;
  Activation fused;
};

// PrintTo names the case in gtest messages.
void PrintTo(const BatchNormCase& c, std::ostream* os) { *os << c.name; }

BatchNormCase Case(std::string name, std::vector<int64_t> x, float epsilon = 1e-5f,
                   Activation fused = {}) {
  return {std::move(name), std::move(x), epsilon, fused};
}

class BatchNormTest : public ::testing::TestWithParam<BatchNormCase> {};

TEST_P(BatchNormTest, MatchesReference) {
  const BatchNormCase& c = GetParam();
  const int64_t channels = c.x[1];
  OpGraphBuilder b;
  TensorRef x = b.Input("x", c.x, -2.0f, 2.0f);
  // Variances are positive, as trained ones are; a small one magnifies
  // (x - mean), which the default tolerance still covers at |y| <~ 20.
  TensorRef y = b.graph().BatchNorm(x, b.Constant("scale", {channels}, 0.5f, 1.5f),
                                    b.Constant("bias", {channels}), b.Constant("mean", {channels}),
                                    b.Constant("var", {channels}, 0.05f, 2.0f), c.epsilon);
  if (c.fused.kind != ActivationKind::kNone) b.graph().SetFusedActivation(y, c.fused);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, BatchNormTest,
    ::testing::Values(Case("nchw", {1, 4, 5, 5}), Case("batch2_odd", {2, 3, 7, 9}),
                      Case("eps_1em3", {1, 8, 4, 4}, 1e-3f), Case("spatial_1x1", {1, 16, 1, 1}),
                      Case("rank2", {3, 6}), Case("rank3", {2, 5, 7}),
                      // Rows of 63 (3 float16 vectors and a tail of 15) and 256.
                      Case("rows_ragged", {2, 6, 7, 9}), Case("rows_whole", {1, 5, 16, 16}),
                      Case("fused_relu", {1, 4, 6, 6}, 1e-5f, {ActivationKind::kRelu, 0.0f, 0.0f}),
                      Case("fused_relu6", {2, 4, 3, 5}, 1e-5f,
                           {ActivationKind::kClip, 0.0f, 6.0f})),
    [](const ::testing::TestParamInfo<BatchNormCase>& info) { return info.param.name; });

// BatchNorm whose parameters are graph inputs rather than constants.
TEST(BatchNormInputsTest, ParametersAsInputs) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {2, 3, 4, 4});
  TensorRef y = b.graph().BatchNorm(x, b.Input("scale", {3}), b.Input("bias", {3}),
                                    b.Input("mean", {3}), b.Input("var", {3}, 0.1f, 1.0f));
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y));
}

}  // namespace
}  // namespace recq::optest
