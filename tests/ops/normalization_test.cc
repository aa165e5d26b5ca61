// LayerNormalization, InstanceNormalization and GroupNormalization against
// the CPU reference, with rows short and long (the GPU family's work-group
// per row) and every parameter layout.
#include <ostream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/op_test_util.h"
#include "recq/graph.h"
#include "recq/math_op_attrs.h"

namespace recq::optest {
namespace {

struct NormCase {
  std::string name;
  OpType op;
  std::vector<int64_t> x;
  std::vector<int64_t> params;  // the shape of scale and bias
  NormalizationAttrs attrs;
  bool bias = true;
};

// PrintTo names the case in gtest messages.
void PrintTo(const NormCase& c, std::ostream* os) { *os << c.name; }

class NormalizationTest : public ::testing::TestWithParam<NormCase> {};

TEST_P(NormalizationTest, MatchesReference) {
  const NormCase& c = GetParam();
  OpGraphBuilder b;
  // An offset mean, so a one-pass variance would lose digits.
  TensorRef x = b.Input("x", c.x, 2.0f, 6.0f);
  TensorRef scale = b.Constant("scale", c.params, 0.5f, 2.0f);
  std::vector<TensorRef> inputs = {x, scale};
  if (c.bias) inputs.push_back(b.Constant("bias", c.params, -1.0f, 1.0f));
  TensorRef y = b.graph().AddNode(c.op, inputs, c.attrs);
  // Normalised values of magnitude ~2 after float mean and variance sums.
  CheckOptions options;
  options.atol = 5e-5f;
  options.rtol = 5e-5f;
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), options);
}

const OpType kLayer("LayerNormalization");
const OpType kInstance("InstanceNormalization");
const OpType kGroup("GroupNormalization");

NormalizationAttrs Layer(int64_t axis, float epsilon = 1e-5f) { return {axis, epsilon, 1, false}; }
NormalizationAttrs Group(int64_t groups, bool per_group) { return {-1, 1e-5f, groups, per_group}; }

INSTANTIATE_TEST_SUITE_P(
    All, NormalizationTest,
    ::testing::Values(NormCase{"layer_last", kLayer, {2, 5, 16}, {16}, Layer(-1)},
                      NormCase{"layer_two_axes", kLayer, {2, 5, 6, 7}, {6, 7}, Layer(2, 1e-3f)},
                      NormCase{"layer_all", kLayer, {3, 5, 7}, {3, 5, 7}, Layer(0)},
                      NormCase{"layer_no_bias", kLayer, {3, 37}, {37}, Layer(1), false},
                      NormCase{"layer_transformer", kLayer, {1, 49, 768}, {768}, Layer(-1)},
                      NormCase{"instance", kInstance, {2, 3, 5, 7}, {3}, {}},
                      NormCase{
                          "instance_large", kInstance, {1, 4, 40, 40}, {4}, {-1, 1e-3f, 1, false}},
                      NormCase{"group_per_channel", kGroup, {2, 6, 5, 7}, {6}, Group(3, false)},
                      NormCase{"group_per_group", kGroup, {2, 6, 5, 7}, {3}, Group(3, true)},
                      NormCase{"group_one", kGroup, {2, 4, 3, 3}, {4}, Group(1, false)},
                      NormCase{"group_each", kGroup, {2, 4, 9}, {4}, Group(4, false)}),
    [](const ::testing::TestParamInfo<NormCase>& info) { return info.param.name; });

// ConvNeXt's LayerNorm over channels: a Transpose from NCHW to channels
// last, then a LayerNorm over the last axis, and in its channels-first
// LayerNorms a Transpose back. With GPU kernels the LayerNorm reads (and
// writes) the rows strided in the NCHW tensors (no copy: one norm_rows
// dispatch); CPU kernels keep the copies. Both match the reference, fp32
// and fp16 storage, at batch 2 and with rows of 24 and of 96 channels, also
// with a channels-last input only written back; a Transpose that something
// else reads too stays.
struct ChannelsLastNormCase {
  std::string name;
  std::vector<int64_t> x;  // NCHW
  bool transpose_read_twice = false;
  bool transpose_back = false;
  // The input is x's channels-last form [N, H, W, C], given as it is: no
  // Transpose before the LayerNorm (only the one back, if any).
  bool input_channels_last = false;
};

class ChannelsLastLayerNormTest : public ::testing::TestWithParam<ChannelsLastNormCase> {};

