// Flatten, Reshape, Transpose, Concat and Identity against the CPU
// reference. They move data without arithmetic, so every case is exact.
#include <ostream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/op_test_util.h"
#include "recq/graph.h"

namespace recq::optest {
namespace {

struct FlattenCase {
  std::string name;
  std::vector<int64_t> x;
  int64_t axis;
};

// PrintTo names the case in gtest messages.
void PrintTo(const FlattenCase& c, std::ostream* os) { *os << c.name; }

class FlattenTest : public ::testing::TestWithParam<FlattenCase> {};

TEST_P(FlattenTest, MatchesReference) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", GetParam().x);
  TensorRef y = b.graph().Flatten(x, GetParam().axis);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
}

INSTANTIATE_TEST_SUITE_P(Shapes, FlattenTest,
                         ::testing::Values(FlattenCase{"axis0", {2, 3, 4, 5}, 0},
                                           FlattenCase{"axis1", {2, 3, 4, 5}, 1},
                                           FlattenCase{"axis2", {2, 3, 4, 5}, 2},
                                           FlattenCase{"axis_last", {2, 3, 4, 5}, -1},
                                           FlattenCase{"axis_rank", {2, 3, 4, 5}, 4},
                                           FlattenCase{"pooled_features", {1, 1024, 1, 1}, 1}),
                         [](const ::testing::TestParamInfo<FlattenCase>& info) {
                           return info.param.name;
                         });

struct ReshapeCase {
  std::string name;
  std::vector<int64_t> x;
  std::vector<int64_t> shape;
};

// PrintTo names the case in gtest messages.
void PrintTo(const ReshapeCase& c, std::ostream* os) { *os << c.name; }

class ReshapeTest : public ::testing::TestWithParam<ReshapeCase> {};

TEST_P(ReshapeTest, MatchesReference) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", GetParam().x);
  TensorRef y = b.graph().Reshape(x, GetParam().shape);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
}

INSTANTIATE_TEST_SUITE_P(Shapes, ReshapeTest,
                         ::testing::Values(ReshapeCase{"zero_then_infer", {2, 3, 4, 5}, {0, -1}},
                                           ReshapeCase{"infer_first", {2, 3, 4, 5}, {-1, 5}},
                                           ReshapeCase{"zero_middle", {2, 3, 4, 5}, {2, 0, 20}},
                                           ReshapeCase{"infer_middle", {2, 3, 4, 5}, {6, -1, 5}},
                                           ReshapeCase{"explicit", {2, 3, 4, 5}, {10, 12}},
                                           ReshapeCase{"to_rank1", {2, 3, 4, 5}, {-1}},
                                           ReshapeCase{"add_unit_dims", {6, 4}, {6, 1, 4, 1}}),
                         [](const ::testing::TestParamInfo<ReshapeCase>& info) {
                           return info.param.name;
                         });

struct TransposeCase {
  std::string name;
  std::vector<int64_t> x;
  std::vector<int64_t> perm;
};

// PrintTo names the case in gtest messages.
void PrintTo(const TransposeCase& c, std::ostream* os) { *os << c.name; }

class TransposeTest : public ::testing::TestWithParam<TransposeCase> {};

TEST_P(TransposeTest, MatchesReference) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", GetParam().x);
  TensorRef y = b.graph().AddNode(OpType::kTranspose, {x}, TransposeAttrs{GetParam().perm});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, TransposeTest,
    ::testing::Values(TransposeCase{"matrix", {5, 7}, {1, 0}},
                      TransposeCase{"reverse_default", {2, 3, 4}, {}},
                      TransposeCase{"nchw_to_nhwc", {2, 3, 4, 5}, {0, 2, 3, 1}},
                      TransposeCase{"nhwc_to_nchw", {2, 4, 5, 3}, {0, 3, 1, 2}},
                      TransposeCase{"rotate3", {2, 3, 4}, {2, 0, 1}},
                      TransposeCase{"identity_perm", {2, 3, 4}, {0, 1, 2}},
                      TransposeCase{"rank5", {2, 1, 3, 2, 4}, {4, 2, 0, 3, 1}},
                      // Attention's head split (rows of 20 that run on contiguously:
                      // a float16 vector and a tail on CPUs) and keys transposed
                      // (rows of 17 read 8 apart).
                      TransposeCase{"heads_split", {2, 19, 3, 20}, {0, 2, 1, 3}},
                      TransposeCase{"keys_transposed", {3, 17, 8}, {0, 2, 1}}),
    [](const ::testing::TestParamInfo<TransposeCase>& info) { return info.param.name; });

