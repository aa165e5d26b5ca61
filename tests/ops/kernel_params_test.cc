// Every parameter set of the tunable kernel variants (KernelVariant::
// param_space: the auto-tuner's search space) against the CPU reference.
// Each case is a small one-node graph on whose node `variant` fits; the
// test forces that variant with each set of its param_space in turn through
// EngineOptions::choose_kernel. The shapes put partial tiles at the edges:
// widths and pixel counts that are not multiples of the vector widths,
// output channels that are not multiples of the channel blocks, and (GPU
// pointwise) input channels that do not divide into the slices.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/ops/attention.h"
#include "engine/ops/sampling.h"
#include "gtest/gtest.h"
#include "ops/op_test_util.h"
#include "recq/engine.h"
#include "recq/graph.h"
#include "recq/op_registry.h"

namespace recq::optest {
namespace {

using KernelTarget = EngineOptions::KernelTarget;

struct SpaceCase {
  std::string name;
  std::string variant;
  KernelTarget target;
  std::function<absl::StatusOr<OpGraph>()> build;
  // The slice [begin, end) of the space this case covers (large spaces are
  // split so that each case stays within ctest's per-test limit).
  size_t begin = 0;
  size_t end = SIZE_MAX;
  // CheckOptions::atol when above 0 (else the default).
  float atol = 0.0f;
};

// WinogradAtol is the absolute tolerance of conv2d_winograd over c input
// channels (conv2d_test.cc's, which states why).
float WinogradAtol(int64_t c) {
  return 1e-4f * std::max(1.0f, std::sqrt(9.0f * static_cast<float>(c)) / 3.0f);
}

void PrintTo(const SpaceCase& c, std::ostream* os) { *os << c.name; }

Conv2DAttrs ConvAttrs(std::array<int64_t, 2> strides, std::array<int64_t, 4> pads,
                      int64_t groups = 1) {
  Conv2DAttrs a;
  a.strides = strides;
  a.pads = pads;
  a.groups = groups;
  return a;
}

std::function<absl::StatusOr<OpGraph>()> ConvGraph(std::vector<int64_t> x, int64_t oc,
                                                   std::array<int64_t, 2> k, Conv2DAttrs attrs,
                                                   Activation act = {}) {
  return [=]() {
    OpGraphBuilder b;
    TensorRef in = b.Input("x", x);
    TensorRef w = b.Constant("w", {oc, x[1] / attrs.groups, k[0], k[1]});
    TensorRef bias = b.Constant("b", {oc});
    TensorRef y = b.graph().Conv2D(in, w, bias, attrs);
    if (act.kind != ActivationKind::kNone) b.graph().SetFusedActivation(y, act);
    return std::move(b).Build(y);
  };
}

std::function<absl::StatusOr<OpGraph>()> FcGraph(int64_t m, int64_t n, int64_t k) {
  return [=]() {
    OpGraphBuilder b;
    TensorRef x = b.Input("x", {m, k});
    TensorRef y = b.graph().FullyConnected(x, b.Constant("w", {n, k}), b.Constant("b", {n}));
    return std::move(b).Build(y);
  };
}

// MatMul of an [m, k] input by constant [k, n] weights.
std::function<absl::StatusOr<OpGraph>()> MatMulGraph(int64_t m, int64_t n, int64_t k) {
  return [=]() {
    OpGraphBuilder b;
    TensorRef x = b.Input("x", {m, k});
    TensorRef y = b.graph().AddNode(OpType::kMatMul, {x, b.Constant("w", {k, n})});
    return std::move(b).Build(y);
  };
}

// Fused attention of row-major Q [1, h, lq, d], K and V [1, h, lk, d].
std::function<absl::StatusOr<OpGraph>()> AttentionGraph(int64_t h, int64_t lq, int64_t lk,
                                                        int64_t d) {
  return [=]() {
    const internal::AttentionAttrs a = internal::DenseAttention(1, h, lq, lk, d, d);
    OpGraphBuilder b;
    TensorRef q = b.Input("q", {1, h, lq, d});
    TensorRef k = b.Input("k", {1, h, lk, d});
    TensorRef v = b.Input("v", {1, h, lk, d});
    return std::move(b).Build(b.graph().AddNode(OpType("Attention"), {q, k, v}, a));
  };
}

constexpr Activation kRelu{ActivationKind::kRelu, 0.0f, 0.0f};

// Sample over float16 logits [2, V] (float16 inputs: under fp16 storage a
// float32 input would be rounded before the op and its ids would not be the
// float32 reference's).
std::function<absl::StatusOr<OpGraph>()> SampleGraph(int64_t vocab, internal::SampleMode mode) {
  return [=]() {
    OpGraphBuilder b;
    TensorRef logits = b.Input("logits", {2, vocab}, -4.0f, 4.0f, DataType::kFloat16);
    TensorRef step = b.Input("step", {1}, 0.0f, 1000.0f, DataType::kInt64);
    internal::SampleAttrs a;
    a.mode = mode;
    a.k = 37;
    a.p = 0.8f;
    a.seed = 5;
    return std::move(b).Build(internal::Sample(b.graph(), logits, step, a));
  };
}

class KernelParamsTest : public ::testing::TestWithParam<SpaceCase> {};

TEST_P(KernelParamsTest, EveryParameterSetMatchesReference) {
  const SpaceCase& c = GetParam();
  absl::StatusOr<OpGraph> graph = c.build();
  ASSERT_TRUE(graph.ok()) << graph.status();
  // The space, as the variant's param_space gives it for the node; filled
  // by the first compile.
  auto space = std::make_shared<std::vector<KernelParams>>();
  auto forced = std::make_shared<int>(0);
  for (size_t k = c.begin; k < c.end && (k == c.begin || k < space->size()); ++k) {
    CheckOptions options;
    options.kernel_targets = {c.target};
    options.optimize = {true};
    options.recorded_runs = 1;
    options.emulate_matrix_units = c.variant.find("_mma") != std::string::npos;
    if (c.atol > 0.0f) options.atol = c.atol;
    // fp16 storage on a sample (every fourth set, the part's first
    // included): each set is a separate program build, and the half
    // accessors do not depend on the parameters.
    // Winograd fits only where the precision relaxes float32: tf32 in place
    // of float32 (on CPUs, float32 everywhere else).
    const EngineOptions::Precision full = c.variant == "conv2d_winograd"
                                              ? EngineOptions::Precision::kTf32
                                              : EngineOptions::Precision::kFp32;
    options.precisions = {full, EngineOptions::Precision::kFp16Storage};
    if ((k - c.begin) % 4 != 0) options.precisions = {full};
    const std::string variant = c.variant;
    options.choose_kernel = [variant, k, space, forced](const Node& node,
                                                        const LoweringContext& ctx,
                                                        absl::Span<const size_t> fitting) {
      const OpDef* def = FindOp(node.op);
      for (size_t i : fitting) {
        const KernelVariant& v = def->variants[i];
        if (v.name != variant || !v.param_space) continue;
        std::vector<KernelParams> s = v.param_space(node, ctx);
        if (space->empty()) *space = s;
        if (k >= s.size()) break;
        ++*forced;
        return KernelChoice{i, s[k]};
      }
      return KernelChoice{fitting[0], {}};
    };
    SCOPED_TRACE(absl::StrCat(variant, " parameters #", k, ": ",
                              k < space->size() ? KernelParamsString((*space)[k]) : "?"));
    RECQ_EXPECT_MATCHES_REFERENCE(*graph, options);
  }
  EXPECT_GT(space->size(), 1u) << c.variant << " offers no choice for " << c.name;
  // The parts split PoCL's space, where CI runs them. A GPU's smaller local
  // memory leaves fewer sets (gemm_mma: 14 of 21 on an H200), and the last
  // parts nothing to cover there.
  if (c.begin >= space->size() && TestDeviceFacts().IsGpuDevice()) {
    GTEST_SKIP() << c.name << " starts at set " << c.begin << ", past this device's "
                 << space->size();
  }
  EXPECT_LT(c.begin, space->size()) << c.name << " starts past the space";
  // Compiled at least once per parameter set.
  const size_t covered = std::min(c.end, space->size()) - std::min(c.begin, space->size());
  EXPECT_GE(*forced, static_cast<int>(covered)) << c.variant << " does not fit " << c.name;
}

std::vector<SpaceCase> Cases() {
  const KernelTarget cpu = KernelTarget::kCpu;
  const KernelTarget gpu = KernelTarget::kGpu;
  return {
      // 21 columns: a shifted last tile for both widths; 13 channels: tails
      // past blocks of 4 and 8; 9 rows: partial row tiles of 2 and 4.
      {"tiled_k3_oc13_part1", "conv2d_tiled", cpu,
       ConvGraph({1, 6, 9, 21}, 13, {3, 3}, ConvAttrs({1, 1}, {1, 1, 1, 1}), kRelu), 0, 6},
      {"tiled_k3_oc13_part2", "conv2d_tiled", cpu,
       ConvGraph({1, 6, 9, 21}, 13, {3, 3}, ConvAttrs({1, 1}, {1, 1, 1, 1}), kRelu), 6, 12},
      {"tiled_k3_oc13_part3", "conv2d_tiled", cpu,
       ConvGraph({1, 6, 9, 21}, 13, {3, 3}, ConvAttrs({1, 1}, {1, 1, 1, 1}), kRelu), 12, 14},
      {"tiled_k3_oc13_part4", "conv2d_tiled", cpu,
       ConvGraph({1, 6, 9, 21}, 13, {3, 3}, ConvAttrs({1, 1}, {1, 1, 1, 1}), kRelu), 14, 16},
      {"tiled_k3_oc13_part5", "conv2d_tiled", cpu,
       ConvGraph({1, 6, 9, 21}, 13, {3, 3}, ConvAttrs({1, 1}, {1, 1, 1, 1}), kRelu), 16},
      // conv2d_tiled_padded: Inception-v3's 1x7 on a 17-wide map (every
      // tile at an edge without the padded copy), 13 channels for tails.
      {"tiled_padded_k1x7_part1", "conv2d_tiled_padded", cpu,
       ConvGraph({1, 48, 8, 17}, 13, {1, 7}, ConvAttrs({1, 1}, {0, 3, 0, 3}), kRelu), 0, 9},
      {"tiled_padded_k1x7_part2", "conv2d_tiled_padded", cpu,
       ConvGraph({1, 48, 8, 17}, 13, {1, 7}, ConvAttrs({1, 1}, {0, 3, 0, 3}), kRelu), 9},
      // Winograd F(4x4, 3x3): 25x18 outputs (partial 4x4 tiles), 35 tiles
      // (a partial last vector of 8 and of 16), 21 output channels (tails
      // past blocks of 4, 8 and 16).
      {"winograd_c19_k21_part1", "conv2d_winograd", cpu,
       ConvGraph({1, 19, 25, 18}, 21, {3, 3}, ConvAttrs({1, 1}, {1, 1, 1, 1}), kRelu), 0, 6,
       WinogradAtol(19)},
      {"winograd_c19_k21_part2", "conv2d_winograd", cpu,
       ConvGraph({1, 19, 25, 18}, 21, {3, 3}, ConvAttrs({1, 1}, {1, 1, 1, 1}), kRelu), 6, 12,
       WinogradAtol(19)},
      {"winograd_c19_k21_part3", "conv2d_winograd", cpu,
       ConvGraph({1, 19, 25, 18}, 21, {3, 3}, ConvAttrs({1, 1}, {1, 1, 1, 1}), kRelu), 12, SIZE_MAX,
       WinogradAtol(19)},
      // conv2d_gemm: 21 columns by 9 rows (panels crossing rows, a partial
      // last panel of 16 and of 8), 13 output channels (tails past blocks
      // of 4 and 8); then a 1x1 with 35 pixels read in place (a shifted
      // last tile of 16 and of 8) and 20 output channels.
      {"gemm_k3_oc13_part1", "conv2d_gemm", cpu,
       ConvGraph({1, 6, 9, 21}, 13, {3, 3}, ConvAttrs({1, 1}, {1, 1, 1, 1}), kRelu), 0, 4},
      {"gemm_k3_oc13_part2", "conv2d_gemm", cpu,
       ConvGraph({1, 6, 9, 21}, 13, {3, 3}, ConvAttrs({1, 1}, {1, 1, 1, 1}), kRelu), 4},
      {"gemm_pw_hw35_oc20_part1", "conv2d_gemm", cpu,
       ConvGraph({1, 12, 5, 7}, 20, {1, 1}, ConvAttrs({1, 1}, {0, 0, 0, 0})), 0, 4},
      {"gemm_pw_hw35_oc20_part2", "conv2d_gemm", cpu,
       ConvGraph({1, 12, 5, 7}, 20, {1, 1}, ConvAttrs({1, 1}, {0, 0, 0, 0})), 4},
      // conv2d_gemm_oc: a 3x3 on 7x7 (49 pixels: a partial last item of 8
      // and of 16, 513 taps) with 341 output channels (a tail past the
      // 16-channel blocks), then a 1x1 on 35 pixels read in place.
      {"gemm_oc_k3_hw49_oc341", "conv2d_gemm_oc", cpu,
       ConvGraph({1, 57, 7, 7}, 341, {3, 3}, ConvAttrs({1, 1}, {1, 1, 1, 1}), kRelu)},
      {"gemm_oc_pw_hw35_oc330", "conv2d_gemm_oc", cpu,
       ConvGraph({1, 520, 5, 7}, 330, {1, 1}, ConvAttrs({1, 1}, {0, 0, 0, 0}))},
      // Two groups of 4 output channels, stride 2 with padding.
      {"tiled_grouped_s2", "conv2d_tiled", cpu,
       ConvGraph({1, 8, 11, 19}, 8, {3, 3}, ConvAttrs({2, 2}, {1, 1, 1, 1}, 2))},
      // 35 pixels, 20 output channels.
      {"pointwise_hw35_oc20_part1", "conv2d_pointwise", cpu,
       ConvGraph({1, 12, 5, 7}, 20, {1, 1}, ConvAttrs({1, 1}, {0, 0, 0, 0})), 0, 9},
      {"pointwise_hw35_oc20_part2", "conv2d_pointwise", cpu,
       ConvGraph({1, 12, 5, 7}, 20, {1, 1}, ConvAttrs({1, 1}, {0, 0, 0, 0})), 9},
      // The same kernel behind the strided pixels' copy, whose dispatch
      // takes no parameters: a sample of the space, which the two cases
      // above cover whole. 5x7 outputs of a stride-2 1x1.
      {"pointwise_strided_s2_hw35", "conv2d_pointwise_strided", cpu,
       ConvGraph({1, 12, 9, 13}, 20, {1, 1}, ConvAttrs({2, 2}, {0, 0, 0, 0})), 0, 6},
      // 19 columns, 9 rows: a partial last block of 2 and of 4 rows.
      {"depthwise3x3_w19_part1", "conv2d_depthwise3x3", cpu,
       ConvGraph({1, 5, 9, 19}, 5, {3, 3}, ConvAttrs({1, 1}, {1, 1, 1, 1}, 5), kRelu), 0, 9},
      {"depthwise3x3_w19_part2", "conv2d_depthwise3x3", cpu,
       ConvGraph({1, 5, 9, 19}, 5, {3, 3}, ConvAttrs({1, 1}, {1, 1, 1, 1}, 5), kRelu), 9},
      // 5x5 depthwise, stride 2, 19 columns: strips past both widths.
      {"depthwise5x5_s2_w19", "conv2d_depthwise_kxk", cpu,
       ConvGraph({1, 5, 11, 19}, 5, {5, 5}, ConvAttrs({2, 2}, {2, 2, 2, 2}, 5), kRelu)},
      // 5x5 depthwise from private rows: stride 2 over 19 columns (rows of
      // 10 outputs: one shifted strip of 8 or one of 16 lanes), and stride 1
      // on 7x7 (rows narrower than either strip).
      {"depthwise_staged_s2_w19", "conv2d_depthwise_staged", cpu,
       ConvGraph({1, 5, 11, 19}, 5, {5, 5}, ConvAttrs({2, 2}, {2, 2, 2, 2}, 5), kRelu)},
      {"depthwise_staged_w7", "conv2d_depthwise_staged", cpu,
       ConvGraph({1, 6, 7, 7}, 6, {5, 5}, ConvAttrs({1, 1}, {2, 2, 2, 2}, 6))},
      {"dense3x3_s2", "conv2d_dense3x3", cpu,
       ConvGraph({1, 6, 10, 37}, 10, {3, 3}, ConvAttrs({2, 2}, {1, 1, 1, 1}))},
      {"gemm_fc", "gemm", cpu, FcGraph(3, 17, 40)},
      // 11 rows (tails of 4 and 8), 21 columns (tails of 8 and 16), K 42
      // (a tail past the 4-step); both steps of K.
      {"gemm_packed_fc_part1", "gemm_packed", cpu, FcGraph(11, 21, 42), 0, 6},
      {"gemm_packed_fc_part2", "gemm_packed", cpu, FcGraph(11, 21, 42), 6, 12},
      {"gemm_packed_fc_part3", "gemm_packed", cpu, FcGraph(11, 21, 42), 12, 18},
      {"gemm_packed_fc_part4", "gemm_packed", cpu, FcGraph(11, 21, 42), 18, 24},
      {"gemm_packed_fc_part5", "gemm_packed", cpu, FcGraph(11, 21, 42), 24, 30},
      {"gemm_packed_fc_part6", "gemm_packed", cpu, FcGraph(11, 21, 42), 30},
      // The same tails through MatMul with constant weights.
      {"matmul_packed_part1", "matmul_packed", cpu, MatMulGraph(11, 21, 42), 0, 6},
      {"matmul_packed_part2", "matmul_packed", cpu, MatMulGraph(11, 21, 42), 6, 12},
      {"matmul_packed_part3", "matmul_packed", cpu, MatMulGraph(11, 21, 42), 12, 18},
      {"matmul_packed_part4", "matmul_packed", cpu, MatMulGraph(11, 21, 42), 18, 24},
      {"matmul_packed_part5", "matmul_packed", cpu, MatMulGraph(11, 21, 42), 24, 30},
      {"matmul_packed_part6", "matmul_packed", cpu, MatMulGraph(11, 21, 42), 30},
      // The CPU matrix-vector products: 3 rows (Gemm) or 1, 21 columns
      // (tails of 8 and 16; panels past the last for two or four per item),
      // K 43 (odd: a tail past the 4-step).
      {"gemm_gemv_cpu_fc_part1", "gemm_gemv_cpu", cpu, FcGraph(3, 21, 43), 0, 6},
      {"gemm_gemv_cpu_fc_part2", "gemm_gemv_cpu", cpu, FcGraph(3, 21, 43), 6, 12},
      {"gemm_gemv_cpu_fc_part3", "gemm_gemv_cpu", cpu, FcGraph(3, 21, 43), 12},
      {"matmul_gemv_cpu_part1", "matmul_gemv_cpu", cpu, MatMulGraph(1, 21, 43), 0, 6},
      {"matmul_gemv_cpu_part2", "matmul_gemv_cpu", cpu, MatMulGraph(1, 21, 43), 6, 12},
      {"matmul_gemv_cpu_part3", "matmul_gemv_cpu", cpu, MatMulGraph(1, 21, 43), 12},
      // 40 input channels: slices of 1-32 with a short last slice.
      {"pointwise_gpu_c40", "conv2d_pointwise_gpu", gpu,
       ConvGraph({1, 40, 5, 6}, 12, {1, 1}, ConvAttrs({1, 1}, {0, 0, 0, 0}))},
      {"direct_gpu_oc8", "conv2d_direct_gpu", gpu,
       ConvGraph({1, 6, 9, 11}, 8, {3, 3}, ConvAttrs({1, 1}, {1, 1, 1, 1}), kRelu)},
      {"depthwise_gpu", "conv2d_depthwise_gpu", gpu,
       ConvGraph({1, 4, 7, 9}, 4, {3, 3}, ConvAttrs({2, 2}, {1, 1, 1, 1}, 4))},
      {"depthwise_gpu_rows", "conv2d_depthwise_gpu", gpu,
       ConvGraph({1, 4, 7, 10}, 4, {3, 3}, ConvAttrs({1, 1}, {1, 1, 1, 1}, 4))},
      {"gemm_rowdot_k70", "gemm_rowdot", gpu, FcGraph(3, 9, 70)},
      // The implicit GEMM on matrix units (emulated): 40 output channels
      // and 150 columns (tails of every tile), K 72.
      {"igemm_mma_k3", "conv2d_igemm_mma_tuned", gpu,
       ConvGraph({1, 8, 10, 15}, 40, {3, 3}, ConvAttrs({1, 1}, {1, 1, 1, 1}), kRelu)},
      // K ordered channels innermost (32 channels, 3x3, padded): 72
      // output channels, 99 columns.
      {"igemm_mma_kc", "conv2d_igemm_mma", gpu,
       ConvGraph({1, 32, 9, 11}, 72, {3, 3}, ConvAttrs({1, 1}, {1, 1, 1, 1}))},
      // The 1x1 layers taken first: 256 input channels, 260 output
      // channels (a tail past every tile), 35 columns.
      {"igemm_mma_pointwise", "conv2d_igemm_mma", gpu,
       ConvGraph({1, 256, 5, 7}, 260, {1, 1}, ConvAttrs({1, 1}, {0, 0, 0, 0}))},
      // The local-memory tiles: 100 rows and columns (partial tiles), K 260
      // split in four slices whose last ends in a partial K step; float4
      // loads. Gemm with its bias and K 36 on the 128x128 tile.
      {"matmul_local_128x64", "matmul_local_128x64", gpu, MatMulGraph(100, 100, 260)},
      {"matmul_local_64x64", "matmul_local_64x64", gpu, MatMulGraph(100, 100, 260)},
      {"matmul_local_32x32", "matmul_local_32x32", gpu, MatMulGraph(100, 100, 260)},
      {"matmul_local_128x128", "matmul_local_128x128", gpu, MatMulGraph(100, 100, 260)},
      {"gemm_local_128x64", "gemm_local_128x64", gpu, FcGraph(100, 100, 36)},
      {"gemm_local_64x64", "gemm_local_64x64", gpu, FcGraph(100, 100, 36)},
      {"gemm_local_32x32", "gemm_local_32x32", gpu, FcGraph(100, 100, 36)},
      {"gemm_local_128x128", "gemm_local_128x128", gpu, FcGraph(100, 100, 36)},
      // The matrix-unit tiles (emulated on PoCL): 100 rows and 92 columns
      // (partial tiles and warps), K 260 (split in slices, the last ending
      // in a partial K step; float4 loads); Gemm with its bias, K 36.
      // Local stages (db 2 and 3) with them.
      {"matmul_mma_part1", "matmul_mma", gpu, MatMulGraph(100, 92, 260), 0, 6},
      {"matmul_mma_part2", "matmul_mma", gpu, MatMulGraph(100, 92, 260), 6, 12},
      {"matmul_mma_part3", "matmul_mma", gpu, MatMulGraph(100, 92, 260), 12, 18},
      {"matmul_mma_part4", "matmul_mma", gpu, MatMulGraph(100, 92, 260), 18},
      {"gemm_mma_part1", "gemm_mma", gpu, FcGraph(100, 92, 36), 0, 6},
      {"gemm_mma_part2", "gemm_mma", gpu, FcGraph(100, 92, 36), 6, 12},
      {"gemm_mma_part3", "gemm_mma", gpu, FcGraph(100, 92, 36), 12, 18},
      {"gemm_mma_part4", "gemm_mma", gpu, FcGraph(100, 92, 36), 18},
      // Three rows, 21 columns (a partial float4 run), K 42.
      {"matmul_gemv", "matmul_gemv", gpu, MatMulGraph(3, 21, 42)},
      {"gemm_gemv", "gemm_gemv", gpu, FcGraph(3, 21, 42)},
      // 9 query rows and 37 keys: partial row groups and key tiles.
      {"attention_cpu_l9x37", "attention_cpu", cpu, AttentionGraph(2, 9, 37, 16)},
      {"attention_cpu_kt_l9x37", "attention_cpu_kt", cpu, AttentionGraph(2, 9, 37, 16)},
      {"attention_decode_l1x37", "attention_decode", gpu, AttentionGraph(2, 1, 37, 16)},
      // Matrix units (emulated): 21 query rows, 70 keys.
      {"attention_mma_l21x70_part1", "attention_mma", gpu, AttentionGraph(2, 21, 70, 16), 0, 6},
      {"attention_mma_l21x70_part2", "attention_mma", gpu, AttentionGraph(2, 21, 70, 16), 6},
      {"attention_gpu_l9x37_part1", "attention_gpu", gpu, AttentionGraph(2, 9, 37, 16), 0, 12},
      {"attention_gpu_l9x37_part2", "attention_gpu", gpu, AttentionGraph(2, 9, 37, 16), 12, 24},
      {"attention_gpu_l9x37_part3", "attention_gpu", gpu, AttentionGraph(2, 9, 37, 16), 24, 36},
      {"attention_gpu_l9x37_part4", "attention_gpu", gpu, AttentionGraph(2, 9, 37, 16), 36},
      // 1001 logits: chunks and strides that do not divide the row.
      {"sample_top_p_cpu", "sample", cpu, SampleGraph(1001, internal::SampleMode::kTopP)},
      {"sample_top_k_gpu", "sample", gpu, SampleGraph(1001, internal::SampleMode::kTopK)},
  };
}

INSTANTIATE_TEST_SUITE_P(Variants, KernelParamsTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<SpaceCase>& info) {
                           return info.param.name;
                         });

// The case list above against the registry, read at run time: every
// registered variant with a param_space (of any op, built in or added later)
// has a case, and every case names a variant of an op in its graph.
TEST(KernelParamsCoverageTest, EveryVariantWithAParamSpaceHasACase) {
  // (op, variant) of each case: the op of the graph's node that has a
  // variant of the case's name.
  std::set<std::pair<std::string, std::string>> cased;
  for (const SpaceCase& c : Cases()) {
    absl::StatusOr<OpGraph> graph = c.build();
    ASSERT_TRUE(graph.ok()) << c.name << ": " << graph.status();
    bool found = false;
    for (const Node& node : graph->graph.nodes()) {
      const OpDef* def = FindOp(node.op);
      if (def == nullptr) continue;
      for (const KernelVariant& v : def->variants) {
        if (v.name != c.variant) continue;
        EXPECT_TRUE(v.param_space) << c.name << ": variant '" << c.variant << "' of op '"
                                   << node.op.name() << "' has no param_space to sweep";
        cased.insert({node.op.name(), v.name});
        found = true;
      }
    }
    EXPECT_TRUE(found) << c.name << ": no op of its graph has a variant '" << c.variant << "'";
  }
  std::vector<std::string> missing;
  for (const OpDef* def : RegisteredOps()) {
    for (const KernelVariant& v : def->variants) {
      if (v.param_space && cased.count({def->type.name(), v.name}) == 0) {
        missing.push_back(absl::StrCat("op '", def->type.name(), "' variant '", v.name, "'"));
      }
    }
  }
  EXPECT_TRUE(missing.empty())
      << missing.size() << " variant(s) with a param_space (the auto-tuner's search space) have "
      << "no case in tests/ops/kernel_params_test.cc:\n  " << absl::StrJoin(missing, "\n  ")
      << "\nAdd a SpaceCase to Cases() for each: {name, \"<variant>\", the kernel family "
         "whose fits() accepts it (cpu or gpu), a builder of a small one-node graph whose node "
         "the variant fits, with shapes that leave partial tiles at the edges}; split a space "
         "of more than ~8 sets into parts [begin, end) (see the conv2d_tiled cases).";
}

}  // namespace
}  // namespace recq::optest
