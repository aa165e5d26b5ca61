// MatMul's kernel variants forced over shapes that reach their edges: the
// register-tiled matmul_tiled (4x8 blocks; M and N not multiples of the
// tile, batches broadcast on either side, attention-like [heads, L, d]
// products) and the plain matmul, against the reference.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "ops/op_test_util.h"
#include "recq/math_op_attrs.h"
#include "recq/op_registry.h"

namespace recq::optest {
namespace {

struct Case {
  std::string name;
  std::vector<int64_t> a, b;
};

class MatMulVariantTest : public ::testing::TestWithParam<std::tuple<std::string, Case>> {};

TEST_P(MatMulVariantTest, MatchesReference) {
  const auto& [variant, c] = GetParam();
  OpGraphBuilder b;
  TensorRef x = b.Input("a", c.a);
  TensorRef w = b.Input("b", c.b);
  TensorRef y = b.graph().AddNode(OpType::kMatMul, {x, w});
  CheckOptions options;
  options.emulate_matrix_units = variant == "matmul_mma";
  auto forced = std::make_shared<int>(0);
  options.choose_variant = ForceVariant(OpType::kMatMul, variant, forced);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), options);
  EXPECT_GT(*forced, 0) << variant << " does not fit " << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Variants, MatMulVariantTest,
    ::testing::Combine(::testing::Values("matmul_tiled", "matmul"),
                       ::testing::Values(Case{"exact_tiles", {8, 12}, {12, 16}},
                                         Case{"ragged_m_and_n", {7, 5}, {5, 13}},
                                         Case{"attention_scores", {3, 17, 8}, {3, 8, 17}},
                                         Case{"attention_values", {2, 3, 9, 11}, {2, 3, 11, 8}},
                                         Case{"weights_broadcast", {2, 5, 6}, {6, 10}},
                                         Case{"batches_as_rows", {5, 1, 6}, {6, 9}},
                                         Case{"a_broadcast", {4, 6}, {3, 6, 9}},
                                         Case{"both_broadcast", {2, 1, 6, 7}, {1, 3, 7, 24}})),
    [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param).name; });

// The GPU family's local-memory tiles (matmul_local.cl), forced on shapes
// both tile sizes fit, with tails in M, N and K (they fit the GPU family
// only, so the CPU compiles of each case run the default variants).
INSTANTIATE_TEST_SUITE_P(
    LocalVariants, MatMulVariantTest,
    ::testing::Combine(::testing::Values("matmul_local_64x64", "matmul_local_32x32"),
                       ::testing::Values(Case{"tokens_linear", {1, 7, 9, 40}, {40, 50}},
                                         Case{"attention", {2, 3, 50, 20}, {2, 3, 20, 49}},
                                         Case{"both_broadcast", {2, 1, 49, 17}, {1, 3, 17, 52}},
                                         Case{"exact_tiles", {64, 32}, {32, 64}})),
    [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param).name; });

// K split over work-groups (few tiles for PoCL's compute units: the partial
// sums go to scratch and matmul_local_reduce adds them), with K and N
// multiples of 4 (float4 tile loads) or not, ragged last slices, batches;
// and the 128x64 tile, which needs 96 rows.
INSTANTIATE_TEST_SUITE_P(
    SplitK, MatMulVariantTest,
    ::testing::Combine(::testing::Values("matmul_local_128x64", "matmul_local_64x64",
                                         "matmul_local_32x32"),
                       ::testing::Values(Case{"vector_loads", {1, 100, 256}, {256, 52}},
                                         Case{"ragged_slices", {100, 300}, {300, 52}},
                                         Case{"scalar_loads_batched", {2, 97, 258}, {2, 258, 50}},
                                         Case{"exact_tiles", {128, 64}, {64, 64}})),
    [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param).name; });

// The matrix-unit tiles (matmul_mma.cl, emulated on PoCL), at their
// heuristic's parameters: attention's batched products with broadcast
// batches, rows and columns past the warps' 16x8 tiles, scalar loads (K or
// N not a multiple of 4), and split K (few tiles for PoCL's units).
INSTANTIATE_TEST_SUITE_P(
    MmaVariants, MatMulVariantTest,
    ::testing::Combine(::testing::Values("matmul_mma"),
                       ::testing::Values(Case{"attention", {2, 3, 50, 20}, {2, 3, 20, 49}},
                                         Case{"both_broadcast", {2, 1, 49, 17}, {1, 3, 17, 52}},
                                         Case{"tokens_linear", {1, 7, 9, 40}, {40, 50}},
                                         Case{"split_k_vector", {1, 100, 256}, {256, 52}},
                                         Case{"exact_tiles", {128, 32}, {32, 128}})),
    [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param).name; });

