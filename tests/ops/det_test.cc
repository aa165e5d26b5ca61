// Det against the CPU reference (cofactor expansion) on single and batched
// matrices of sizes 1 to 6, in float32, float16 and float64, and a
// singular matrix (two equal rows) that must give 0 up to rounding.
#include <string>
#include <tuple>
#include <vector>

#include "engine/ops/det.h"
#include "gtest/gtest.h"
#include "ops/op_test_util.h"

namespace recq::optest {
namespace {

// Entries in [-1, 1): determinants of at most 6! = 720 products, in
// practice below 10 in magnitude; float32 elimination loses a few ulps per
// step. Not under fp16 storage: a determinant amplifies the rounding of
// its entries by the matrix's condition, which random matrices leave
// unbounded (the float16 cases check half data against a reference on the
// same rounded values).
CheckOptions DetTolerance(DataType t) {
  CheckOptions o;
  o.atol = t == DataType::kFloat16 ? 2e-2f : 1e-4f;
  o.rtol = t == DataType::kFloat16 ? 1e-2f : 1e-4f;
  if (t == DataType::kFloat64) o.atol = o.rtol = 1e-6f;
  o.precisions = {EngineOptions::Precision::kFp32};
  return o;
}

class DetTest : public ::testing::TestWithParam<std::tuple<std::vector<int64_t>, DataType>> {};

TEST_P(DetTest, MatchesReference) {
  const auto [shape, type] = GetParam();
  OpGraphBuilder b;
  TensorRef x = b.Input("x", shape, -1.0f, 1.0f, type);
  TensorRef y = b.graph().AddNode(internal::kDet, {x});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), DetTolerance(type));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, DetTest,
    ::testing::Combine(
        ::testing::Values(std::vector<int64_t>{1, 1}, std::vector<int64_t>{2, 2},
                          std::vector<int64_t>{3, 4, 4}, std::vector<int64_t>{2, 3, 6, 6}),
        ::testing::Values(DataType::kFloat32, DataType::kFloat16, DataType::kFloat64)),
    [](const auto& info) {
      std::string name;
      for (int64_t d : std::get<0>(info.param)) name += std::to_string(d) + "x";
      return name + DataTypeName(std::get<1>(info.param));
    });

TEST(DetTest, SingularMatrixGivesZero) {
  // [[r], [r], [s]]: a Concat of one random row twice and another row.
  OpGraphBuilder b;
  TensorRef r = b.Input("r", {1, 3}, -1.0f, 1.0f);
  TensorRef s = b.Input("s", {1, 3}, -1.0f, 1.0f);
  TensorRef m = b.graph().AddNode(OpType::kConcat, {r, r, s}, ConcatAttrs{0});
  TensorRef y = b.graph().AddNode(internal::kDet, {m});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), DetTolerance(DataType::kFloat32));
}

TEST(DetTest, RejectsNonSquareInput) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {3, 4});
  b.Output(b.AddNode(internal::kDet, {x}), "y");
  absl::Status s = std::move(b).Build().status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("expected float32, float16 or float64 [..., M, M]"), std::string::npos)
      << s;
}

}  // namespace
}  // namespace recq::optest
