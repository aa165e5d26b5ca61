// Gather with indices from a graph input (int64 or int32; BERT's embedding
// lookup) over data of every element type, against the reference.
// Indices are drawn past both ends of the axis: negative ones wrap once,
// ones still out of range are clamped (gather.cc). Constant indices over
// non-float data too.
#include <string>
#include <tuple>

#include "engine/ops/layout_attrs.h"
#include "engine/ops/typed.h"
#include "gtest/gtest.h"
#include "ops/op_test_util.h"

namespace recq::optest {
namespace {

using internal::GatherAttrs;

constexpr DataType kAllTypes[] = {DataType::kFloat32, DataType::kFloat16, DataType::kInt64,
                                  DataType::kInt32,   DataType::kInt8,    DataType::kUInt8,
                                  DataType::kBool};

class GatherRuntimeTest : public ::testing::TestWithParam<std::tuple<DataType, DataType>> {};

TEST_P(GatherRuntimeTest, EmbeddingLookup) {
  const auto [type, index_type] = GetParam();
  OpGraphBuilder b;
  // A [vocab 11, hidden 6] table and [batch 2, sequence 5] ids, ids in
  // [-14, 14): wrapped, in range and clamped at both ends.
  TensorRef table = b.Input("table", {11, 6}, -50.0f, 50.0f, type);
  TensorRef ids = b.Input("ids", {2, 5}, -14.0f, 14.0f, index_type);
  TensorRef y = b.graph().AddNode(OpType("Gather"), {table, ids}, GatherAttrs{0, {}, {}});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
}

TEST_P(GatherRuntimeTest, InnerAxisAndScalarIndex) {
  const auto [type, index_type] = GetParam();
  {
    OpGraphBuilder b;
    TensorRef x = b.Input("x", {3, 7, 4}, -50.0f, 50.0f, type);
    TensorRef idx = b.Input("idx", {3, 2}, -8.0f, 8.0f, index_type);
    TensorRef y = b.graph().AddNode(OpType("Gather"), {x, idx}, GatherAttrs{-2, {}, {}});
    RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
  }
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {3, 7, 4}, -50.0f, 50.0f, type);
  TensorRef idx = b.Input("idx", {}, -4.0f, 4.0f, index_type);
  TensorRef y = b.graph().AddNode(OpType("Gather"), {x, idx}, GatherAttrs{2, {}, {}});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
}

INSTANTIATE_TEST_SUITE_P(TypesAndIndexTypes, GatherRuntimeTest,
                         ::testing::Combine(::testing::ValuesIn(kAllTypes),
                                            ::testing::Values(DataType::kInt64, DataType::kInt32)),
                         [](const auto& info) {
                           return std::string(DataTypeName(std::get<0>(info.param))) + "_by_" +
                                  DataTypeName(std::get<1>(info.param));
                         });

class GatherConstantIndicesTest : public ::testing::TestWithParam<DataType> {};

TEST_P(GatherConstantIndicesTest, AnyElementType) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {5, 4, 3}, -50.0f, 50.0f, GetParam());
  TensorRef y =
      b.graph().AddNode(OpType("Gather"), {x}, GatherAttrs{1, {3, 3, 0, 1, 2, 0}, {2, 3}});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
}

// Planes of 16 or more elements per index go to gather_planes (a
// ShuffleNet channel shuffle's Gather): 20-element planes of two outer
// rows, indices repeated and out of order.
TEST_P(GatherConstantIndicesTest, WholePlanes) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {2, 6, 4, 5}, -50.0f, 50.0f, GetParam());
  TensorRef y = b.graph().AddNode(OpType("Gather"), {x}, GatherAttrs{1, {5, 0, 3, 3}, {4}});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
}

INSTANTIATE_TEST_SUITE_P(Types, GatherConstantIndicesTest, ::testing::ValuesIn(kAllTypes),
                         [](const auto& info) { return std::string(DataTypeName(info.param)); });

TEST(GatherRuntimeTest, IndicesMustBeIntegers) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {4, 3});
  TensorRef idx = b.Input("idx", {2});
  b.Output(b.AddNode(OpType("Gather"), {x, idx}, GatherAttrs{0, {}, {}}), "y");
  absl::Status s = std::move(b).Build().status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("expected int64 or int32"), std::string::npos) << s;
}

}  // namespace
}  // namespace recq::optest

namespace recq::optest {
namespace {

// GatherElements: indices smaller than data off the axis, drawn past both
// ends of the axis (wrapped and clamped), every element type.
class GatherElementsTest : public ::testing::TestWithParam<std::tuple<DataType, DataType>> {};

TEST_P(GatherElementsTest, AxesAndRanks) {
  const auto [type, index_type] = GetParam();
  const struct {
    std::vector<int64_t> data, indices;
    int64_t axis;
  } cases[] = {{{5, 4}, {3, 4}, 0}, {{3, 6, 5}, {2, 9, 4}, 1}, {{2, 3, 4, 7}, {2, 3, 2, 5}, -1}};
  for (const auto& c : cases) {
    OpGraphBuilder b;
    TensorRef x = b.Input("x", c.data, -50.0f, 50.0f, type);
    const float dim = float(c.data[c.axis < 0 ? c.axis + c.data.size() : c.axis]);
    TensorRef idx = b.Input("idx", c.indices, -dim - 2.0f, dim + 2.0f, index_type);
    TensorRef y = b.graph().AddNode(internal::kGatherElements, {x, idx},
                                    internal::GatherElementsAttrs{c.axis});
    RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
  }
}

INSTANTIATE_TEST_SUITE_P(Types, GatherElementsTest,
                         ::testing::Combine(::testing::Values(DataType::kFloat32,
                                                              DataType::kFloat16, DataType::kInt64,
                                                              DataType::kUInt8, DataType::kBool),
                                            ::testing::Values(DataType::kInt64, DataType::kInt32)),
                         [](const auto& info) {
                           return std::string(DataTypeName(std::get<0>(info.param))) + "_by_" +
                                  DataTypeName(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace recq::optest

namespace recq::optest {
namespace {

// GatherND: element, row and slice lookups, with batch_dims 0 and 1,
// indices drawn past both ends (wrapped and clamped), several element types.
class GatherNDTest : public ::testing::TestWithParam<DataType> {};

TEST_P(GatherNDTest, RowsSlicesAndBatches) {
  const struct {
    std::vector<int64_t> data, indices;
    int64_t batch_dims;
  } cases[] = {{{4, 5, 3}, {6, 3}, 0},
               {{4, 5, 3}, {2, 3, 1}, 0},
               {{4, 5, 3}, {4, 2, 1}, 1},
               {{2, 6, 5, 3}, {2, 4, 2}, 1}};
  for (const auto& c : cases) {
    OpGraphBuilder b;
    TensorRef x = b.Input("x", c.data, -50.0f, 50.0f, GetParam());
    // Every indexed dim here is at least 3: [-5, 5) wraps and clamps.
    TensorRef idx = b.Input("idx", c.indices, -5.0f, 5.0f, DataType::kInt64);
    TensorRef y =
        b.graph().AddNode(internal::kGatherND, {x, idx}, internal::GatherNDAttrs{c.batch_dims});
    RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
  }
}

INSTANTIATE_TEST_SUITE_P(Types, GatherNDTest,
                         ::testing::Values(DataType::kFloat32, DataType::kFloat16, DataType::kInt32,
                                           DataType::kBool),
                         [](const auto& info) { return std::string(DataTypeName(info.param)); });

}  // namespace
}  // namespace recq::optest