// The 128x128 tile (8x8 per item, runs of four), which needs 96 rows and
// columns: split K, scalar loads, batches and exact tiles.
INSTANTIATE_TEST_SUITE_P(
    Tile128x128, MatMulVariantTest,
    ::testing::Combine(::testing::Values("matmul_local_128x128"),
                       ::testing::Values(Case{"vector_loads", {1, 100, 256}, {256, 100}},
                                         Case{"scalar_loads_batched", {2, 97, 58}, {2, 58, 98}},
                                         Case{"exact_tiles", {128, 64}, {64, 128}})),
    [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param).name; });

// A Linear layer's MatMul + Add absorbed by the local tiles: a bias [N] or
// [1, 1, N], or a residual of the output's shape, with the Add's ReLU or
// without, K split or not (the epilogue in matmul_local or in
// matmul_local_reduce).
struct AddCase {
  std::string name;
  std::vector<int64_t> a, w, addend;  // addend empty: no Add
  bool relu = false;
  // Not empty: a second Add after the first, of this input (a residual of
  // the output's shape after a bias; the tiled variants absorb both).
  std::vector<int64_t> residual_after = {};
  // The product is reshaped to the addend's shape (rows flattened) before
  // the Add, whose addend is then a residual input.
  bool through_view = false;
};

// LinearGraph: y = MatMul(a, constant w), plus the addend (a constant bias,
// or an input when it has a's rank: a residual), plus the residual after
// it, then a ReLU if asked.
absl::StatusOr<OpGraph> LinearGraph(const AddCase& c) {
  OpGraphBuilder b;
  TensorRef x = b.Input("a", c.a);
  TensorRef y = b.graph().AddNode(OpType::kMatMul, {x, b.Constant("w", c.w)});
  if (c.through_view) y = b.graph().Reshape(y, c.addend);
  if (!c.addend.empty()) {
    const bool residual = c.through_view || c.addend.size() == c.a.size();
    TensorRef addend = residual ? b.Input("r", c.addend) : b.Constant("bias", c.addend);
    y = b.graph().AddNode(OpType::kAdd, {y, addend});
  }
  if (!c.residual_after.empty()) {
    y = b.graph().AddNode(OpType::kAdd, {b.Input("r2", c.residual_after), y});
  }
  if (c.relu) y = b.graph().AddNode(OpType::kRelu, {y});
  return std::move(b).Build(y);
}

// DispatchLabelsOf compiles `op` for `target` with tuning off (and
// `choose_variant`, when set) and returns its dispatch labels.
absl::StatusOr<std::vector<std::string>> DispatchLabelsOf(const OpGraph& op,
                                                          EngineOptions::KernelTarget target,
                                                          VariantChooser choose_variant = {},
                                                          bool emulate_matrix_units = false) {
  const absl::StatusOr<Context>& context = SharedContext();
  if (!context.ok()) return context.status();
  EngineOptions options;
  options.kernel_target = target;
  options.tuning = EngineOptions::Tuning::kOff;
  options.choose_variant = std::move(choose_variant);
  options.emulate_matrix_units = emulate_matrix_units;
  absl::StatusOr<Engine> engine = Engine::Compile(*context, op.graph, options);
  if (!engine.ok()) return engine.status();
  return engine->DispatchLabels();
}

class MatMulAddTest : public ::testing::TestWithParam<std::tuple<std::string, AddCase>> {};

TEST_P(MatMulAddTest, MatchesReference) {
  const auto& [variant, c] = GetParam();
  absl::StatusOr<OpGraph> op = LinearGraph(c);
  ASSERT_TRUE(op.ok()) << op.status();
  // The GPU family's dispatches: the tile (and its reduction), no Add.
  const bool mma = variant == "matmul_mma";
  const absl::StatusOr<std::vector<std::string>> labels =
      DispatchLabelsOf(*op, EngineOptions::KernelTarget::kGpu,
                       ForceVariant(OpType::kMatMul, variant, std::make_shared<int>(0)), mma);
  ASSERT_TRUE(labels.ok()) << labels.status();
  for (const std::string& label : *labels) {
    EXPECT_TRUE(label.find(mma ? "matmul_mma" : "matmul_local") != std::string::npos ||
                label.find("matmul_local_reduce") != std::string::npos ||
                label.find("matmul_gemv") != std::string::npos)
        << c.name << ": " << label;
  }
  CheckOptions options;
  options.emulate_matrix_units = variant == "matmul_mma";
  auto forced = std::make_shared<int>(0);
  options.choose_variant = ForceVariant(OpType::kMatMul, variant, forced);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(op), options);
  EXPECT_GT(*forced, 0) << variant << " does not fit " << c.name;
}