struct ConcatCase {
  std::string name;
  std::vector<std::vector<int64_t>> inputs;
  int64_t axis;
};

// PrintTo names the case in gtest messages.
void PrintTo(const ConcatCase& c, std::ostream* os) { *os << c.name; }

class ConcatTest : public ::testing::TestWithParam<ConcatCase> {};

TEST_P(ConcatTest, MatchesReference) {
  const ConcatCase& c = GetParam();
  OpGraphBuilder b;
  std::vector<TensorRef> inputs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    inputs.push_back(b.Input("x" + std::to_string(i), c.inputs[i]));
  }
  TensorRef y = b.graph().AddNode(OpType::kConcat, inputs, ConcatAttrs{c.axis});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ConcatTest,
    ::testing::Values(ConcatCase{"channels", {{1, 2, 4, 4}, {1, 3, 4, 4}, {1, 1, 4, 4}}, 1},
                      ConcatCase{"channels_batch2", {{2, 2, 3, 3}, {2, 5, 3, 3}}, 1},
                      // Rows of 105 and 70 elements: whole 16-element chunks
                      // and a tail per input and row.
                      ConcatCase{"ragged_chunks_batch2", {{2, 3, 5, 7}, {2, 2, 5, 7}}, 1},
                      ConcatCase{"batch", {{1, 3, 2, 2}, {2, 3, 2, 2}}, 0},
                      ConcatCase{"last_axis_negative", {{2, 3, 4}, {2, 3, 1}, {2, 3, 2}}, -1},
                      ConcatCase{"single_input", {{2, 3}}, 0},
                      ConcatCase{"matrix_rows", {{3, 5}, {4, 5}}, 0},
                      // Two dispatches of eight and three inputs (DenseNet).
                      ConcatCase{"eleven_inputs",
                                 {{1, 3, 2, 3},
                                  {1, 1, 2, 3},
                                  {1, 4, 2, 3},
                                  {1, 2, 2, 3},
                                  {1, 1, 2, 3},
                                  {1, 5, 2, 3},
                                  {1, 1, 2, 3},
                                  {1, 2, 2, 3},
                                  {1, 3, 2, 3},
                                  {1, 1, 2, 3},
                                  {1, 2, 2, 3}},
                                 1},
                      ConcatCase{"eight_inputs_batch2",
                                 {{2, 1, 5},
                                  {2, 2, 5},
                                  {2, 1, 5},
                                  {2, 3, 5},
                                  {2, 1, 5},
                                  {2, 1, 5},
                                  {2, 2, 5},
                                  {2, 1, 5}},
                                 1}),
    [](const ::testing::TestParamInfo<ConcatCase>& info) { return info.param.name; });

// Concat of a graph input and a constant.
TEST(ConcatMixedTest, InputAndConstant) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {1, 3, 2, 2});
  TensorRef y =
      b.graph().AddNode(OpType::kConcat, {x, b.Constant("c", {1, 2, 2, 2})}, ConcatAttrs{1});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
}

TEST(IdentityTest, MatchesReference) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {2, 3, 4});
  TensorRef y = b.graph().AddNode(OpType::kIdentity, {x});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
}

// Shape ops between compute ops alias their input; the data must survive.
TEST(ShapeOpsChainTest, ReluReshapeRelu) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {2, 3, 4, 5});
  TensorRef r = b.graph().Relu(x);
  TensorRef s = b.graph().Reshape(r, {0, -1});
  TensorRef f = b.graph().Flatten(b.graph().AddNode(OpType::kIdentity, {s}), 1);
  TensorRef y = b.graph().Clip(f, 0.0f, 0.5f);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
}

TEST(ShapeOpsChainTest, ReshapeAsOutputOfCompute) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {1, 8, 1, 1});
  TensorRef a = b.graph().Add(x, b.Constant("c", {8, 1, 1}));
  TensorRef y = b.graph().Reshape(a, {1, -1});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
}

// A graph whose output is its input, through Identity: needs a copy.
TEST(ShapeOpsChainTest, FlattenOfInputIsOutput) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {2, 3, 2, 2});
  TensorRef y = b.graph().Flatten(x, 2);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
}

}  // namespace
}  // namespace recq::optest
