// Gemm and MatMul against the CPU reference: every transpose combination,
// alpha/beta, bias shapes ([N], [M,N], [M,1], [1,N], scalar-like, none),
// B as a constant (FullyConnected) or an input, 2-D and batched MatMul.
#include <memory>
#include <ostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "ops/op_test_util.h"
#include "recq/graph.h"

namespace recq::optest {
namespace {

struct GemmShape {
  std::string name;
  int64_t m, k, n;
};

// PrintTo names the case in gtest messages.
void PrintTo(const GemmShape& c, std::ostream* os) { *os << c.name; }

enum class Bias { kNone, kN, kMN, kM1, k1N, kScalarLike };

struct GemmVariant {
  std::string name;
  bool trans_a;
  bool trans_b;
  float alpha;
  float beta;
  Bias bias;
  bool b_constant;
};

// PrintTo names the case in gtest messages.
void PrintTo(const GemmVariant& c, std::ostream* os) { *os << c.name; }

using GemmParam = std::tuple<GemmShape, GemmVariant>;

class GemmTest : public ::testing::TestWithParam<GemmParam> {};

TEST_P(GemmTest, MatchesReference) {
  const auto& [s, v] = GetParam();
  OpGraphBuilder b;
  TensorRef a =
      b.Input("a", v.trans_a ? std::vector<int64_t>{s.k, s.m} : std::vector<int64_t>{s.m, s.k});
  const std::vector<int64_t> b_shape =
      v.trans_b ? std::vector<int64_t>{s.n, s.k} : std::vector<int64_t>{s.k, s.n};
  TensorRef w = v.b_constant ? b.Constant("b", b_shape) : b.Input("b", b_shape);
  TensorRef c;
  switch (v.bias) {
    case Bias::kNone:
      break;
    case Bias::kN:
      c = b.Constant("c", {s.n});
      break;
    case Bias::kMN:
      c = b.Input("c", {s.m, s.n});
      break;
    case Bias::kM1:
      c = b.Constant("c", {s.m, 1});
      break;
    case Bias::k1N:
      c = b.Constant("c", {1, s.n});
      break;
    case Bias::kScalarLike:
      c = b.Constant("c", {1});
      break;
  }
  GemmAttrs attrs;
  attrs.alpha = v.alpha;
  attrs.beta = v.beta;
  attrs.trans_a = v.trans_a;
  attrs.trans_b = v.trans_b;
  TensorRef y = b.graph().Gemm(a, w, c, attrs);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y));
}

INSTANTIATE_TEST_SUITE_P(
    All, GemmTest,
    ::testing::Combine(
        ::testing::Values(GemmShape{"5x7x3", 5, 7, 3}, GemmShape{"16x32x8", 16, 32, 8},
                          GemmShape{"3x17x11", 3, 17, 11}, GemmShape{"1x256x10", 1, 256, 10},
                          // The GPU family's local-memory tiles
                          // (gemm_local_32x32, gemm_local_64x64).
                          GemmShape{"20x40x18", 20, 40, 18}, GemmShape{"50x33x60", 50, 33, 60},
                          // ... with K split (the epilogue in
                          // matmul_local_reduce), float4 loads or not.
                          GemmShape{"24x30x260", 24, 30, 260}, GemmShape{"28x32x256", 28, 32, 256}),
        ::testing::Values(
            GemmVariant{"nn_biasN", false, false, 1.0f, 1.0f, Bias::kN, true},
            GemmVariant{"tn_biasN", true, false, 1.0f, 1.0f, Bias::kN, false},
            GemmVariant{"nt_biasN_fc", false, true, 1.0f, 1.0f, Bias::kN, true},
            GemmVariant{"tt_biasMN", true, true, 1.0f, 1.0f, Bias::kMN, false},
            GemmVariant{"nn_alpha_beta_biasMN", false, false, 0.5f, -2.0f, Bias::kMN, false},
            GemmVariant{"nt_alpha_beta_biasM1", false, true, 1.5f, 0.25f, Bias::kM1, true},
            GemmVariant{"tn_alpha_bias1N", true, false, -1.0f, 1.0f, Bias::k1N, true},
            GemmVariant{"tt_scalar_bias", true, true, 1.0f, 3.0f, Bias::kScalarLike, true},
            GemmVariant{"nn_nobias", false, false, 1.0f, 1.0f, Bias::kNone, false},
            GemmVariant{"nt_alpha_nobias", false, true, 0.75f, 1.0f, Bias::kNone, true},
            GemmVariant{"nn_beta0", false, false, 1.0f, 0.0f, Bias::kN, true})),
    [](const ::testing::TestParamInfo<GemmParam>& info) {
      return "m" + std::get<0>(info.param).name + "_" + std::get<1>(info.param).name;
    });