// A Linear layer's bias and the block's residual after it (both Adds
// absorbed), K split or not; and a residual read through a view of the
// product (rows flattened).
const AddCase kBiasResidualSplitK{
    "bias_residual_split_k", {1, 100, 256}, {256, 52}, {52}, false, {1, 100, 52}};
const AddCase kBiasResidualReluBatched{
    "bias_residual_relu_one_slice_batched", {2, 50, 24}, {24, 52}, {52}, true, {2, 50, 52}};
const AddCase kResidualThroughView{
    "residual_through_view", {2, 50, 24}, {24, 52}, {100, 52}, false, {}, true};

INSTANTIATE_TEST_SUITE_P(
    LocalVariants, MatMulAddTest,
    ::testing::Combine(
        ::testing::Values("matmul_local_128x64", "matmul_local_64x64", "matmul_local_32x32"),
        ::testing::Values(
            AddCase{"bias_split_k", {1, 100, 256}, {256, 52}, {52}, false},
            AddCase{"bias3d_relu", {1, 100, 256}, {256, 52}, {1, 1, 52}, true},
            AddCase{"bias_one_slice", {1, 100, 24}, {24, 52}, {52}, false},
            AddCase{"bias_relu_one_slice", {1, 100, 24}, {24, 52}, {52}, true},
            AddCase{"residual_split_k", {1, 100, 256}, {256, 52}, {1, 100, 52}, false},
            AddCase{"residual_one_slice", {1, 100, 24}, {24, 52}, {1, 100, 52}, false},
            kBiasResidualSplitK, kBiasResidualReluBatched, kResidualThroughView)),
    [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param).name; });

INSTANTIATE_TEST_SUITE_P(
    MmaVariants, MatMulAddTest,
    ::testing::Combine(
        ::testing::Values("matmul_mma"),
        ::testing::Values(
            AddCase{"bias_split_k", {1, 100, 256}, {256, 52}, {52}, false},
            AddCase{"bias3d_relu", {1, 100, 256}, {256, 52}, {1, 1, 52}, true},
            AddCase{"bias_relu_one_slice", {1, 100, 24}, {24, 52}, {52}, true},
            AddCase{"residual_split_k", {1, 100, 256}, {256, 52}, {1, 100, 52}, false},
            AddCase{"residual_one_slice", {1, 100, 24}, {24, 52}, {1, 100, 52}, false},
            kBiasResidualSplitK, kBiasResidualReluBatched, kResidualThroughView)),
    [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param).name; });

// A Gemm (a Linear layer on rows: B transposed, a bias C) and the residual
// Add after it, with the Add's ReLU or without, K split or not: the tiled
// Gemm variants add the residual in their epilogue (or reduction), so the
// GPU family runs no Add.
struct GemmResidualCase {
  std::string name;
  int64_t m, k, n;
  bool relu = false;
  // The Gemm's output goes through a Reshape to [1, M, N] before the Add
  // (ViT's attention output), which the variant reads through.
  bool through_view = false;
};

class GemmResidualTest
    : public ::testing::TestWithParam<std::tuple<std::string, GemmResidualCase>> {};

