// MatMul's register-tiled kernel (matmul.cl): the batched products of
// attention (Q*K^T, P*V) and the 2-D products with weights that exporters
// write as MatMul (ViT's MLP, Swin's projections). The plain one-output-per-
// work-item `matmul` in gemm.cl stays as the fallback for small N or M.
#include "engine/ops/matmul.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/status_macros.h"

namespace recq::internal {
namespace {

constexpr int64_t kTileM = 4;
constexpr int64_t kTileN = 8;

struct MatMulShape {
  int64_t m = 0, n = 0, k = 0;
  Shape batch;
  cl_int8 sa{}, sb{};
};

MatMulShape ShapeOfMatMul(const LoweringContext& ctx, const Node& node) {
  Shape a = ShapeOf(ctx, node.inputs[0]), b = ShapeOf(ctx, node.inputs[1]);
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  MatMulShape s;
  s.m = a[a.size() - 2];
  s.k = a.back();
  s.n = b.back();
  Shape ab(a.begin(), a.end() - 2);
  const Shape bb(b.begin(), b.end() - 2);
  if (Product(bb, 0, bb.size()) == 1 && bb.size() <= ab.size()) {
    // B is one matrix for every batch (weights): A's batches are rows of
    // one product, [batch * M, K] x [K, N] (ViT's [197, 1, 768] x [768, N]).
    s.m *= Product(ab, 0, ab.size());
    ab.assign(ab.size(), 1);
  }
  const size_t rank = std::max(ab.size(), bb.size());
  s.batch.resize(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - ab.size() ? 1 : ab[i - (rank - ab.size())];
    const int64_t db = i < rank - bb.size() ? 1 : bb[i - (rank - bb.size())];
    s.batch[i] = std::max(da, db);
  }
  if (rank > 8) return s;
  s.sa = BroadcastStrides(ab, s.batch);
  s.sb = BroadcastStrides(bb, s.batch);
  for (int i = 0; i < 8; ++i) {
    s.sa.s[i] *= static_cast<cl_int>(s.m * s.k);
    s.sb.s[i] *= static_cast<cl_int>(s.k * s.n);
  }
  return s;
}

bool Fits(const Node& node, const LoweringContext& ctx) {
  const MatMulShape s = ShapeOfMatMul(ctx, node);
  return s.batch.size() <= 8 && s.n >= kTileN && s.m >= kTileM;
}

absl::Status Lower(LoweringContext& ctx, const Node& node) {
  const MatMulShape s = ShapeOfMatMul(ctx, node);
  const int64_t batch = Product(s.batch, 0, s.batch.size());
  Dispatch& d = ctx.Emit(MakeDispatch(
      ctx, "matmul.cl", "matmul_tiled",
      {size_t((s.n + kTileN - 1) / kTileN), size_t((s.m + kTileM - 1) / kTileM), size_t(batch)}));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]), ctx.Arg(node.outputs[0])};
  AddInts(d, {s.m, s.n, s.k});
  d.flops = 2.0 * double(s.m) * double(s.n) * double(s.k) * double(batch);
  d.args.push_back(DispatchArg::Scalar(Pad8(s.batch, 1)));
  d.args.push_back(DispatchArg::Scalar(s.sa));
  d.args.push_back(DispatchArg::Scalar(s.sb));
  return absl::OkStatus();
}

// The GPU kernel in local-memory tiles (matmul_local.cl): TM x TN per
// work-group of 256 items, RM x RN per item, consecutive (float4 local
// reads) or strided.
struct LocalTile {
  const char* name;
  int64_t tm, tn, rm, rn;
  bool contiguous;
  int64_t min_m, min_n;  // below them the next tile wastes less
};
constexpr LocalTile kLocalTiles[] = {
    {"matmul_local_64x64", 64, 64, 4, 4, true, 48, 48},
    {"matmul_local_32x32", 32, 32, 2, 2, false, 16, 16},
};

// LocalTilesRun: the device runs work-groups of 256 items of the GPU family.
bool LocalTilesRun(const DeviceFacts& device) {
  return device.gpu && (device.max_work_group_size == 0 || device.max_work_group_size >= 256);
}

bool LocalFits(const LocalTile& tile, const Node& node, const LoweringContext& ctx) {
  if (!LocalTilesRun(ctx.device())) return false;
  const MatMulShape s = ShapeOfMatMul(ctx, node);
  return s.batch.size() <= 8 && s.m >= tile.min_m && s.n >= tile.min_n;
}

// LocalDispatch returns matmul_local's dispatch for `s` over A, B, C (null
// for MatMul) and Y, its arguments up to B's batch strides; the caller adds
// the epilogue's (alpha, beta, C's strides, the activation).
Dispatch LocalDispatch(const LocalTile& tile, LoweringContext& ctx, std::string label,
                       bool epilogue, const MatMulShape& s, std::vector<DispatchArg> operands) {
  const int64_t batch = Product(s.batch, 0, s.batch.size());
  const size_t lx = size_t(tile.tn / tile.rn), ly = size_t(tile.tm / tile.rm);
  Dispatch d;
  d.label = std::move(label);
  d.kernel =
      ctx.Kernel("matmul_local.cl", "matmul_local",
                 {absl::StrCat("-DRECQ_ML_TM=", tile.tm), absl::StrCat("-DRECQ_ML_TN=", tile.tn),
                  absl::StrCat("-DRECQ_ML_RM=", tile.rm), absl::StrCat("-DRECQ_ML_RN=", tile.rn),
                  absl::StrCat("-DRECQ_ML_CONTIG=", tile.contiguous ? 1 : 0),
                  absl::StrCat("-DRECQ_ML_EPILOGUE=", epilogue ? 1 : 0)});
  d.work_dim = 3;
  d.global = {CeilDiv(s.n, tile.tn) * lx, CeilDiv(s.m, tile.tm) * ly, size_t(batch)};
  d.local = {lx, ly, 1};
  d.args = std::move(operands);
  AddInts(d, {s.m, s.n, s.k});
  d.flops = 2.0 * double(s.m) * double(s.n) * double(s.k) * double(batch);
  d.args.push_back(DispatchArg::Scalar(Pad8(s.batch, 1)));
  d.args.push_back(DispatchArg::Scalar(s.sa));
  d.args.push_back(DispatchArg::Scalar(s.sb));
  return d;
}

