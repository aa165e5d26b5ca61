// AffineConcat against the reference of the ops it replaces: a channel
// Concat read only by a BatchNorm (and a ReLU), as DenseNet's layers have
// it, compiled with the passes on (the affine_concat pattern makes one
// AffineConcat with the ReLU fused) and off, on both kernel families: two
// inputs, eleven (two dispatches of up to eight), planes of fewer than 16
// elements, of exactly 16, and wider ones that a chunk of 16 crosses,
// batch 2.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/op_test_util.h"
#include "recq/graph.h"

namespace recq::optest {
namespace {

struct AffineCase {
  std::string name;
  int64_t n;
  std::vector<int64_t> channels;  // of each input
  int64_t h, w;
};

class AffineConcatTest : public ::testing::TestWithParam<AffineCase> {};

TEST_P(AffineConcatTest, MatchesTheConcatAndTheBatchNorm) {
  const AffineCase& k = GetParam();
  OpGraphBuilder b;
  std::vector<TensorRef> parts;
  int64_t c = 0;
  for (size_t i = 0; i < k.channels.size(); ++i) {
    parts.push_back(b.Input("x" + std::to_string(i), {k.n, k.channels[i], k.h, k.w}));
    c += k.channels[i];
  }
  TensorRef cat = b.graph().AddNode(OpType::kConcat, parts, ConcatAttrs{1});
  TensorRef bn =
      b.graph().BatchNorm(cat, b.Constant("scale", {c}, 0.5f, 1.5f), b.Constant("bias", {c}),
                          b.Constant("mean", {c}), b.Constant("var", {c}, 0.5f, 2.0f), 1e-5f);
  TensorRef y = b.graph().Relu(bn);
  CheckOptions options;
  options.atol = 1e-6f;
  options.rtol = 1e-5f;
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), options);
}

INSTANTIATE_TEST_SUITE_P(
    Concats, AffineConcatTest,
    ::testing::Values(AffineCase{"two", 1, {4, 6}, 5, 5},
                      AffineCase{"eleven", 2, {3, 1, 2, 5, 1, 1, 4, 2, 3, 1, 2}, 6, 3},
                      AffineCase{"wide_planes", 1, {2, 3}, 16, 17},
                      AffineCase{"planes_of_16", 2, {3, 2, 5}, 4, 4}),
    [](const ::testing::TestParamInfo<AffineCase>& info) { return info.param.name; });

}  // namespace
}  // namespace recq::optest
