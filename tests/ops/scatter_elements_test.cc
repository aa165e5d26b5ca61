// ScatterElements against the CPU reference for every element type and
// reduction, with indices drawn so that duplicates along the axis are
// frequent (their order matters for the reductions). Exact: integers wrap
// identically, and float sums of a few terms are taken in the same order.
#include <string>
#include <tuple>

#include "engine/ops/scatter_elements.h"
#include "gtest/gtest.h"
#include "ops/op_test_util.h"

namespace recq::optest {
namespace {

const char* ReductionName(int code) {
  static const char* const kNames[] = {"none", "add", "mul", "max", "min"};
  return kNames[code];
}

class ScatterElementsTest
    : public ::testing::TestWithParam<std::tuple<DataType, int, int64_t, DataType>> {};

TEST_P(ScatterElementsTest, MatchesReference) {
  const auto [t, reduction, axis, idx_type] = GetParam();
  OpGraphBuilder b;
  const float lo = t == DataType::kUInt8 ? 0.0f : -20.0f;
  TensorRef data = b.Input("data", {4, 5, 3}, lo, 20.0f, t);
  // Indices in [-5, 5): negative ones wrap; the axis has length 4 or 5.
  TensorRef indices =
      b.Input("indices", {3, 4, 2}, axis == 1 ? -5.0f : -4.0f, axis == 1 ? 5.0f : 4.0f, idx_type);
  TensorRef updates = b.Input("updates", {3, 4, 2}, lo, 20.0f, t);
  TensorRef y = b.graph().AddNode(internal::kScatterElements, {data, indices, updates},
                                  internal::ScatterElementsAttrs{axis, reduction});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
}

INSTANTIATE_TEST_SUITE_P(
    TypesAndReductions, ScatterElementsTest,
    ::testing::Combine(::testing::Values(DataType::kFloat32, DataType::kFloat16, DataType::kInt64,
                                         DataType::kInt32, DataType::kInt8, DataType::kUInt8),
                       ::testing::Values(0, 1, 2, 3, 4), ::testing::Values<int64_t>(0, 1),
                       ::testing::Values(DataType::kInt64, DataType::kInt32)),
    [](const auto& info) {
      return std::string(DataTypeName(std::get<0>(info.param))) + "_" +
             ReductionName(std::get<1>(info.param)) + "_axis" +
             std::to_string(std::get<2>(info.param)) + "_" + DataTypeName(std::get<3>(info.param));
    });

TEST(ScatterElementsTest, BoolDataWithoutReduction) {
  OpGraphBuilder b;
  TensorRef data = b.Input("data", {6, 4}, -1.0f, 1.0f, DataType::kBool);
  TensorRef indices = b.Input("indices", {3, 4}, -6.0f, 6.0f, DataType::kInt64);
  TensorRef updates = b.Input("updates", {3, 4}, -1.0f, 1.0f, DataType::kBool);
  TensorRef y = b.graph().AddNode(internal::kScatterElements, {data, indices, updates},
                                  internal::ScatterElementsAttrs{0, 0});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
}

}  // namespace
}  // namespace recq::optest
