// Min, Max, Sum and Mean of one to three inputs, PRelu and Pow (with its
// fast paths for a constant exponent 2 or 0.5) against the CPU reference.
#include <ostream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/op_test_util.h"
#include "recq/graph.h"

namespace recq::optest {
namespace {

struct VariadicCase {
  std::string name;
  std::vector<std::vector<int64_t>> shapes;  // one per input
};

// PrintTo names the case in gtest messages.
void PrintTo(const VariadicCase& c, std::ostream* os) { *os << c.name; }

class VariadicTest : public ::testing::TestWithParam<std::tuple<const char*, VariadicCase>> {};

TEST_P(VariadicTest, MatchesReference) {
  const auto& [op, c] = GetParam();
  OpGraphBuilder b;
  std::vector<TensorRef> inputs;
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    inputs.push_back(b.Input("x" + std::to_string(i), c.shapes[i], -4.0f, 4.0f));
  }
  TensorRef y = b.graph().AddNode(OpType(op), inputs);
  // Min and Max select; Sum and Mean round once per input (and Mean once
  // more for its 1/n), where the reference sums in double.
  CheckOptions options = Exact();
  if (std::string(op) == "Sum" || std::string(op) == "Mean") {
    options.atol = 1e-6f;
    options.rtol = 1e-6f;
  }
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), options);
}

INSTANTIATE_TEST_SUITE_P(
    All, VariadicTest,
    ::testing::Combine(::testing::Values("Min", "Max", "Sum", "Mean"),
                       ::testing::Values(VariadicCase{"one", {{3, 5, 7}}},
                                         VariadicCase{"two_same", {{2, 3, 5, 7}, {2, 3, 5, 7}}},
                                         VariadicCase{"two_broadcast", {{2, 3, 5, 7}, {3, 1, 1}}},
                                         VariadicCase{"three", {{2, 3, 5, 7}, {7}, {2, 1, 5, 1}}},
                                         VariadicCase{"three_grow", {{5, 1}, {1, 7}, {3, 1, 1}}})),
    [](const ::testing::TestParamInfo<std::tuple<const char*, VariadicCase>>& info) {
      return std::string(std::get<0>(info.param)) + "_" + std::get<1>(info.param).name;
    });

class PReluTest : public ::testing::TestWithParam<std::vector<int64_t>> {};

TEST_P(PReluTest, MatchesReference) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {2, 4, 5, 7}, -4.0f, 4.0f);
  TensorRef slope = b.Constant("slope", GetParam(), 0.0f, 0.5f);
  TensorRef y = b.graph().AddNode(OpType("PRelu"), {x, slope});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
}

INSTANTIATE_TEST_SUITE_P(Slopes, PReluTest,
                         ::testing::Values(std::vector<int64_t>{1}, std::vector<int64_t>{4, 1, 1},
                                           std::vector<int64_t>{2, 4, 5, 7},
                                           std::vector<int64_t>{7}));

TEST(PowTest, TensorExponentMatchesReference) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {2, 3, 5, 7}, 0.25f, 4.0f);
  TensorRef e = b.Input("e", {5, 1}, -3.0f, 3.0f);
  TensorRef y = b.graph().AddNode(OpType("Pow"), {x, e});
  // OpenCL's pow is within 16 ulp.
  CheckOptions options;
  options.atol = 1e-6f;
  options.rtol = 1e-5f;
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), options);
}

// Exponents 2 and 0.5 take the x * x and sqrt fast paths; 3 the general
// kernel. Negative bases check x * x (pow's sign rule for even exponents).
TEST(PowTest, ConstantExponentsMatchReference) {
  for (float exponent : {2.0f, 0.5f, 3.0f}) {
    SCOPED_TRACE(exponent);
    OpGraphBuilder b;
    const float lo = exponent == 0.5f ? 0.0f : -4.0f;
    TensorRef x = b.Input("x", {1, 3, 5, 7}, lo, 4.0f);
    TensorRef e = b.graph().Constant("e", {}, {exponent});
    TensorRef y = b.graph().AddNode(OpType("Pow"), {x, e});
    CheckOptions options;
    options.atol = 1e-6f;
    options.rtol = 1e-5f;
    RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), options);
  }
}

}  // namespace
}  // namespace recq::optest