TEST_P(GemmResidualTest, AbsorbsTheAddAndMatchesReference) {
  const auto& [variant, c] = GetParam();
  auto build = [&, c = c]() -> absl::StatusOr<OpGraph> {
    OpGraphBuilder b;
    TensorRef a = b.Input("a", {c.m, c.k});
    GemmAttrs attrs;
    attrs.trans_b = true;
    TensorRef y = b.graph().Gemm(a, b.Constant("w", {c.n, c.k}), b.Constant("bias", {c.n}), attrs);
    std::vector<int64_t> shape = {c.m, c.n};
    if (c.through_view) {
      shape = {1, c.m, c.n};
      y = b.graph().Reshape(y, shape);
    }
    y = b.graph().AddNode(OpType::kAdd, {y, b.Input("r", shape)});
    if (c.relu) y = b.graph().AddNode(OpType::kRelu, {y});
    return std::move(b).Build(y);
  };
  const bool mma = variant == "gemm_mma";
  const EngineOptions::KernelTarget target = variant == "gemm_packed"
                                                 ? EngineOptions::KernelTarget::kCpu
                                                 : EngineOptions::KernelTarget::kGpu;
  const absl::StatusOr<std::vector<std::string>> labels = DispatchLabelsOf(
      *build(), target, ForceVariant(OpType::kGemm, variant, std::make_shared<int>(0)), mma);
  ASSERT_TRUE(labels.ok()) << labels.status();
  ASSERT_FALSE(labels->empty());
  for (const std::string& label : *labels) {
    EXPECT_TRUE(label.find(variant) != std::string::npos ||
                label.find("matmul_local_reduce") != std::string::npos)
        << c.name << ": " << label;
  }
  CheckOptions options;
  options.emulate_matrix_units = mma;
  auto forced = std::make_shared<int>(0);
  options.choose_variant = ForceVariant(OpType::kGemm, variant, forced);
  RECQ_EXPECT_MATCHES_REFERENCE(build(), options);
  EXPECT_GT(*forced, 0) << variant << " does not fit " << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Tiles, GemmResidualTest,
    ::testing::Combine(::testing::Values("gemm_local_64x64", "gemm_mma"),
                       ::testing::Values(GemmResidualCase{"split_k", 100, 256, 52, false},
                                         GemmResidualCase{"one_slice_relu", 100, 24, 52, true},
                                         GemmResidualCase{"through_view", 100, 24, 52, false,
                                                          true})),
    [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param).name; });

// The CPU family's Gemm with constant weights (matmul_packed.cl) adds the
// residual after its bias C: N not a multiple of the panel (52 = 3 x 16 + 4)
// and M not of the row block (100).
INSTANTIATE_TEST_SUITE_P(
    Packed, GemmResidualTest,
    ::testing::Combine(::testing::Values("gemm_packed"),
                       ::testing::Values(GemmResidualCase{"deep_k", 100, 256, 52, false},
                                         GemmResidualCase{"relu", 100, 24, 52, true},
                                         GemmResidualCase{"full_panels_through_view", 37, 24, 64,
                                                          false, true})),
    [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param).name; });

// A transformer block's residual stream: a Linear layer's product, bias
// and residual Add (MatMul, or Gemm with C), then the LayerNorm over its
// rows that the next block reads, and x itself read again after it (LN(x)
// + x). With K split the reduction computes the LayerNorm too
// (matmul_local_reduce_norm, no norm_rows dispatch); with one slice the
// LayerNorm runs by itself. With and without the LayerNorm's bias.
struct NormAfterCase {
  std::string name;
  int64_t m, k, n;
  bool norm_bias = true;
};

class NormAfterTest : public ::testing::TestWithParam<std::tuple<std::string, NormAfterCase>> {};

TEST_P(NormAfterTest, ReductionNormalisesTheRows) {
  const auto& [variant, c] = GetParam();
  const bool gemm = variant.rfind("gemm", 0) == 0;
  const OpType op = gemm ? OpType::kGemm : OpType::kMatMul;
  auto build = [&, c = c]() -> absl::StatusOr<OpGraph> {
    OpGraphBuilder b;
    GraphBuilder& g = b.graph();
    TensorRef x;
    if (gemm) {
      GemmAttrs attrs;
      attrs.trans_b = true;
      x = g.Gemm(b.Input("a", {c.m, c.k}), b.Constant("w", {c.n, c.k}), b.Constant("bias", {c.n}),
                 attrs);
      x = g.AddNode(OpType::kAdd, {x, b.Input("r", {c.m, c.n})});
    } else {
      x = g.AddNode(OpType::kMatMul, {b.Input("a", {1, c.m, c.k}), b.Constant("w", {c.k, c.n})});
      x = g.AddNode(OpType::kAdd, {x, b.Constant("bias", {c.n})});
      x = g.AddNode(OpType::kAdd, {b.Input("r", {1, c.m, c.n}), x});
    }
    std::vector<TensorRef> in = {x, b.Constant("gamma", {c.n}, 0.5f, 1.5f)};
    if (c.norm_bias) in.push_back(b.Constant("beta", {c.n}));
    NormalizationAttrs na;
    na.epsilon = 1e-5f;
    TensorRef z = g.AddNode(OpType("LayerNormalization"), in, na);
    return std::move(b).Build(g.AddNode(OpType::kAdd, {z, x}));
  };
  const bool mma = variant.find("mma") != std::string::npos;
  const absl::StatusOr<std::vector<std::string>> labels =
      DispatchLabelsOf(*build(), EngineOptions::KernelTarget::kGpu,
                       ForceVariant(op, variant, std::make_shared<int>(0)), mma);
  ASSERT_TRUE(labels.ok()) << labels.status();
  const bool split = c.k >= 256;
  int fused = 0, norms = 0;
  for (const std::string& label : *labels) {
    fused += label.find("matmul_local_reduce_norm") != std::string::npos;
    norms += label.find("norm_rows") != std::string::npos;
  }
  EXPECT_EQ(fused, split ? 1 : 0) << absl::StrJoin(*labels, ", ");
  EXPECT_EQ(norms, split ? 0 : 1) << absl::StrJoin(*labels, ", ");
  CheckOptions options;
  options.emulate_matrix_units = mma;
  auto forced = std::make_shared<int>(0);
  options.choose_variant = ForceVariant(op, variant, forced);
  RECQ_EXPECT_MATCHES_REFERENCE(build(), options);
  EXPECT_GT(*forced, 0) << variant << " does not fit " << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Tiles, NormAfterTest,
    ::testing::Combine(::testing::Values("matmul_local_64x64", "matmul_mma", "gemm_local_64x64",
                                         "gemm_mma"),
                       ::testing::Values(NormAfterCase{"split_k", 100, 256, 52},
                                         NormAfterCase{"split_k_no_norm_bias", 100, 256, 52, false},
                                         NormAfterCase{"one_slice", 100, 24, 52})),
    [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param).name; });

