// 2-D ConvTranspose against the CPU reference: strides, pads (asymmetric and
// negative), dilations, output_padding, groups, bias, a fused activation.
#include <string>
#include <utility>
#include <vector>

#include "engine/ops/layout_attrs.h"
#include "gtest/gtest.h"
#include "ops/op_test_util.h"
#include "recq/graph.h"

namespace recq::optest {
namespace {

using internal::ConvTransposeAttrs;

void ExpectConvTranspose(std::vector<int64_t> x, std::vector<int64_t> w, bool bias,
                         ConvTransposeAttrs a, ActivationKind act = ActivationKind::kNone) {
  OpGraphBuilder b;
  TensorRef in = b.Input("x", x);
  TensorRef wt = b.Constant("w", w);
  std::vector<TensorRef> inputs = {in, wt};
  if (bias) inputs.push_back(b.Constant("b", {w[1] * a.groups}));
  TensorRef y = b.graph().AddNode(OpType("ConvTranspose"), inputs, a);
  if (act == ActivationKind::kRelu) y = b.graph().Relu(y);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y));
}

TEST(ConvTransposeTest, Stride2Upsampling) {
  ConvTransposeAttrs a;
  a.strides = {2, 2};
  a.pads = {1, 1, 1, 1};
  a.output_padding = {1, 1};
  ExpectConvTranspose({1, 16, 7, 9}, {16, 8, 3, 3}, true, a);
  a.pads = {0, 0, 0, 0};
  a.output_padding = {0, 0};
  ExpectConvTranspose({2, 5, 4, 6}, {5, 3, 4, 4}, false, a, ActivationKind::kRelu);
}

TEST(ConvTransposeTest, DilationsAsymmetricStridesAndPads) {
  ConvTransposeAttrs a;
  a.strides = {3, 2};
  a.dilations = {2, 1};
  a.pads = {2, 0, 1, 1};
  ExpectConvTranspose({1, 3, 5, 6}, {3, 2, 3, 2}, true, a);
  a.pads = {0, -1, 0, 0};  // output_shape larger than the natural size
  ExpectConvTranspose({1, 3, 5, 6}, {3, 2, 3, 2}, false, a);
}

TEST(ConvTransposeTest, Groups) {
  ConvTransposeAttrs a;
  a.groups = 4;
  a.strides = {2, 2};
  ExpectConvTranspose({1, 8, 5, 5}, {8, 3, 3, 3}, true, a);
  a.groups = 8;  // depthwise
  ExpectConvTranspose({1, 8, 6, 5}, {8, 1, 2, 2}, false, a);
}

}  // namespace
}  // namespace recq::optest
