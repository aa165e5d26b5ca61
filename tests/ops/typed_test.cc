// Cast between every pair of element types, and Where with a bool mask over
// values of several types, against the CPU reference (exact: conversions and
// selections have one right answer).
#include <tuple>

#include "engine/ops/typed.h"
#include "gtest/gtest.h"
#include "ops/op_test_util.h"

namespace recq::optest {
namespace {

constexpr DataType kAllTypes[] = {DataType::kFloat32, DataType::kFloat16, DataType::kInt64,
                                  DataType::kInt32,   DataType::kInt8,    DataType::kUInt8,
                                  DataType::kBool,    DataType::kFloat64};

class CastTest : public ::testing::TestWithParam<std::tuple<DataType, DataType>> {};

TEST_P(CastTest, MatchesReference) {
  const auto [from, to] = GetParam();
  OpGraphBuilder b;
  // Wide enough to saturate int8 and uint8, with fractions and negatives.
  TensorRef x = b.Input("x", {3, 5, 7}, -300.0f, 300.0f, from);
  TensorRef y = b.graph().AddNode(internal::kCast, {x}, internal::CastAttrs{to});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
}

INSTANTIATE_TEST_SUITE_P(AllPairs, CastTest,
                         ::testing::Combine(::testing::ValuesIn(kAllTypes),
                                            ::testing::ValuesIn(kAllTypes)),
                         [](const auto& info) {
                           return std::string(DataTypeName(std::get<0>(info.param))) + "_to_" +
                                  DataTypeName(std::get<1>(info.param));
                         });

// The 16-bit and unsigned integer types, to and from float32 and int64.
INSTANTIATE_TEST_SUITE_P(
    WideTypes, CastTest,
    ::testing::Combine(::testing::Values(DataType::kFloat32, DataType::kInt64, DataType::kUInt16,
                                         DataType::kInt16, DataType::kUInt32, DataType::kUInt64),
                       ::testing::Values(DataType::kUInt16, DataType::kInt16, DataType::kUInt32,
                                         DataType::kUInt64)),
    [](const auto& info) {
      return std::string(DataTypeName(std::get<0>(info.param))) + "_to_" +
             DataTypeName(std::get<1>(info.param));
    });

class WhereTest : public ::testing::TestWithParam<DataType> {};

TEST_P(WhereTest, BroadcastsTheMaskAndBothValues) {
  OpGraphBuilder b;
  TensorRef cond = b.Input("cond", {2, 1, 4}, -1.0f, 1.0f, DataType::kBool);
  TensorRef a = b.Input("a", {3, 1}, -100.0f, 100.0f, GetParam());
  TensorRef c = b.Input("b", {2, 3, 4}, -100.0f, 100.0f, GetParam());
  TensorRef y = b.graph().AddNode(internal::kWhere, {cond, a, c});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
}

TEST_P(WhereTest, SameShapes) {
  OpGraphBuilder b;
  TensorRef cond = b.Input("cond", {4, 33}, -1.0f, 1.0f, DataType::kBool);
  TensorRef a = b.Input("a", {4, 33}, -100.0f, 100.0f, GetParam());
  TensorRef c = b.Input("b", {4, 33}, -100.0f, 100.0f, GetParam());
  TensorRef y = b.graph().AddNode(internal::kWhere, {cond, a, c});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
}

INSTANTIATE_TEST_SUITE_P(Types, WhereTest, ::testing::ValuesIn(kAllTypes),
                         [](const auto& info) { return std::string(DataTypeName(info.param)); });

TEST(WhereTest, ConditionMustBeBool) {
  GraphBuilder b;
  TensorRef cond = b.Input("cond", {4});
  TensorRef a = b.Input("a", {4});
  b.Output(b.AddNode(internal::kWhere, {cond, a, a}), "y");
  absl::Status s = std::move(b).Build().status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("expected bool"), std::string::npos) << s;
}

TEST(TypedOpsTest, FloatOnlyOpsRejectOtherTypes) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {4}, DataType::kInt64);
  b.Output(b.Relu(x), "y");
  absl::Status s = std::move(b).Build().status();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("float32 only"), std::string::npos) << s;
}

}  // namespace
}  // namespace recq::optest