// Rows of 200 over work-groups of 128 items (the other cases: 52 over 32):
// two elements an item, the second of the last items past the row.
INSTANTIATE_TEST_SUITE_P(
    TwoPerItem, NormAfterTest,
    ::testing::Combine(::testing::Values("matmul_local_128x128"),
                       ::testing::Values(NormAfterCase{"split_k_rows_of_200", 100, 256, 200})),
    [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param).name; });

// The GPU family's matrix-vector product (matmul_gemv.cl): one row and a
// few (a decoder step's tokens as rows), N not a multiple of the float4
// runs, K shorter than the work-group's slices, and the Add after it.
INSTANTIATE_TEST_SUITE_P(
    Gemv, MatMulVariantTest,
    ::testing::Combine(::testing::Values("matmul_gemv"),
                       ::testing::Values(Case{"one_row", {1, 40}, {40, 50}},
                                         Case{"token_batch", {3, 1, 37}, {37, 23}},
                                         Case{"eight_rows", {8, 64}, {64, 130}},
                                         Case{"short_k", {2, 5}, {5, 9}})),
    [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param).name; });

INSTANTIATE_TEST_SUITE_P(
    Gemv, MatMulAddTest,
    ::testing::Combine(
        ::testing::Values("matmul_gemv"),
        ::testing::Values(AddCase{"bias", {1, 1, 40}, {40, 50}, {50}, false},
                          AddCase{"bias3d_relu", {1, 1, 40}, {40, 50}, {1, 1, 50}, true},
                          AddCase{"residual", {1, 3, 40}, {40, 51}, {1, 3, 51}, false})),
    [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param).name; });

// The CPU family's products with constant weights, forced. matmul_packed
// (matmul_packed.cl): rows past the row block (M not a multiple of 4 or 8),
// columns past the panel (N not a multiple of 8 or 16), K not a multiple of
// 4, batches of A as rows, and the Add after it absorbed (bias [N] or
// [1, 1, N], or a residual, with the Add's ReLU; a bias and the residual
// Add after it, both absorbed). matmul_gemv_cpu
// (matmul_gemv_cpu.cl): one to four rows (batches of A folded), N not a
// multiple of the panel, K odd or below 4, the same Adds. The CPU family's
// dispatch list must hold one of the two products and no Add.
class MatMulPackedTest : public ::testing::TestWithParam<std::tuple<std::string, AddCase>> {};

