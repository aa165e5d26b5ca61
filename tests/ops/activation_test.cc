// Element-wise activation ops against the CPU reference, and activations
// fused into an Add.
#include <ostream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/op_test_util.h"
#include "recq/graph.h"

namespace recq::optest {
namespace {

struct ActivationCase {
  std::string name;
  OpType op;
  ActivationAttrs attrs;
  // Exact for ops that only select or clamp their input; Sigmoid and the
  // hard variants do float arithmetic (exp, divide, multiply-add) whose last
  // bit may legitimately differ from the double-precision reference.
  bool exact;
};

// PrintTo names the case in gtest messages.
void PrintTo(const ActivationCase& c, std::ostream* os) { *os << c.name; }

const std::vector<std::vector<int64_t>>& Shapes() {
  static const auto* shapes =
      new std::vector<std::vector<int64_t>>{{1, 3, 5, 7},  // odd sizes: no vector-width multiple
                                            {2, 16},
                                            {37},
                                            {2, 8, 16, 16}};
  return *shapes;
}

class ActivationTest : public ::testing::TestWithParam<ActivationCase> {};

TEST_P(ActivationTest, MatchesReference) {
  const ActivationCase& c = GetParam();
  for (const std::vector<int64_t>& shape : Shapes()) {
    SCOPED_TRACE(reference::ShapeString(shape));
    OpGraphBuilder b;
    // [-8, 8) covers every region: below/above the clip and hard-sigmoid
    // knees, and sigmoid's flat tails.
    TensorRef x = b.Input("x", shape, -8.0f, 8.0f);
    TensorRef y = b.graph().AddNode(c.op, {x}, c.attrs);
    RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), c.exact ? Exact() : CheckOptions{});
  }
}

INSTANTIATE_TEST_SUITE_P(
    Ops, ActivationTest,
    ::testing::Values(ActivationCase{"Relu", OpType::kRelu, {}, true},
                      ActivationCase{"Clip_0_6", OpType::kClip, {0.0f, 6.0f}, true},
                      ActivationCase{"Clip_m05_05", OpType::kClip, {-0.5f, 0.5f}, true},
                      ActivationCase{"LeakyRelu_01", OpType::kLeakyRelu, {0.1f, 0.0f}, false},
                      ActivationCase{"Sigmoid", OpType::kSigmoid, {}, false},
                      ActivationCase{"HardSigmoid_onnx", OpType::kHardSigmoid, {0.2f, 0.5f}, false},
                      ActivationCase{
                          "HardSigmoid_sixth", OpType::kHardSigmoid, {1.0f / 6.0f, 0.5f}, false},
                      ActivationCase{"HardSwish", OpType::kHardSwish, {}, false},
                      ActivationCase{"Silu", OpType("Silu"), {}, false}),
    [](const ::testing::TestParamInfo<ActivationCase>& info) { return info.param.name; });

// Activations set directly on an Add node (GraphBuilder::SetFusedActivation).
struct FusedCase {
  std::string name;
  Activation activation;
};

// PrintTo names the case in gtest messages.
void PrintTo(const FusedCase& c, std::ostream* os) { *os << c.name; }

class FusedActivationTest : public ::testing::TestWithParam<FusedCase> {};

TEST_P(FusedActivationTest, OnAdd) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {2, 4, 5, 5}, -4.0f, 4.0f);
  TensorRef z = b.Input("z", {2, 4, 5, 5}, -4.0f, 4.0f);
  TensorRef y = b.graph().Add(x, z);
  b.graph().SetFusedActivation(y, GetParam().activation);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y));
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, FusedActivationTest,
    ::testing::Values(FusedCase{"Relu", {ActivationKind::kRelu, 0.0f, 0.0f}},
                      FusedCase{"Clip", {ActivationKind::kClip, 0.0f, 6.0f}},
                      FusedCase{"LeakyRelu", {ActivationKind::kLeakyRelu, 0.2f, 0.0f}},
                      FusedCase{"Silu", {ActivationKind::kSilu, 0.0f, 0.0f}},
                      FusedCase{"Sigmoid", {ActivationKind::kSigmoid, 0.0f, 0.0f}},
                      FusedCase{"HardSigmoid", {ActivationKind::kHardSigmoid, 0.2f, 0.5f}},
                      FusedCase{"HardSwish", {ActivationKind::kHardSwish, 0.0f, 0.0f}},
                      FusedCase{"Gelu", {ActivationKind::kGelu, 0.0f, 0.0f}},
                      FusedCase{"GeluTanh", {ActivationKind::kGeluTanh, 0.0f, 0.0f}}),
    [](const ::testing::TestParamInfo<FusedCase>& info) { return info.param.name; });

// A standalone activation node after a compute node: the optimizer fuses it.
TEST(ActivationPassesTest, AddThenHardSwish) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {1, 8, 6, 6}, -6.0f, 6.0f);
  TensorRef y = b.graph().Add(x, b.Constant("c", {8, 1, 1}, -2.0f, 2.0f));
  TensorRef z = b.graph().AddNode(OpType::kHardSwish, {y}, ActivationAttrs{});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(z));
}

}  // namespace
}  // namespace recq::optest
