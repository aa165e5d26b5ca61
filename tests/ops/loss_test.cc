// NegativeLogLikelihoodLoss against the CPU reference: every reduction,
// with and without a weight per class and an ignore_index (one inside
// [0, C) that random labels hit, and -1 with labels drawn from [-1, C)),
// on (N, C) and (N, C, d1, d2) scores, int64 and int32 labels, and float16
// and float64 scores.
#include <string>
#include <tuple>

#include "engine/ops/loss.h"
#include "gtest/gtest.h"
#include "ops/op_test_util.h"

namespace recq::optest {
namespace {

using internal::LossReduction;
using internal::NllLossAttrs;

// Sums of at most 240 terms of magnitude <= 8 (scores in [-4, 0), weights
// below 2): float32 rounding stays well inside 2e-4 + 1e-4 relative.
CheckOptions LossTolerance() {
  CheckOptions o;
  o.atol = 2e-4f;
  o.rtol = 1e-4f;
  return o;
}

enum class Ignore { kNone, kInRange, kNegative };

// (reduction, weighted, ignore, rank-4 scores)
class NllLossTest : public ::testing::TestWithParam<std::tuple<LossReduction, bool, Ignore, bool>> {
};

TEST_P(NllLossTest, MatchesReference) {
  const auto [reduction, weighted, ignore, nd] = GetParam();
  constexpr int64_t kClasses = 5;
  const std::vector<int64_t> x_shape =
      nd ? std::vector<int64_t>{3, kClasses, 4, 5} : std::vector<int64_t>{24, kClasses};
  std::vector<int64_t> t_shape = x_shape;
  t_shape.erase(t_shape.begin() + 1);
  OpGraphBuilder b;
  TensorRef x = b.Input("x", x_shape, -4.0f, 0.0f);
  // Labels in [0, C), or [-1, C) where -1 is the ignored label.
  TensorRef t = b.Input("t", t_shape, ignore == Ignore::kNegative ? -1.0f : 0.0f,
                        static_cast<float>(kClasses), DataType::kInt64);
  std::vector<TensorRef> inputs = {x, t};
  if (weighted) inputs.push_back(b.Input("w", {kClasses}, 0.1f, 2.0f));
  NllLossAttrs a;
  a.reduction = reduction;
  a.has_ignore_index = ignore != Ignore::kNone;
  a.ignore_index = ignore == Ignore::kNegative ? -1 : 2;
  TensorRef y = b.graph().AddNode(internal::kNegativeLogLikelihoodLoss, inputs, a);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), LossTolerance());
}

std::string FormName(
    const ::testing::TestParamInfo<std::tuple<LossReduction, bool, Ignore, bool>>& info) {
  static const char* const kReductions[] = {"none", "sum", "mean"};
  static const char* const kIgnores[] = {"", "_ii", "_negative_ii"};
  return std::string(kReductions[static_cast<int>(std::get<0>(info.param))]) +
         (std::get<1>(info.param) ? "_weight" : "") +
         kIgnores[static_cast<int>(std::get<2>(info.param))] +
         (std::get<3>(info.param) ? "_nd" : "");
}

INSTANTIATE_TEST_SUITE_P(
    Forms, NllLossTest,
    ::testing::Combine(::testing::Values(LossReduction::kNone, LossReduction::kSum,
                                         LossReduction::kMean),
                       ::testing::Bool(),
                       ::testing::Values(Ignore::kNone, Ignore::kInRange, Ignore::kNegative),
                       ::testing::Bool()),
    FormName);

// Other element types: int32 labels, float16 and float64 scores (mean with
// a weight and an ignore_index, the form with the most arithmetic).
class NllLossTypesTest : public ::testing::TestWithParam<std::tuple<DataType, DataType>> {};

TEST_P(NllLossTypesTest, MatchesReference) {
  const auto [scores, labels] = GetParam();
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {6, 4, 7}, -4.0f, 0.0f, scores);
  TensorRef t = b.Input("t", {6, 7}, 0.0f, 4.0f, labels);
  TensorRef w = b.Input("w", {4}, 0.1f, 2.0f, scores);
  NllLossAttrs a;
  a.has_ignore_index = true;
  a.ignore_index = 3;
  TensorRef y = b.graph().AddNode(internal::kNegativeLogLikelihoodLoss, {x, t, w}, a);
  CheckOptions o = LossTolerance();
  if (scores == DataType::kFloat16) {
    // Half sums of 42 terms: 11 significant bits per addition.
    o.atol = 2e-2f;
    o.rtol = 1e-2f;
  }
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), o);
}

INSTANTIATE_TEST_SUITE_P(Types, NllLossTypesTest,
                         ::testing::Values(std::make_tuple(DataType::kFloat32, DataType::kInt32),
                                           std::make_tuple(DataType::kFloat16, DataType::kInt64),
                                           std::make_tuple(DataType::kFloat64, DataType::kInt64)),
                         [](const auto& info) {
                           return std::string(DataTypeName(std::get<0>(info.param))) + "_" +
                                  DataTypeName(std::get<1>(info.param));
                         });

TEST(NllLossTest, RejectsMismatchedTargetAndWeight) {
  struct Case {
    std::vector<int64_t> target;
    DataType target_type;
    std::vector<int64_t> weight;
    const char* message;
  };
  for (const Case& c : {Case{{3, 5}, DataType::kInt64, {}, "target is"},
                        Case{{3, 4}, DataType::kFloat32, {}, "target is"},
                        Case{{3, 4}, DataType::kInt64, {6}, "weight is"}}) {
    GraphBuilder b;
    TensorRef x = b.Input("x", {3, 5, 4});
    std::vector<TensorRef> inputs = {x, b.Input("t", c.target, c.target_type)};
    if (!c.weight.empty()) inputs.push_back(b.Input("w", c.weight));
    b.Output(b.AddNode(internal::kNegativeLogLikelihoodLoss, inputs, NllLossAttrs{}), "y");
    absl::Status s = std::move(b).Build().status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_NE(s.message().find(c.message), std::string::npos) << s;
  }
}

}  // namespace
}  // namespace recq::optest
