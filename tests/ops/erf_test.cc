// Erf against the CPU reference, on both kernel families.
#include <vector>

#include "gtest/gtest.h"
#include "ops/op_test_util.h"
#include "recq/graph.h"

namespace recq::optest {
namespace {

class ErfTest : public ::testing::TestWithParam<std::vector<int64_t>> {};

TEST_P(ErfTest, MatchesReference) {
  OpGraphBuilder b;
  // [-4, 4) covers the linear middle and both saturated tails.
  TensorRef x = b.Input("x", GetParam(), -4.0f, 4.0f);
  TensorRef y = b.graph().AddNode(OpType("Erf"), {x});
  // OpenCL's erf is accurate to 16 ulp; |erf| <= 1.
  CheckOptions options;
  options.atol = 1e-6f;
  options.rtol = 1e-5f;
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), options);
}

INSTANTIATE_TEST_SUITE_P(Shapes, ErfTest,
                         ::testing::Values(std::vector<int64_t>{37},
                                           std::vector<int64_t>{2, 3, 5, 7},
                                           std::vector<int64_t>{1, 64, 14, 14}));

}  // namespace
}  // namespace recq::optest
