// ScatterND against the reference: index rows naming elements, rows and
// whole slices, negative indices, every reduction, data of several element
// types, indices from a graph input or a constant.
#include <string>
#include <tuple>

#include "engine/ops/typed.h"
#include "gtest/gtest.h"
#include "ops/op_test_util.h"

namespace recq::optest {
namespace {

using internal::ScatterNDAttrs;
using internal::ScatterReduction;

// Index rows for data [4, 5, 6] drawn in [-4, 4): each row of length k
// names a slice (negative indices wrap; dims 5 and 6 are never exceeded).
struct Case {
  std::string name;
  std::vector<int64_t> indices;  // [..., k]
  std::vector<int64_t> updates;
};

const Case kCases[] = {
    {"elements", {7, 3}, {7}},
    {"rows", {2, 3, 2}, {2, 3, 6}},
    {"slices", {3, 1}, {3, 5, 6}},
};

class ScatterNDTest
    : public ::testing::TestWithParam<std::tuple<Case, ScatterReduction, DataType>> {};

TEST_P(ScatterNDTest, MatchesReference) {
  const auto& [c, reduction, type] = GetParam();
  OpGraphBuilder b;
  TensorRef data = b.Input("data", {4, 5, 6}, -8.0f, 8.0f, type);
  TensorRef indices = b.Input("indices", c.indices, -4.0f, 4.0f, DataType::kInt64);
  TensorRef updates = b.Input("updates", c.updates, -8.0f, 8.0f, type);
  TensorRef y =
      b.graph().AddNode(internal::kScatterND, {data, indices, updates}, ScatterNDAttrs{reduction});
  // Duplicate rows combine in order, so results are exact.
  CheckOptions options = Exact();
  if (type == DataType::kFloat16) {
    options.atol = 1e-2f;
    options.rtol = 1e-3f;
  }
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), options);
}

std::string CaseName(
    const ::testing::TestParamInfo<std::tuple<Case, ScatterReduction, DataType>>& info) {
  static const char* kNames[] = {"none", "add", "mul", "max", "min"};
  return std::get<0>(info.param).name + "_" + kNames[static_cast<int>(std::get<1>(info.param))] +
         "_" + DataTypeName(std::get<2>(info.param));
}

INSTANTIATE_TEST_SUITE_P(
    Reductions, ScatterNDTest,
    ::testing::Combine(::testing::ValuesIn(kCases),
                       ::testing::Values(ScatterReduction::kAdd, ScatterReduction::kMul,
                                         ScatterReduction::kMax, ScatterReduction::kMin),
                       ::testing::Values(DataType::kFloat32)),
    CaseName);

INSTANTIATE_TEST_SUITE_P(
    Types, ScatterNDTest,
    ::testing::Combine(::testing::Values(kCases[1]),
                       ::testing::Values(ScatterReduction::kAdd, ScatterReduction::kMax),
                       ::testing::Values(DataType::kFloat16, DataType::kInt32, DataType::kInt64)),
    CaseName);

// Without a reduction duplicate rows are undefined (ONNX), so rows must be distinct: constant index
// rows (each slice once, negative and positive), the updates and data from inputs.
class ScatterNDNoneTest : public ::testing::TestWithParam<DataType> {};

TEST_P(ScatterNDNoneTest, UniqueRowsNone) {
  OpGraphBuilder b;
  TensorRef data = b.Input("data", {4, 5, 6}, -8.0f, 8.0f, GetParam());
  TensorRef indices =
      b.graph().Constant("indices", {3, 2}, HostData(std::vector<int64_t>{0, 1, -1, 4, 2, -5}));
  TensorRef updates = b.Input("updates", {3, 6}, -8.0f, 8.0f, GetParam());
  TensorRef y = b.graph().AddNode(internal::kScatterND, {data, indices, updates},
                                  ScatterNDAttrs{ScatterReduction::kNone});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
}

INSTANTIATE_TEST_SUITE_P(Types, ScatterNDNoneTest,
                         ::testing::Values(DataType::kFloat32, DataType::kFloat16, DataType::kInt64,
                                           DataType::kInt8, DataType::kBool),
                         [](const auto& info) { return std::string(DataTypeName(info.param)); });

TEST(ScatterNDShapeTest, RejectsUpdatesOfTheWrongShape) {
  GraphBuilder b;
  TensorRef data = b.Input("data", {4, 5});
  TensorRef indices = b.Input("indices", {3, 1}, DataType::kInt64);
  TensorRef updates = b.Input("updates", {3, 4});
  b.Output(b.AddNode(internal::kScatterND, {data, indices, updates}, ScatterNDAttrs{}), "y");
  absl::Status s = std::move(b).Build().status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("expected [3,5]"), std::string::npos) << s;
}

}  // namespace
}  // namespace recq::optest
