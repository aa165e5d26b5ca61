// The reductions against the CPU reference, over axis sets that reach each
// kernel: one contiguous run of axes (reduce_axis, and reduce_rows on the
// GPU family when it is innermost and long), scattered axes
// (reduce_generic), every axis, none (noop_with_empty_axes), with and
// without keepdims.
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "ops/op_test_util.h"
#include "recq/graph.h"
#include "recq/math_op_attrs.h"

namespace recq::optest {
namespace {

struct AxesCase {
  std::string name;
  std::vector<int64_t> shape;
  ReduceAttrs attrs;
};

// PrintTo names the case in gtest messages.
void PrintTo(const AxesCase& c, std::ostream* os) { *os << c.name; }

class ReduceTest : public ::testing::TestWithParam<std::tuple<const char*, AxesCase>> {};

TEST_P(ReduceTest, MatchesReference) {
  const auto& [op_name, c] = GetParam();
  const std::string op(op_name);
  OpGraphBuilder b;
  // Positive inputs for the log of a sum; values near 1 keep a product of
  // thousands of them in range.
  float lo = -2.0f, hi = 2.0f;
  if (op == "ReduceLogSum") lo = 0.0f;
  if (op == "ReduceProd") lo = 0.98f, hi = 1.02f;
  TensorRef x = b.Input("x", c.shape, lo, hi);
  TensorRef y = b.graph().AddNode(OpType(op_name), {x}, c.attrs);
  // float sums of up to 12544 terms against double: a few 1e-5 relative.
  CheckOptions options;
  options.atol = 2e-5f;
  options.rtol = 5e-5f;
  // fp16 storage: every factor of a product carries its own half rounding
  // (up to 2^-11 relative), so R factors drift up to R * 2^-11.
  if (op == "ReduceProd") options.fp16_rtol = 0.1f;
  if (op == "ReduceMax" || op == "ReduceMin") options = Exact();
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), options);
}

ReduceAttrs Axes(std::vector<int64_t> axes, bool keepdims = true, bool noop = false) {
  return ReduceAttrs{std::move(axes), keepdims, noop};
}

INSTANTIATE_TEST_SUITE_P(
    All, ReduceTest,
    ::testing::Combine(
        ::testing::Values("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                          "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum",
                          "ReduceLogSumExp"),
        ::testing::Values(
            AxesCase{"last", {2, 3, 5, 7}, Axes({-1})},
            AxesCase{"middle", {2, 3, 5, 7}, Axes({1}, false)},
            AxesCase{"first", {6, 5, 7}, Axes({0})},
            AxesCase{"spatial", {1, 24, 56, 56}, Axes({2, 3})},  // SE block: long rows
            AxesCase{"spatial_drop", {2, 5, 9, 11}, Axes({-2, -1}, false)},
            AxesCase{"scattered", {2, 3, 5, 7}, Axes({0, 2})},
            AxesCase{"scattered_drop", {4, 3, 5, 7}, Axes({3, 1}, false)},
            AxesCase{"all", {3, 5, 7}, Axes({})}, AxesCase{"all_drop", {3, 5, 70}, Axes({}, false)},
            AxesCase{"noop", {3, 5, 7}, Axes({}, true, true)},
            AxesCase{"unit_dims", {1, 5, 1, 7}, Axes({0, 2})})),
    [](const ::testing::TestParamInfo<std::tuple<const char*, AxesCase>>& info) {
      return std::string(std::get<0>(info.param)) + "_" + std::get<1>(info.param).name;
    });

TEST(ReduceInferenceTest, RejectsBadAxes) {
  for (const std::vector<int64_t>& axes : std::vector<std::vector<int64_t>>{{3}, {-4}, {1, -2}}) {
    GraphBuilder b;
    TensorRef x = b.Input("x", {2, 3, 4});
    TensorRef y = b.AddNode(OpType("ReduceMean"), {x}, ReduceAttrs{axes, true, false});
    b.Output(y, "y");
    absl::StatusOr<Graph> g = std::move(b).Build();
    EXPECT_TRUE(absl::IsInvalidArgument(g.status())) << g.status();
  }
}

}  // namespace
}  // namespace recq::optest