absl::Status LowerLocal(const LocalTile& tile, LoweringContext& ctx, const Node& node) {
  Dispatch d = LocalDispatch(tile, ctx, tile.name, /*epilogue=*/false, ShapeOfMatMul(ctx, node),
                             {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]), DispatchArg::Null(),
                              ctx.Arg(node.outputs[0])});
  // The epilogue's arguments, unread without RECQ_ML_EPILOGUE.
  d.args.push_back(DispatchArg::Scalar(1.0f));
  d.args.push_back(DispatchArg::Scalar(0.0f));
  AddInts(d, {0, 0});
  AddActivation(d, Activation{});
  ctx.Emit(std::move(d));
  return absl::OkStatus();
}

// Gemm (not A transposed) on the same tiles: B transposed (a Linear layer's
// constant [N, K] weights) is stored as [K, N]; C, alpha, beta and the
// fused activation are applied as the tiles are written. Fewer than 16 rows
// go to gemm_rowdot, whose work-group per output fills the device better.
bool GemmLocalFits(const LocalTile& tile, const Node& node, const LoweringContext& ctx) {
  if (!LocalTilesRun(ctx.device())) return false;
  const auto& a = AttrsOr<GemmAttrs>(node);
  if (a.trans_a) return false;
  if (a.trans_b && ctx.graph().value(node.inputs[1]).kind != Value::Kind::kConstant) return false;
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  return out[0] >= std::max<int64_t>(16, tile.min_m) && out[1] >= tile.min_n;
}

absl::Status LowerGemmLocal(const LocalTile& tile, LoweringContext& ctx, const Node& node) {
  const auto& a = AttrsOr<GemmAttrs>(node);
  const GemmShape g = GemmShapeOf(ctx, node);
  DispatchArg b = ctx.Arg(node.inputs[1]);
  if (a.trans_b) {
    absl::Span<const float> w = ctx.graph().value(node.inputs[1]).floats();
    auto kn = std::make_shared<std::vector<float>>(size_t(g.k * g.n));
    for (int64_t r = 0; r < g.n; ++r) {
      for (int64_t i = 0; i < g.k; ++i) (*kn)[i * g.n + r] = w[r * g.k + i];
    }
    b = ctx.ReplaceConstant(node.inputs[1], std::move(kn));
  }
  MatMulShape s;  // one product: no batch, zero batch strides
  s.m = g.m;
  s.n = g.n;
  s.k = g.k;
  s.sa = s.sb = BroadcastStrides({}, {});
  Dispatch d =
      LocalDispatch(tile, ctx, absl::StrCat("gemm_local_", tile.tm, "x", tile.tn),
                    /*epilogue=*/true, s,
                    {ctx.Arg(node.inputs[0]), b, ctx.Arg(COf(node)), ctx.Arg(node.outputs[0])});
  d.args.push_back(DispatchArg::Scalar(a.alpha));
  d.args.push_back(DispatchArg::Scalar(a.beta));
  AddInts(d, {g.c_sm, g.c_sn});
  AddFusedActivation(ctx, d, node);
  ctx.Emit(std::move(d));
  return absl::OkStatus();
}

}  // namespace

ValueId COf(const Node& node) { return node.inputs.size() > 2 ? node.inputs[2] : kNoValue; }

GemmShape GemmShapeOf(const LoweringContext& ctx, const Node& node) {
  const auto& a = AttrsOr<GemmAttrs>(node);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  const Shape& in = ShapeOf(ctx, node.inputs[0]);
  GemmShape g{out[0], out[1], a.trans_a ? in[0] : in[1]};
  if (COf(node) != kNoValue) {
    Shape cs = ShapeOf(ctx, COf(node));
    while (cs.size() < 2) cs.insert(cs.begin(), 1);
    g.c_sm = cs[0] == 1 ? 0 : cs[1];
    g.c_sn = cs[1] == 1 ? 0 : 1;
  }
  return g;
}

std::vector<KernelVariant> GemmLocalGpuVariants() {
  std::vector<KernelVariant> variants;
  for (const LocalTile& tile : kLocalTiles) {
    KernelVariant v;
    v.name = absl::StrCat("gemm_local_", tile.tm, "x", tile.tn);
    v.fits = [&tile](const Node& n, const LoweringContext& ctx) {
      return GemmLocalFits(tile, n, ctx);
    };
    v.lower = [&tile](LoweringContext& ctx, const Node& n) { return LowerGemmLocal(tile, ctx, n); };
    variants.push_back(std::move(v));
  }
  return variants;
}

KernelVariant MatMulTiledVariant() { return {"matmul_tiled", Fits, Lower}; }

std::vector<KernelVariant> MatMulLocalGpuVariants() {
  std::vector<KernelVariant> variants;
  for (const LocalTile& tile : kLocalTiles) {
    KernelVariant v;
    v.name = tile.name;
    v.fits = [&tile](const Node& n, const LoweringContext& ctx) { return LocalFits(tile, n, ctx); };
    v.lower = [&tile](LoweringContext& ctx, const Node& n) { return LowerLocal(tile, ctx, n); };
    variants.push_back(std::move(v));
  }
  return variants;
}

}  // namespace recq::internal
