// Add/Sub/Mul/Div against the CPU reference: same shapes and numpy
// broadcasting, with the second operand a graph input or a constant.
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "ops/op_test_util.h"
#include "recq/graph.h"

namespace recq::optest {
namespace {

struct ShapePair {
  std::string name;
  std::vector<int64_t> a;
  std::vector<int64_t> b;
};

// PrintTo names the case in gtest messages.
void PrintTo(const ShapePair& c, std::ostream* os) { *os << c.name; }

struct BinaryOp {
  std::string name;
  OpType op;
};

// PrintTo names the case in gtest messages.
void PrintTo(const BinaryOp& c, std::ostream* os) { *os << c.name; }

// Param: op, shapes, whether B is a constant (else a second graph input).
using BinaryParam = std::tuple<BinaryOp, ShapePair, bool>;

class BinaryTest : public ::testing::TestWithParam<BinaryParam> {};

TEST_P(BinaryTest, MatchesReference) {
  const auto& [op, shapes, b_constant] = GetParam();
  OpGraphBuilder b;
  TensorRef x = b.Input("a", shapes.a);
  // Divisors stay in [0.5, 2) so quotients are well conditioned; with values
  // near 0 a correctly rounded division could still be compared against a
  // huge, meaningless number.
  const float lo = op.op == OpType::kDiv ? 0.5f : -1.0f;
  const float hi = op.op == OpType::kDiv ? 2.0f : 1.0f;
  TensorRef z = b_constant ? b.Constant("b", shapes.b, lo, hi) : b.Input("b", shapes.b, lo, hi);
  TensorRef y = b.graph().AddNode(op.op, {x, z});
  // One float operation per element. +, - and * are correctly rounded in
  // OpenCL C as on the host: exact. OpenCL allows 2.5 ulp for a float
  // divide (unless built with -cl-fp32-correctly-rounded-divide-sqrt):
  // rtol 1e-6 (about 8 ulp).
  CheckOptions options = Exact();
  if (op.op == OpType::kDiv) options.rtol = 1e-6f;
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), options);
}

INSTANTIATE_TEST_SUITE_P(
    All, BinaryTest,
    ::testing::Combine(::testing::Values(BinaryOp{"Add", OpType::kAdd},
                                         BinaryOp{"Sub", OpType::kSub},
                                         BinaryOp{"Mul", OpType::kMul},
                                         BinaryOp{"Div", OpType::kDiv}),
                       ::testing::Values(ShapePair{"same", {2, 3, 4, 5}, {2, 3, 4, 5}},
                                         ShapePair{"same_odd", {37}, {37}},
                                         ShapePair{"trailing_vector", {2, 3, 4, 5}, {5}},
                                         ShapePair{"channel_vector", {2, 3, 4, 5}, {3, 1, 1}},
                                         ShapePair{"scalar_like", {2, 3, 4, 5}, {1}},
                                         ShapePair{"scalar_like_first", {1}, {2, 3, 4, 5}},
                                         ShapePair{"vector_first", {5}, {2, 3, 4, 5}},
                                         ShapePair{"bidirectional", {2, 1, 4, 1}, {1, 3, 1, 5}},
                                         ShapePair{"row_column", {4, 1}, {1, 6}},
                                         // binary_mid: a block of middle dims.
                                         ShapePair{"middle_block", {2, 3, 4, 5}, {3, 4, 1}},
                                         // binary_mid_rows' float16 body and its tail:
                                         // rows of 63 (3 vectors + 15) and 256.
                                         ShapePair{"se_scale_ragged", {2, 24, 7, 9}, {1, 24, 1, 1}},
                                         ShapePair{"se_scale_first", {1, 8, 1, 1}, {1, 8, 16, 16}},
                                         // Not one run (a 1 between): generic.
                                         ShapePair{"gapped", {2, 3, 4, 5}, {3, 1, 5}}),
                       ::testing::Bool()),
    [](const ::testing::TestParamInfo<BinaryParam>& info) {
      return std::get<0>(info.param).name + "_" + std::get<1>(info.param).name +
             (std::get<2>(info.param) ? "_const" : "_input");
    });

// Both operands are the same graph input.
TEST(BinarySameInputTest, MulBySelf) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {3, 7});
  TensorRef y = b.graph().AddNode(OpType::kMul, {x, x});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
}

// The residual add of a ResNet/MobileNetV2 block, with relu fused.
TEST(BinaryChainTest, ConvResidualAddRelu) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {1, 8, 6, 6});
  Conv2DAttrs attrs;
  attrs.pads = {1, 1, 1, 1};
  TensorRef c = b.graph().Conv2D(x, b.Constant("w", {8, 8, 3, 3}), b.Constant("bias", {8}), attrs);
  TensorRef y = b.graph().Add(c, x);
  b.graph().SetFusedActivation(y, {ActivationKind::kRelu, 0.0f, 0.0f});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y));
}

}  // namespace
}  // namespace recq::optest
