// The element-wise math ops of engine/ops/elementwise_math.cc against the
// double-precision CPU reference, each over the part of its domain where
// it is defined and well conditioned.
#include <string>

#include "engine/ops/elementwise_math.h"
#include "gtest/gtest.h"
#include "ops/op_test_util.h"

namespace recq::optest {
namespace {

struct MathCase {
  const char* op;
  float lo, hi;  // the input range
  internal::MathAttrs attrs;
};

class ElementwiseMathTest : public ::testing::TestWithParam<MathCase> {};

TEST_P(ElementwiseMathTest, MatchesReference) {
  const MathCase& c = GetParam();
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {3, 5, 17}, c.lo, c.hi);
  TensorRef y = b.graph().AddNode(OpType(c.op), {x}, c.attrs);
  // OpenCL's built-in math is within 4 ulp (sin, cos, tan...) or 2-3 ulp
  // (exp), plus the float32 rounding of the input: 2e-6 absolute and 1e-5
  // relative cover it for outputs of magnitude up to ~10.
  CheckOptions options;
  options.atol = 2e-6f;
  options.rtol = 1e-5f;
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), options);
}

INSTANTIATE_TEST_SUITE_P(
    Functions, ElementwiseMathTest,
    ::testing::Values(MathCase{"Sin", -6.0f, 6.0f, {}}, MathCase{"Cos", -6.0f, 6.0f, {}},
                      MathCase{"Tan", -1.2f, 1.2f, {}}, MathCase{"Asin", -0.95f, 0.95f, {}},
                      MathCase{"Acos", -0.95f, 0.95f, {}}, MathCase{"Atan", -8.0f, 8.0f, {}},
                      MathCase{"Sinh", -3.0f, 3.0f, {}}, MathCase{"Cosh", -3.0f, 3.0f, {}},
                      MathCase{"Asinh", -8.0f, 8.0f, {}}, MathCase{"Acosh", 1.1f, 8.0f, {}},
                      MathCase{"Atanh", -0.9f, 0.9f, {}}, MathCase{"Round", -8.0f, 8.0f, {}},
                      MathCase{"Softsign", -8.0f, 8.0f, {}},
                      MathCase{"Elu", -4.0f, 4.0f, {0.7f, 0.0f}},
                      MathCase{"Selu", -4.0f, 4.0f, {1.6732632f, 1.050701f}},
                      MathCase{"Celu", -4.0f, 4.0f, {1.3f, 0.0f}},
                      MathCase{"ThresholdedRelu", -4.0f, 4.0f, {0.5f, 0.0f}},
                      MathCase{"Shrink", -4.0f, 4.0f, {0.5f, 0.25f}}),
    [](const auto& info) { return std::string(info.param.op); });

}  // namespace
}  // namespace recq::optest