TEST_P(ChannelsLastLayerNormTest, ReadsTheTransposeInPlaceAndMatchesReference) {
  const ChannelsLastNormCase& c = GetParam();
  auto build = [&c]() -> absl::StatusOr<OpGraph> {
    OpGraphBuilder b;
    TransposeAttrs perm;
    perm.perm = {0, 2, 3, 1};
    TensorRef t = c.input_channels_last ? b.Input("x", {c.x[0], c.x[2], c.x[3], c.x[1]}, 2.0f, 6.0f)
                                        : b.graph().AddNode(OpType::kTranspose,
                                                            {b.Input("x", c.x, 2.0f, 6.0f)}, perm);
    const std::vector<int64_t> channels = {c.x[1]};
    TensorRef y = b.graph().AddNode(
        kLayer, {t, b.Constant("scale", channels, 0.5f, 2.0f), b.Constant("bias", channels)},
        Layer(-1));
    if (c.transpose_read_twice) y = b.graph().AddNode(OpType::kAdd, {y, t});
    if (c.transpose_back) {
      TransposeAttrs back;
      back.perm = {0, 3, 1, 2};
      y = b.graph().AddNode(OpType::kTranspose, {y}, back);
    }
    return std::move(b).Build(y);
  };
  const absl::StatusOr<Context>& context = SharedContext();
  ASSERT_TRUE(context.ok()) << context.status();
  EngineOptions options;
  options.kernel_target = EngineOptions::KernelTarget::kGpu;
  options.tuning = EngineOptions::Tuning::kOff;
  absl::StatusOr<OpGraph> op = build();
  ASSERT_TRUE(op.ok()) << op.status();
  absl::StatusOr<Engine> engine = Engine::Compile(*context, op->graph, options);
  ASSERT_TRUE(engine.ok()) << engine.status();
  const std::vector<std::string> labels = engine->DispatchLabels();
  if (c.transpose_read_twice) {
    EXPECT_GT(labels.size(), 2u);
  } else {
    ASSERT_EQ(labels.size(), 1u);
    EXPECT_NE(labels[0].find("norm_rows"), std::string::npos) << labels[0];
  }
  CheckOptions check;
  check.atol = 5e-5f;
  check.rtol = 5e-5f;
  RECQ_EXPECT_MATCHES_REFERENCE(build(), check);
}

INSTANTIATE_TEST_SUITE_P(
    All, ChannelsLastLayerNormTest,
    ::testing::Values(ChannelsLastNormCase{"c24_batch2", {2, 24, 5, 7}},
                      ChannelsLastNormCase{"c96", {1, 96, 6, 6}},
                      ChannelsLastNormCase{"transpose_read_twice", {1, 24, 3, 5}, true},
                      ChannelsLastNormCase{"channels_first_batch2", {2, 24, 5, 7}, false, true},
                      ChannelsLastNormCase{"channels_first_c96", {1, 96, 4, 9}, false, true},
                      ChannelsLastNormCase{
                          "written_channels_first", {2, 24, 5, 7}, false, true, true}),
    [](const ::testing::TestParamInfo<ChannelsLastNormCase>& info) { return info.param.name; });

TEST(NormalizationInferenceTest, RejectsBadParameters) {
  struct Bad {
    OpType op;
    std::vector<int64_t> x, params;
    NormalizationAttrs attrs;
  };
  for (const Bad& c :
       {Bad{kLayer, {2, 5, 16}, {15}, Layer(-1)}, Bad{kInstance, {2, 3, 4, 4}, {4}, {}},
        Bad{kGroup, {2, 6, 4, 4}, {6}, Group(4, false)},
        Bad{kGroup, {2, 6, 4, 4}, {6}, Group(3, true)}}) {
    GraphBuilder b;
    TensorRef x = b.Input("x", c.x);
    TensorRef s = b.Constant("s", c.params, std::vector<float>(size_t(c.params[0]), 1.0f));
    TensorRef bias = b.Constant("b", c.params, std::vector<float>(size_t(c.params[0]), 0.0f));
    b.Output(b.AddNode(c.op, {x, s, bias}, c.attrs), "y");
    absl::StatusOr<Graph> g = std::move(b).Build();
    EXPECT_TRUE(absl::IsInvalidArgument(g.status())) << g.status();
  }
}

}  // namespace
}  // namespace recq::optest
