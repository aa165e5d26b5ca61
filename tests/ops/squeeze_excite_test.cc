// SqueezeExcite against the reference of the ops it replaces: each case is
// an exported squeeze-and-excitation block (GlobalAveragePool, Conv,
// activation, Conv, gate, Mul), compiled with the passes on (the
// squeeze_excite pattern makes one SqueezeExcite node: se_squeeze and
// se_excite) and off, on both kernel families. The shapes reach the
// kernels' branches: one channel per pass and several, slices of more
// channels than a pass holds, channels split along their elements (the GPU
// family's large pools), R beyond one work-group's items, batch 2, and on
// CPUs blocks of 16 hidden values and channels with and without a partial
// last block.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/op_test_util.h"
#include "recq/graph.h"

namespace recq::optest {
namespace {

struct SeCase {
  std::string name;
  std::vector<int64_t> x;  // [N, C, H, W]
  int64_t r;
  // MobileNet V3's ReLU and HardSigmoid, or EfficientNet's SiLU (as
  // Mul(z, Sigmoid(z))) and Sigmoid.
  bool efficientnet;
  bool bias;
  bool gate_first;  // Mul(s, x) as torchvision writes it
};

TensorRef Activated(OpGraphBuilder& b, TensorRef z, bool silu) {
  if (silu) return b.graph().AddNode(OpType::kMul, {z, b.graph().AddNode(OpType::kSigmoid, {z})});
  return b.graph().Relu(z);
}

class SqueezeExciteTest : public ::testing::TestWithParam<SeCase> {};

TEST_P(SqueezeExciteTest, MatchesTheUnfusedBlock) {
  const SeCase& k = GetParam();
  const int64_t c = k.x[1];
  OpGraphBuilder b;
  TensorRef x = b.Input("x", k.x, 0.0f, 2.0f);
  TensorRef p = b.graph().GlobalAveragePool(x);
  TensorRef b1 = k.bias ? b.Constant("b1", {k.r}) : TensorRef{};
  TensorRef b2 = k.bias ? b.Constant("b2", {c}) : TensorRef{};
  TensorRef z1 = b.graph().Conv2D(p, b.Constant("w1", {k.r, c, 1, 1}, -0.5f, 0.5f), b1, {});
  TensorRef a1 = Activated(b, z1, k.efficientnet);
  TensorRef z2 = b.graph().Conv2D(a1, b.Constant("w2", {c, k.r, 1, 1}, -0.5f, 0.5f), b2, {});
  ActivationAttrs hard{1.0f / 6.0f, 0.5f};
  TensorRef s = k.efficientnet ? b.graph().AddNode(OpType::kSigmoid, {z2})
                               : b.graph().AddNode(OpType::kHardSigmoid, {z2}, hard);
  TensorRef y = k.gate_first ? b.graph().AddNode(OpType::kMul, {s, x})
                             : b.graph().AddNode(OpType::kMul, {x, s});
  // Sums of up to C * HW terms of magnitude <= 1 in float32.
  CheckOptions options;
  options.atol = 2e-5f;
  options.rtol = 1e-4f;
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), options);
}

INSTANTIATE_TEST_SUITE_P(
    Blocks, SqueezeExciteTest,
    ::testing::Values(SeCase{"mobilenet_7x7", {1, 48, 7, 7}, 12, false, true, true},
                      SeCase{"efficientnet_28x28", {1, 40, 28, 28}, 10, true, true, false},
                      SeCase{"wide_and_deep_r", {2, 600, 5, 3}, 300, false, false, true},
                      SeCase{"large_pixels", {1, 8, 72, 72}, 2, true, false, true},
                      SeCase{"one_pixel", {2, 70, 1, 1}, 17, false, true, false},
                      SeCase{"whole_blocks", {1, 64, 4, 8}, 16, true, true, true}),
    [](const ::testing::TestParamInfo<SeCase>& info) { return info.param.name; });

}  // namespace
}  // namespace recq::optest
