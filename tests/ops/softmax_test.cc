// Softmax against the CPU reference: last and inner axes, with both the
// opset >= 13 (one axis) and the opset < 13 (coerce to 2-D) semantics.
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "ops/op_test_util.h"
#include "recq/graph.h"

namespace recq::optest {
namespace {

struct SoftmaxCase {
  std::string name;
  std::vector<int64_t> x;
  int64_t axis;
  bool coerce_to_2d;
  float lo;
  float hi;
};

// PrintTo names the case in gtest messages.
void PrintTo(const SoftmaxCase& c, std::ostream* os) { *os << c.name; }

SoftmaxCase Case(std::string name, std::vector<int64_t> x, int64_t axis, bool coerce_to_2d,
                 float lo = -1.0f, float hi = 1.0f) {
  return {std::move(name), std::move(x), axis, coerce_to_2d, lo, hi};
}

class SoftmaxTest : public ::testing::TestWithParam<SoftmaxCase> {};

TEST_P(SoftmaxTest, MatchesReference) {
  const SoftmaxCase& c = GetParam();
  OpGraphBuilder b;
  TensorRef x = b.Input("x", c.x, c.lo, c.hi);
  TensorRef y = b.graph().AddNode(OpType::kSoftmax, {x}, SoftmaxAttrs{c.axis, c.coerce_to_2d});
  // Outputs lie in [0, 1] and many are tiny, so the absolute tolerance is
  // 1e-6 rather than 1e-4 (which would accept any output below 1e-4); the
  // relative 1e-4 leaves room for OpenCL's 3-ulp exp and the float sum.
  CheckOptions options;
  options.atol = 1e-6f;
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), options);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, SoftmaxTest,
    ::testing::Values(Case("classifier_1x1000", {1, 1000}, -1, false),
                      Case("classifier_1x1000_opset11", {1, 1000}, 1, true),
                      Case("rows_4x10_axis1", {4, 10}, 1, false),
                      Case("large_logits", {3, 17}, -1, false, -80.0f, 80.0f),
                      Case("rank3_last", {2, 3, 4}, -1, false),
                      // Attention scores: rows of 40 (two float16
                      // vectors and a tail of 8 in softmax_rows_vec).
                      Case("attention_rows", {2, 3, 37, 40}, -1, false, -8.0f, 8.0f),
                      Case("rank3_axis1", {2, 3, 4}, 1, false),
                      Case("rank3_axis1_coerce", {2, 3, 4}, 1, true),
                      Case("rank4_axis1", {2, 3, 4, 5}, 1, false),
                      Case("rank4_axis1_coerce", {2, 3, 4, 5}, 1, true),
                      Case("rank4_axis2", {2, 3, 4, 5}, 2, false),
                      Case("rank4_axis0", {2, 3, 4, 5}, 0, false),
                      Case("rank4_axis0_coerce", {2, 3, 4, 5}, 0, true),
                      Case("rank4_last_coerce", {2, 3, 4, 5}, -1, true)),
    [](const ::testing::TestParamInfo<SoftmaxCase>& info) { return info.param.name; });

}  // namespace
}  // namespace recq::optest
