// The fused attention op (engine/ops/attention.h) against the CPU
// reference: ViT's heads read from a packed QKV projection, decode (one
// query row against 1 to 300 keys), Swin windows with a relative-position
// bias and a window mask, BERT's additive mask derived from an int input,
// causal masking, and odd head widths; every GPU variant parameter set of
// its tuning space on the shapes where they differ, the CPU variants with
// their row counts, the matrix-unit variant emulated on PoCL.
//
// Tolerance: |actual - expected| <= 1e-5 + 1e-4 |expected| per element
// (float32 sums of up to 300 products of magnitude <= 1, the online
// softmax's rescaling, and OpenCL's 3-ulp exp), and the harness's fp16
// tolerance under half storage.
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/attention.h"
#include "engine/ops/typed.h"
#include "gtest/gtest.h"
#include "ops/op_test_util.h"
#include "recq/graph.h"

namespace recq::optest {
namespace {

using internal::AttentionAttrs;
using internal::AttentionView;
using internal::DenseAttention;

const OpType kAttention("Attention");

CheckOptions Tolerance() {
  CheckOptions o;
  o.atol = 1e-5f;
  o.rtol = 1e-4f;
  return o;
}

// Forces `variant` with `params` on every Attention node it fits, and
// counts those nodes in `*forced`.
KernelChooser Force(const std::string& variant, KernelParams params, std::shared_ptr<int> forced) {
  return [variant, params, forced](const Node& node, const LoweringContext&,
                                   absl::Span<const size_t> fitting) {
    const OpDef* def = FindOp(node.op);
    if (node.op == kAttention) {
      for (size_t i : fitting) {
        if (def->variants[i].name == variant) {
          ++*forced;
          return KernelChoice{i, params};
        }
      }
    }
    return KernelChoice{fitting[0], {}};
  };
}

// Dense Q [B,H,Lq,D], K, V [B,H,Lk,D] inputs and an optional mask input.
absl::StatusOr<OpGraph> DenseGraph(const AttentionAttrs& a,
                                   const std::vector<int64_t>& mask_shape = {}) {
  OpGraphBuilder b;
  TensorRef q = b.Input("q", {a.batch, a.heads, a.lq, a.dk}, -1.5f, 1.5f);
  TensorRef k = b.Input("k", {a.batch, a.heads, a.lk, a.dk}, -1.5f, 1.5f);
  TensorRef v = b.Input("v", {a.batch, a.heads, a.lk, a.dv});
  std::vector<TensorRef> in = {q, k, v};
  if (!mask_shape.empty()) in.push_back(b.Input("m", mask_shape, -3.0f, 3.0f));
  return std::move(b).Build(b.graph().AddNode(kAttention, in, a));
}

struct GpuParams {
  int64_t rows, key_tile, row_items;
};

struct MmaParams {
  int64_t warps, key_tile;
};

// Runs `graph` with the CPU variant's heuristic and each of `cpu`, with
// the GPU variant (forced on the device through KernelTarget::kGpu) with
// its heuristic and each of `gpu`, and with the matrix-unit variant
// (emulated) with each of `mma`, the first also with half storage.
void CheckAllVariants(const absl::StatusOr<OpGraph>& graph,
                      const std::vector<std::pair<int64_t, int64_t>>& cpu,
                      const std::vector<GpuParams>& gpu, const std::vector<MmaParams>& mma = {}) {
  ASSERT_TRUE(graph.ok()) << graph.status();
  CheckOptions base = Tolerance();
  RECQ_EXPECT_MATCHES_REFERENCE(graph, base);
  for (auto [rows, kb] : cpu) {
    SCOPED_TRACE(absl::StrCat("cpu rows=", rows, " key_block=", kb));
    CheckOptions o = Tolerance();
    o.kernel_targets = {EngineOptions::KernelTarget::kCpu};
    o.precisions = {EngineOptions::Precision::kFp32};
    o.optimize = {false};
    o.recorded_runs = 1;
    auto forced = std::make_shared<int>(0);
    o.choose_kernel = Force("attention_cpu", {{"rows", rows}, {"key_block", kb}}, forced);
    RECQ_EXPECT_MATCHES_REFERENCE(graph, o);
    EXPECT_GT(*forced, 0) << "attention_cpu did not fit";
  }
  // The keys-in-lanes CPU variant (query rows of 8 and more) with each
  // row count.
  int64_t lq = 0;
  for (const Node& node : graph->graph.nodes()) {
    if (const auto* a = node.attrs.get_if<AttentionAttrs>()) lq = a->lq;
  }
  for (int64_t rows : {1, 2, 4}) {
    if (lq < 8) break;
    SCOPED_TRACE(absl::StrCat("cpu_kt rows=", rows));
    CheckOptions o = Tolerance();
    o.kernel_targets = {EngineOptions::KernelTarget::kCpu};
    o.precisions = {EngineOptions::Precision::kFp32};
    if (rows == 4) o.precisions.push_back(EngineOptions::Precision::kFp16Storage);
    o.optimize = {false};
    o.recorded_runs = 1;
    auto forced = std::make_shared<int>(0);
    o.choose_kernel = Force("attention_cpu_kt", {{"rows", rows}}, forced);
    RECQ_EXPECT_MATCHES_REFERENCE(graph, o);
    EXPECT_GT(*forced, 0) << "attention_cpu_kt did not fit";
  }
  for (const GpuParams& p : gpu) {
    SCOPED_TRACE(
        absl::StrCat("gpu rows=", p.rows, " key_tile=", p.key_tile, " row_items=", p.row_items));
    CheckOptions o = Tolerance();
    o.kernel_targets = {EngineOptions::KernelTarget::kGpu};
    o.precisions = {EngineOptions::Precision::kFp32};
    o.optimize = {false};
    o.recorded_runs = 1;
    auto forced = std::make_shared<int>(0);
    o.choose_kernel =
        Force("attention_gpu",
              {{"rows", p.rows}, {"key_tile", p.key_tile}, {"row_items", p.row_items}}, forced);
    RECQ_EXPECT_MATCHES_REFERENCE(graph, o);
    EXPECT_GT(*forced, 0) << "attention_gpu did not fit";
  }
  for (const MmaParams& p : mma) {
    SCOPED_TRACE(absl::StrCat("mma warps=", p.warps, " key_tile=", p.key_tile));
    CheckOptions o = Tolerance();
    o.kernel_targets = {EngineOptions::KernelTarget::kGpu};
    o.emulate_matrix_units = true;
    o.precisions = {EngineOptions::Precision::kFp32};
    if (&p == &mma.front()) o.precisions.push_back(EngineOptions::Precision::kFp16Storage);
    o.optimize = {false};
    o.recorded_runs = 1;
    auto forced = std::make_shared<int>(0);
    o.choose_kernel =
        Force("attention_mma", {{"warps", p.warps}, {"key_tile", p.key_tile}}, forced);
    const absl::Status status = CheckAgainstReference(graph, o);
    // PoCL's local memory holds every forced tile; a GPU's 48 KB may not,
    // and then the compile must say so (the tile runs in CI).
    if (TestDeviceFacts().IsGpuDevice() && RejectedForLocalMemory(status)) {
      std::cout << "attention_mma warps=" << p.warps << " key_tile=" << p.key_tile
                << " does not fit this device: " << status.message() << "\n";
      continue;
    }
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_GT(*forced, 0) << "attention_mma did not fit";
  }
}

// ViT-B/16: 12 heads of 64 over 197 tokens, Q, K and V read from one
// packed [197, 3 * 768] projection output, the output written as [1, 197,
// 768] (the layout the output projection reads): no transposes.
TEST(AttentionTest, VitHeadsFromPackedProjection) {
  const int64_t l = 197, h = 12, d = 64, e = h * d;
  AttentionAttrs a = DenseAttention(1, h, l, l, d, d);
  for (auto [view, offset] : {std::pair{&a.q, 0}, std::pair{&a.k, 1}, std::pair{&a.v, 2}}) {
    *view = AttentionView{offset * e, 1, 0, 0, d, 3 * e, 1};
  }
  a.o = AttentionView{0, 1, 0, 0, d, e, 1};
  a.out_shape = {1, l, e};
  OpGraphBuilder b;
  TensorRef qkv = b.Input("qkv", {l, 3 * e}, -1.5f, 1.5f);
  CheckAllVariants(std::move(b).Build(b.graph().AddNode(kAttention, {qkv, qkv, qkv}, a)), {{4, 8}},
                   {{16, 32, 8}, {4, 32, 32}, {4, 32, 64}}, {{8, 16}, {1, 64}});
}

// Decode: one query row against caches of 1 to 300 keys (a partial last
// tile, a single key, several full tiles), causal against the end of the
// cache (every key visible).
TEST(AttentionTest, OneQueryRowAgainstLongCaches) {
  for (int64_t lk : {1, 2, 7, 33, 64, 129, 300}) {
    SCOPED_TRACE(absl::StrCat("Lk=", lk));
    AttentionAttrs a = DenseAttention(1, 4, 1, lk, 64, 64);
    CheckAllVariants(DenseGraph(a), {{1, 4}, {1, 16}}, {{1, 32, 64}, {1, 16, 32}});
    a.causal = true;
    a.causal_offset = lk - 1;
    CheckAllVariants(DenseGraph(a), {}, {});
  }
}

// Decode with few (batch x heads) groups: the GPU family splits the keys
// over work-groups and merges the slices (attention_gpu_split), for one
// query row and for a few causal rows at the end of the cache. A slice
// holds at least two key tiles of up to 64 keys (the tile grows with the
// device's local memory), so every length here splits.
TEST(AttentionTest, DecodeSplitsTheKeysOverGroups) {
  for (int64_t lq : {1, 3}) {
    for (int64_t lk : {257, 300, 1000}) {
      SCOPED_TRACE(absl::StrCat("Lq=", lq, " Lk=", lk));
      AttentionAttrs a = DenseAttention(1, 1, lq, lk, 64, 64);
      a.causal = lq > 1;
      a.causal_offset = lk - lq;
      CheckOptions o = Tolerance();
      o.kernel_targets = {EngineOptions::KernelTarget::kGpu};
      auto forced = std::make_shared<int>(0);
      o.choose_kernel = Force("attention_gpu_split", {}, forced);
      RECQ_EXPECT_MATCHES_REFERENCE(DenseGraph(a), o);
      EXPECT_GT(*forced, 0) << "attention_gpu_split did not fit";
    }
  }
}

// Decode through attention_decode (one work-group per head, every key's
// score in local memory): caches of 1 to 1000 keys, with each group size,
// an additive mask per key, causal against the end of the cache and with
// an offset that hides all but the first keys, and a head width (80) that
// leaves items of the last group idle.
TEST(AttentionTest, DecodeOneRowPerGroup) {
  for (int64_t lk : {1, 7, 129, 1000}) {
    for (int64_t dv : {64, 80}) {
      for (int64_t items : {64, 128, 256}) {
        if (items < dv) continue;
        SCOPED_TRACE(absl::StrCat("Lk=", lk, " dv=", dv, " items=", items));
        AttentionAttrs a = DenseAttention(2, 3, 1, lk, 64, dv);
        a.mask = internal::BroadcastMaskView({2, 1, 1, lk}, 2);
        CheckOptions o = Tolerance();
        o.kernel_targets = {EngineOptions::KernelTarget::kGpu};
        o.precisions = {EngineOptions::Precision::kFp32};
        o.optimize = {false};
        o.recorded_runs = 1;
        auto forced = std::make_shared<int>(0);
        o.choose_kernel = Force("attention_decode", {{"items", items}}, forced);
        RECQ_EXPECT_MATCHES_REFERENCE(DenseGraph(a, {2, 1, 1, lk}), o);
        EXPECT_GT(*forced, 0) << "attention_decode did not fit";
        if (items != 128) continue;
        a.mask = AttentionView{};
        for (int64_t offset : {lk - 1, lk / 3}) {
          a.causal = true;
          a.causal_offset = offset;
          RECQ_EXPECT_MATCHES_REFERENCE(DenseGraph(a), o);
        }
      }
    }
  }
}

// Swin-T's windows: 49 tokens, 3 heads of 32, a relative-position bias
// [1, H, 49, 49] per head; and with a shifted window's mask folded in,
// one bias per window ([2, H, 49, 49]) repeating over a batch of 2 images
// of 2 windows (batch_mod 2).
TEST(AttentionTest, SwinWindowsWithBias) {
  AttentionAttrs a = DenseAttention(4, 3, 49, 49, 32, 32);
  a.mask = internal::BroadcastMaskView({1, 3, 49, 49}, 4);
  CheckAllVariants(DenseGraph(a, {1, 3, 49, 49}), {{2, 8}}, {{16, 32, 8}, {8, 16, 16}},
                   {{4, 16}, {1, 32}});
  a.mask = internal::DenseAttentionView(2, 3, 49, 49);
  CheckAllVariants(DenseGraph(a, {2, 3, 49, 49}), {}, {{32, 16, 4}}, {{4, 64}});
}

// BERT: an int attention mask [2, 33] (1 keep, 0 pad), different per
// batch row, turned into the additive (1 - m) * -10000 of [2, 1, 1, 33].
TEST(AttentionTest, AdditiveMaskFromIntsPerBatchRow) {
  const int64_t b = 2, h = 4, l = 33, d = 16;
  AttentionAttrs a = DenseAttention(b, h, l, l, d, d);
  a.mask = internal::BroadcastMaskView({b, 1, 1, l}, b);
  OpGraphBuilder g;
  TensorRef q = g.Input("q", {b, h, l, d}, -1.5f, 1.5f);
  TensorRef k = g.Input("k", {b, h, l, d}, -1.5f, 1.5f);
  TensorRef v = g.Input("v", {b, h, l, d});
  // Draws in [0, 2) rounded down: 0 or 1.
  TensorRef m = g.Input("mask", {b, l}, 0.0f, 2.0f, DataType::kInt64);
  GraphBuilder& gb = g.graph();
  TensorRef mf = gb.AddNode(internal::kCast, {m}, internal::CastAttrs{DataType::kFloat32});
  TensorRef inv = gb.AddNode(OpType::kSub, {gb.Constant("one", {}, {1.0f}), mf});
  TensorRef add = gb.AddNode(OpType::kMul, {inv, gb.Constant("big", {}, {-10000.0f})});
  TensorRef mask = gb.Reshape(add, {b, 1, 1, l});
  CheckAllVariants(std::move(g).Build(gb.AddNode(kAttention, {q, k, v, mask}, a)), {{4, 4}},
                   {{16, 16, 8}}, {{2, 32}, {1, 64}});
}

// Causal self-attention (PyTorch's is_causal: row i sees keys 0..i), and
// an offset that leaves the first rows without keys (zeros).
TEST(AttentionTest, Causal) {
  AttentionAttrs a = DenseAttention(2, 2, 40, 40, 32, 32);
  a.causal = true;
  CheckAllVariants(DenseGraph(a), {{4, 8}, {1, 16}}, {{16, 32, 8}, {4, 16, 16}},
                   {{1, 32}, {8, 16}});
  a.causal_offset = -3;
  CheckAllVariants(DenseGraph(a), {{2, 4}}, {{8, 16, 8}}, {{2, 16}});
}

// Head widths that no vector divides (7), Dv != Dk, more keys than
// queries, and a transposed output view.
TEST(AttentionTest, OddWidthsAndStrides) {
  AttentionAttrs a = DenseAttention(1, 3, 10, 23, 7, 12);
  CheckAllVariants(DenseGraph(a), {{4, 8}}, {{4, 16, 4}});
  a = DenseAttention(2, 2, 5, 9, 20, 20);
  // Output as [B, Dv, H, Lq]: a strided column view.
  a.o = AttentionView{0, 2, 20 * 2 * 5, 0, 5, 1, 2 * 5};
  a.out_shape = {2, 20, 2, 5};
  CheckAllVariants(DenseGraph(a), {{2, 8}}, {{8, 16, 4}});
}

// The matrix-unit variant's edges: Dv != Dk (both whole mma tiles), more
// keys than a tile with a partial last one, a last block of 16 query rows
// partly filled, keys split over warps with a warp past the keys, a
// transposed output view, and K read by columns.
TEST(AttentionTest, MatrixUnitsOddShapes) {
  AttentionAttrs a = DenseAttention(2, 2, 21, 70, 16, 24);
  a.o = AttentionView{0, 2, 24 * 2 * 21, 0, 21, 1, 2 * 21};
  a.out_shape = {2, 24, 2, 21};
  CheckAllVariants(DenseGraph(a), {}, {}, {{1, 32}, {2, 64}, {4, 16}});
  // K stored as [B, H, Dk, Lk]: columns not contiguous, read one by one.
  a.k = AttentionView{0, 2, 2 * 16 * 70, 0, 16 * 70, 1, 70};
  CheckAllVariants(DenseGraph(a), {}, {}, {{8, 16}});
}

}  // namespace
}  // namespace recq::optest