TEST_P(MatMulPackedTest, MatchesReference) {
  const auto& [variant, c] = GetParam();
  absl::StatusOr<OpGraph> op = LinearGraph(c);
  ASSERT_TRUE(op.ok()) << op.status();
  const absl::StatusOr<std::vector<std::string>> labels =
      DispatchLabelsOf(*op, EngineOptions::KernelTarget::kCpu);
  ASSERT_TRUE(labels.ok()) << labels.status();
  ASSERT_EQ(labels->size(), 1u) << c.name << ": " << absl::StrJoin(*labels, ", ");
  EXPECT_TRUE((*labels)[0].find("matmul_packed") != std::string::npos ||
              (*labels)[0].find("matmul_gemv_cpu") != std::string::npos)
      << c.name << ": " << (*labels)[0];
  CheckOptions options;
  options.emulate_matrix_units = variant == "matmul_mma";
  auto forced = std::make_shared<int>(0);
  options.choose_variant = ForceVariant(OpType::kMatMul, variant, forced);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(op), options);
  EXPECT_GT(*forced, 0) << variant << " does not fit " << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MatMulPackedTest,
    ::testing::Combine(
        ::testing::Values("matmul_packed"),
        ::testing::Values(
            AddCase{"exact", {16, 32}, {32, 32}, {}}, AddCase{"one_row", {1, 40}, {40, 24}, {24}},
            AddCase{"ragged_m_n_k", {13, 30}, {30, 21}, {}},
            AddCase{"k_below_4", {9, 3}, {3, 8}, {}},
            AddCase{"batches_as_rows", {2, 5, 6}, {6, 10}, {}},
            AddCase{"bias", {1, 11, 36}, {36, 40}, {40}},
            AddCase{"bias3d_relu", {1, 11, 36}, {36, 40}, {1, 1, 40}, true},
            AddCase{"residual_relu", {1, 11, 36}, {36, 40}, {1, 11, 40}, true},
            AddCase{"bias_residual_full_panels", {1, 19, 36}, {36, 48}, {48}, false, {1, 19, 48}},
            kBiasResidualSplitK, kBiasResidualReluBatched, kResidualThroughView)),
    [](const auto& info) { return std::get<1>(info.param).name; });

// matmul_packed's epilogue with the bias Add's activation: GELU, which it
// computes inline over its rows, and the others through the switch (tanh
// GELU, HardSwish). 13 rows (a partial row block) and 40 columns (a
// partial panel); inputs over [-4, 4) cover GELU's tails.
class MatMulPackedActivationTest : public ::testing::TestWithParam<Activation> {};

TEST_P(MatMulPackedActivationTest, MatchesReference) {
  auto build = [&]() -> absl::StatusOr<OpGraph> {
    OpGraphBuilder b;
    TensorRef x = b.graph().AddNode(
        OpType::kMatMul, {b.Input("a", {1, 13, 36}, -4.0f, 4.0f), b.Constant("w", {36, 40})});
    x = b.graph().Add(x, b.Constant("bias", {40}));
    b.graph().SetFusedActivation(x, GetParam());
    return std::move(b).Build(x);
  };
  const absl::StatusOr<std::vector<std::string>> labels =
      DispatchLabelsOf(*build(), EngineOptions::KernelTarget::kCpu);
  ASSERT_TRUE(labels.ok()) << labels.status();
  ASSERT_EQ(labels->size(), 1u) << absl::StrJoin(*labels, ", ");
  EXPECT_NE((*labels)[0].find("matmul_packed"), std::string::npos) << (*labels)[0];
  RECQ_EXPECT_MATCHES_REFERENCE(build());
}

INSTANTIATE_TEST_SUITE_P(Kinds, MatMulPackedActivationTest,
                         ::testing::Values(Activation{ActivationKind::kGelu, 0.0f, 0.0f},
                                           Activation{ActivationKind::kGeluTanh, 0.0f, 0.0f},
                                           Activation{ActivationKind::kHardSwish, 0.0f, 0.0f}),
                         [](const auto& info) {
                           return std::string(ActivationKindName(info.param.kind));
                         });

INSTANTIATE_TEST_SUITE_P(
    GemvCpu, MatMulPackedTest,
    ::testing::Combine(
        ::testing::Values("matmul_gemv_cpu"),
        ::testing::Values(
            AddCase{"one_row", {1, 40}, {40, 24}, {}},
            AddCase{"one_row_ragged_n_odd_k", {1, 1, 37}, {37, 45}, {45}},
            AddCase{"two_rows_k_below_4", {2, 3}, {3, 19}, {}},
            AddCase{"three_rows_bias3d_relu", {1, 3, 33}, {33, 21}, {1, 1, 21}, true},
            AddCase{"four_rows_residual", {4, 1, 41}, {41, 70}, {4, 1, 70}},
            AddCase{"batches_as_rows_residual_relu", {2, 2, 29}, {29, 9}, {2, 2, 9}, true})),
    [](const auto& info) { return std::get<1>(info.param).name; });

}  // namespace
}  // namespace recq::optest
