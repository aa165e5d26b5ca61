// The unary math ops of engine/ops/unary.cc against the CPU reference.
#include <ostream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/op_test_util.h"
#include "recq/graph.h"
#include "recq/math_op_attrs.h"

namespace recq::optest {
namespace {

struct UnaryCase {
  std::string name;
  OpType op;
  OpAttrs attrs;
  float lo, hi;  // the input range: where the function is defined and varies
  CheckOptions options;
};

// PrintTo names the case in gtest messages.
void PrintTo(const UnaryCase& c, std::ostream* os) { *os << c.name; }

// OpenCL's built-in math is within a few ulp (exp 3, log 3, tanh 5, erf 16):
// 1e-5 relative, with 1e-6 absolute near zero crossings.
// Floor and Ceil jump at integers: an input rounded to half can cross one
// (1.9999 rounds to 2), so they are held to the reference at fp32 only.
CheckOptions StepExact() {
  CheckOptions o = Exact();
  o.precisions = {EngineOptions::Precision::kFp32};
  return o;
}

CheckOptions Ulps() {
  CheckOptions o;
  o.atol = 1e-6f;
  o.rtol = 1e-5f;
  return o;
}

class UnaryTest : public ::testing::TestWithParam<UnaryCase> {};

TEST_P(UnaryTest, MatchesReference) {
  const UnaryCase& c = GetParam();
  for (const std::vector<int64_t>& shape :
       std::vector<std::vector<int64_t>>{{1, 3, 5, 7}, {37}, {2, 8, 16, 16}}) {
    SCOPED_TRACE(reference::ShapeString(shape));
    OpGraphBuilder b;
    TensorRef x = b.Input("x", shape, c.lo, c.hi);
    TensorRef y = b.graph().AddNode(c.op, {x}, c.attrs);
    RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), c.options);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Ops, UnaryTest,
    ::testing::Values(
        // sqrt is correctly rounded in OpenCL only with a build flag: 3 ulp.
        UnaryCase{"Sqrt", OpType("Sqrt"), {}, 0.0f, 9.0f, Ulps()},
        UnaryCase{"Exp", OpType("Exp"), {}, -8.0f, 8.0f, Ulps()},
        UnaryCase{"Log", OpType("Log"), {}, 0.01f, 100.0f, Ulps()},
        UnaryCase{"Tanh", OpType("Tanh"), {}, -5.0f, 5.0f, Ulps()},
        UnaryCase{"Neg", OpType("Neg"), {}, -8.0f, 8.0f, Exact()},
        UnaryCase{"Abs", OpType("Abs"), {}, -8.0f, 8.0f, Exact()},
        // A float divide is within 2.5 ulp.
        UnaryCase{"Reciprocal", OpType("Reciprocal"), {}, 0.25f, 4.0f, Ulps()},
        UnaryCase{"Floor", OpType("Floor"), {}, -8.0f, 8.0f, StepExact()},
        UnaryCase{"Ceil", OpType("Ceil"), {}, -8.0f, 8.0f, StepExact()},
        // Past |x| = 20 both tails are reached (softplus(x) = x, = e^x).
        UnaryCase{"Softplus", OpType("Softplus"), {}, -25.0f, 25.0f, Ulps()},
        UnaryCase{"Mish", OpType("Mish"), {}, -10.0f, 10.0f, Ulps()},
        UnaryCase{"Gelu", OpType("Gelu"), GeluAttrs{false}, -6.0f, 6.0f, Ulps()},
        UnaryCase{"GeluTanh", OpType("Gelu"), GeluAttrs{true}, -6.0f, 6.0f, Ulps()}),
    [](const ::testing::TestParamInfo<UnaryCase>& info) { return info.param.name; });

}  // namespace
}  // namespace recq::optest