// The MobileNet classifier: [1,1024] x [1000,1024]^T + [1000], fused relu
// on a smaller copy.
TEST(GemmModelTest, FullyConnected1024x1000) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {1, 1024});
  TensorRef y = b.graph().FullyConnected(x, b.Constant("w", {1000, 1024}, -0.1f, 0.1f),
                                         b.Constant("bias", {1000}));
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y));
}

TEST(GemmModelTest, FullyConnectedFusedRelu) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {4, 64});
  TensorRef y = b.graph().FullyConnected(x, b.Constant("w", {32, 64}), b.Constant("bias", {32}));
  b.graph().SetFusedActivation(y, {ActivationKind::kRelu, 0.0f, 0.0f});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y));
}

// Batch-1 Linear layers on GPUs: rows of 4096 or more go to gemm_rowdot
// (VGG's and AlexNet's classifiers), shorter ones stay on gemm_gemv (its
// dispatches are labelled matmul_gemv); both match the reference there.
TEST(GemmGpuSelectionTest, LongRowsGoToRowdot) {
  for (const auto& [k, want] : {std::pair<int64_t, std::string>{4096, "/gemm_rowdot"},
                                std::pair<int64_t, std::string>{1024, "/matmul_gemv"}}) {
    SCOPED_TRACE("K " + std::to_string(k));
    auto build = [k = k] {
      OpGraphBuilder b;
      TensorRef x = b.Input("x", {1, k});
      TensorRef y = b.graph().FullyConnected(x, b.Constant("w", {48, k}), b.Constant("bias", {48}));
      b.graph().SetFusedActivation(y, {ActivationKind::kRelu, 0.0f, 0.0f});
      return std::move(b).Build(y);
    };
    absl::StatusOr<OpGraph> op = build();
    ASSERT_TRUE(op.ok()) << op.status();
    EngineOptions options;
    options.kernel_target = EngineOptions::KernelTarget::kGpu;
    options.tuning = EngineOptions::Tuning::kOff;
    const absl::StatusOr<Context>& context = SharedContext();
    ASSERT_TRUE(context.ok()) << context.status();
    absl::StatusOr<Engine> engine = Engine::Compile(*context, op->graph, options);
    ASSERT_TRUE(engine.ok()) << engine.status();
    const std::vector<std::string> labels = engine->DispatchLabels();
    ASSERT_FALSE(labels.empty());
    const std::string& label = labels.front();
    EXPECT_TRUE(label.size() >= want.size() &&
                label.compare(label.size() - want.size(), want.size(), want) == 0)
        << label;
    CheckOptions check;
    check.kernel_targets = {EngineOptions::KernelTarget::kGpu};
    RECQ_EXPECT_MATCHES_REFERENCE(build(), check);
  }
}

// The CPU family's matrix-vector Gemm (matmul_gemv_cpu.cl), forced: one to
// four rows, N not a multiple of the 16- or 8-column panel, K odd or below
// the 4-step, B [K, N] or transposed (a Linear layer's [N, K]), C of every
// broadcast, alpha, beta and a fused activation.
struct GemvCpuCase {
  std::string name;
  int64_t m, k, n;
  bool trans_b;
  float alpha, beta;
  Bias bias;
  ActivationKind act;
};

void PrintTo(const GemvCpuCase& c, std::ostream* os) { *os << c.name; }

class GemmGemvCpuTest : public ::testing::TestWithParam<GemvCpuCase> {};

TEST_P(GemmGemvCpuTest, MatchesReference) {
  const GemvCpuCase& c = GetParam();
  OpGraphBuilder b;
  TensorRef a = b.Input("a", {c.m, c.k});
  TensorRef w =
      b.Constant("b", c.trans_b ? std::vector<int64_t>{c.n, c.k} : std::vector<int64_t>{c.k, c.n});
  TensorRef bias;
  if (c.bias == Bias::kN) bias = b.Constant("c", {c.n});
  if (c.bias == Bias::kMN) bias = b.Input("c", {c.m, c.n});
  if (c.bias == Bias::kM1) bias = b.Constant("c", {c.m, 1});
  GemmAttrs attrs;
  attrs.alpha = c.alpha;
  attrs.beta = c.beta;
  attrs.trans_b = c.trans_b;
  TensorRef y = b.graph().Gemm(a, w, bias, attrs);
  if (c.act != ActivationKind::kNone) b.graph().SetFusedActivation(y, {c.act, 0.0f, 0.0f});
  CheckOptions options;
  auto forced = std::make_shared<int>(0);
  options.choose_variant = ForceVariant(OpType::kGemm, "gemm_gemv_cpu", forced);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), options);
  EXPECT_GT(*forced, 0) << "gemm_gemv_cpu does not fit " << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, GemmGemvCpuTest,
    ::testing::Values(
        GemvCpuCase{"m1_fc_biasN", 1, 37, 45, true, 1.0f, 1.0f, Bias::kN, ActivationKind::kNone},
        GemvCpuCase{"m1_nn_relu", 1, 64, 33, false, 1.0f, 1.0f, Bias::kN, ActivationKind::kRelu},
        GemvCpuCase{"m2_k3_alpha_beta_biasMN", 2, 3, 19, true, 0.5f, -2.0f, Bias::kMN,
                    ActivationKind::kNone},
        GemvCpuCase{"m3_biasM1_sigmoid", 3, 41, 24, false, 1.5f, 0.25f, Bias::kM1,
                    ActivationKind::kSigmoid},
        GemvCpuCase{"m4_nobias_n7", 4, 29, 7, true, 0.75f, 1.0f, Bias::kNone,
                    ActivationKind::kNone}),
    [](const ::testing::TestParamInfo<GemvCpuCase>& info) { return info.param.name; });

struct MatMulCase {
  std::string name;
  std::vector<int64_t> a;
  std::vector<int64_t> b;
  bool b_constant;
};

// PrintTo names the case in gtest messages.
void PrintTo(const MatMulCase& c, std::ostream* os) { *os << c.name; }

class MatMulTest : public ::testing::TestWithParam<MatMulCase> {};

TEST_P(MatMulTest, MatchesReference) {
  const MatMulCase& c = GetParam();
  OpGraphBuilder b;
  TensorRef x = b.Input("a", c.a);
  TensorRef w = c.b_constant ? b.Constant("b", c.b) : b.Input("b", c.b);
  TensorRef y = b.graph().AddNode(OpType::kMatMul, {x, w});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, MatMulTest,
    ::testing::Values(MatMulCase{"2d", {4, 6}, {6, 5}, false},
                      MatMulCase{"2d_const", {7, 33}, {33, 9}, true},
                      MatMulCase{"batched", {3, 4, 5}, {3, 5, 2}, false},
                      MatMulCase{"batched_4d", {2, 3, 4, 5}, {2, 3, 5, 6}, false},
                      MatMulCase{"batch_broadcast_b2d", {2, 3, 4, 5}, {5, 6}, true},
                      MatMulCase{"batch_broadcast_a2d", {4, 5}, {3, 5, 2}, false},
                      MatMulCase{"batch_broadcast_both", {2, 1, 4, 5}, {1, 3, 5, 2}, false},
                      MatMulCase{"vector_matrix", {5}, {5, 3}, false},
                      MatMulCase{"matrix_vector", {4, 5}, {5}, false},
                      MatMulCase{"batched_matrix_vector", {2, 4, 5}, {5}, true},
                      // The GPU family's 64x64 tiles (matmul_tiled.cl; the
                      // cases above take its 32x32 tiles): a Linear layer
                      // over tokens (folded into one product), attention's
                      // batched products and broadcast batches, with tails
                      // in M, N and K.
                      MatMulCase{"tiled_tokens_linear", {1, 7, 9, 40}, {40, 50}, true},
                      MatMulCase{"tiled_attention", {2, 3, 50, 20}, {2, 3, 20, 49}, false},
                      MatMulCase{"tiled_broadcast_both", {2, 1, 49, 17}, {1, 3, 17, 52}, false}),
    [](const ::testing::TestParamInfo<MatMulCase>& info) { return info.param.name; });

}  // namespace
}  // namespace recq::optest
