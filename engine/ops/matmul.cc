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
#include "recq/math_op_attrs.h"
#include "recq/status_macros.h"

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
// work-group of 256 items, RM x RN per item, laid out as RECQ_ML_CONTIG
// says (0 strided, 1 consecutive, 2 runs of four). Each tile's TK step
// (tk, 8 or 16) and double buffering (db) are tunable parameters, as is the
// layout (layout) of tiles whose register blocks are multiples of four.
struct LocalTile {
  const char* name;
  int64_t tm, tn, rm, rn;
  int64_t layout;
  int64_t min_m, min_n;  // below them the next tile wastes less
  int64_t nvidia_db;     // the heuristic's double buffering on NVIDIA GPUs
};
constexpr int64_t kLocalTk = 16;
// The fast tuner times the heuristics of the first two that fit: 128x64
// against 128x128 on large products. Per-shape fractions of the fp32 roof
// on an H100 (bench/gpu/gemm.sh, docs/performance.md): 128x128 wins where
// the output has few rows per column tile or the product is large
// (197x3072x768, 2048^3), 128x64 on 3072x768x768 and 197x768x3072.
constexpr LocalTile kLocalTiles[] = {
    {"matmul_local_128x64", 128, 64, 8, 4, 1, 96, 48, 1},
    {"matmul_local_128x128", 128, 128, 8, 8, 2, 96, 96, 0},
    {"matmul_local_64x64", 64, 64, 4, 4, 1, 48, 48, 1},
    {"matmul_local_32x32", 32, 32, 2, 2, 0, 16, 16, 1},
};

// A tile's parameters: its K step, double buffering and layout.
struct LocalParams {
  int64_t tk = kLocalTk;
  int64_t db = 0;
  int64_t layout = 1;
};

// LocalBytes: the local memory of `tile` with `p` (matmul_local.cl's as and
// bs, both halves when double-buffered).
uint64_t LocalBytes(const LocalTile& tile, const LocalParams& p) {
  return uint64_t((p.db + 1) * p.tk * (tile.tm + 4 + tile.tn)) * sizeof(float);
}

// LocalHeuristic: the parameters an untuned compile takes on `device`: a K
// step of 16 in the tile's layout, double-buffered on NVIDIA GPUs where an
// H100 ran the tile fastest so (2048^3 with 128x64: 52 % of the roof
// against 39 % single-buffered), single-buffered elsewhere.
LocalParams LocalHeuristic(const LocalTile& tile, const DeviceFacts& device) {
  LocalParams p;
  p.layout = tile.layout;
  if (device.family == DeviceFamily::kNvidiaGpu) p.db = tile.nvidia_db;
  return p;
}

// LocalParamsValid: every item reads whole float4 runs of the tiles, the
// layout fits the register block, and the local memory holds the tiles.
bool LocalParamsValid(const LocalTile& tile, const LocalParams& p, const DeviceFacts& device) {
  if (p.tk != 8 && p.tk != 16) return false;
  if (p.db != 0 && p.db != 1) return false;
  if (p.layout < 0 || p.layout > 2) return false;
  if (p.layout == 2 && (tile.rm % 4 != 0 || tile.rn % 4 != 0)) return false;
  if (p.layout == 1 && (tile.rm % 4 != 0 || tile.rn % 4 != 0)) return false;
  return device.LocalMemoryFits(LocalBytes(tile, p));
}

absl::StatusOr<LocalParams> LocalParamsOf(const LocalTile& tile, const LoweringContext& ctx,
                                          const Node& node) {
  const LocalParams h = LocalHeuristic(tile, ctx.device());
  LocalParams p;
  p.tk = ctx.ParamOr("tk", h.tk);
  p.db = ctx.ParamOr("db", h.db);
  p.layout = ctx.ParamOr("layout", h.layout);
  if (!LocalParamsValid(tile, p, ctx.device())) {
    return absl::InvalidArgumentError(
        absl::StrCat("node '", node.name, "': ", tile.name, " parameters tk=", p.tk, ", db=", p.db,
                     ", layout=", p.layout,
                     " are not valid here (tk 8 or 16, db 0 or 1, layout 0-2 within the "
                     "register block, local memory ",
                     LocalBytes(tile, p), " bytes)"));
  }
  return p;
}

KernelParams ToKernelParams(const LocalParams& p) {
  return {{"db", p.db}, {"layout", p.layout}, {"tk", p.tk}};
}

// LocalSpace: the heuristic's parameters first, then every valid set.
std::vector<KernelParams> LocalSpace(const LocalTile& tile, const DeviceFacts& device) {
  const LocalParams h = LocalHeuristic(tile, device);
  std::vector<KernelParams> space = {ToKernelParams(h)};
  for (int64_t tk : {8, 16}) {
    for (int64_t db : {0, 1}) {
      for (int64_t layout : {tile.layout, int64_t{2}}) {
        const LocalParams p{tk, db, layout};
        if (!LocalParamsValid(tile, p, device)) continue;
        KernelParams kp = ToKernelParams(p);
        if (std::find(space.begin(), space.end(), kp) == space.end()) space.push_back(kp);
      }
    }
  }
  return space;
}

// SplitKOf: the slices of K for `tile` over `s`: enough work-groups for
// about two per compute unit, keeping at least four TK steps per slice and
// at most 16 slices (each adds a pass over the output to the reduction).
// ViT-B/16's MLP output (M 197, K 3072, N 768) has 48 tiles of 64x64 for
// 132 compute units. The heuristic's K step decides it, so that every
// parameter set of a node splits K alike.
int64_t SplitKOf(int64_t tm, int64_t tn, const MatMulShape& s, const DeviceFacts& device) {
  const int64_t tiles = static_cast<int64_t>(CeilDiv(s.m, tm) * CeilDiv(s.n, tn)) *
                        Product(s.batch, 0, s.batch.size());
  const int64_t units = device.compute_units != 0 ? device.compute_units : 16;
  const int64_t want = std::max<int64_t>(1, 2 * units / std::max<int64_t>(1, tiles));
  return std::clamp<int64_t>(std::min<int64_t>(want, s.k / (4 * kLocalTk)), 1, 16);
}

size_t SplitKScratch(int64_t tm, int64_t tn, const MatMulShape& s, const DeviceFacts& device) {
  const int64_t sk = SplitKOf(tm, tn, s, device);
  return sk > 1
             ? size_t(sk) * size_t(s.m * s.n * Product(s.batch, 0, s.batch.size())) * sizeof(float)
             : 0;
}

// LocalTilesRun: the device runs work-groups of 256 items of the GPU family,
// its local memory holds the tile's A and B slices with the heuristic's
// parameters (matmul_local.cl), and staging through local memory pays (not
// where it is global memory: Mali).
bool LocalTilesRun(const LocalTile& tile, const DeviceFacts& device) {
  return device.GpuKernels() &&
         (device.max_work_group_size == 0 || device.max_work_group_size >= 256) &&
         device.LocalMemoryTilesPay() &&
         LocalParamsValid(tile, LocalHeuristic(tile, device), device);
}

bool LocalFits(const LocalTile& tile, const Node& node, const LoweringContext& ctx) {
  if (!LocalTilesRun(tile, ctx.device())) return false;
  const MatMulShape s = ShapeOfMatMul(ctx, node);
  return s.batch.size() <= 8 && s.m >= tile.min_m && s.n >= tile.min_n;
}

// The epilogue a product applies as it writes Y = act(alpha * A*B + beta *
// C[m * c_sm + n * c_sn]): matmul_local (one slice of K) or
// matmul_local_reduce (split K), and matmul_packed (which ignores `mode`
// and tests C at run time). Gemm's alpha, beta * C and activation; a
// MatMul's absorbed Add and its activation, or none.
struct ProductEpilogue {
  int mode = 0;  // RECQ_ML_EPILOGUE
  DispatchArg c = DispatchArg::Null();
  // A residual of the output's shape added after C (RECQ_ML_RES): a second
  // Add after a Linear layer's bias, or the Add after a Gemm.
  DispatchArg r = DispatchArg::Null();
  float alpha = 1.0f, beta = 0.0f;
  int64_t c_sm = 0, c_sn = 0;
  Activation act;
  // The LayerNorm over the output's rows right after it
  // (LoweringContext::NormAfter), which the split-K reduction computes.
  const Node* norm = nullptr;
};

// AddEpilogueArgs appends the epilogue's scalars in the order every product
// kernel takes them: alpha, beta, C's row and column strides, then the
// activation's kind and parameters.
void AddEpilogueArgs(Dispatch& d, const ProductEpilogue& e) {
  d.args.push_back(DispatchArg::Scalar(e.alpha));
  d.args.push_back(DispatchArg::Scalar(e.beta));
  AddInts(d, {e.c_sm, e.c_sn});
  AddActivation(d, e.act);
}

// AddProductOptions appends the build options every tiled product kernel
// takes after its tile's: the epilogue, float4 loads, the slices of K, and,
// where the kernel applies the epilogue's activation itself (one slice,
// Gemm's epilogue), that activation (common.cl's RECQ_ACT_FIXED).
void AddProductOptions(std::vector<std::string>& options, const ProductEpilogue& e, bool vec,
                       int64_t sk) {
  options.push_back(absl::StrCat("-DRECQ_ML_EPILOGUE=", e.mode));
  options.push_back(absl::StrCat("-DRECQ_ML_VEC=", vec ? 1 : 0));
  options.push_back(absl::StrCat("-DRECQ_ML_SK=", sk));
  if (e.r.kind != DispatchArg::Kind::kNull) options.push_back("-DRECQ_ML_RES=1");
  if (sk == 1 && e.mode == 1) options.push_back(FixedActivationOption(e.act));
}

// AddEpilogue: a MatMul's (of N columns) with the Add after it absorbed (a
// Linear layer's bias [N] or a residual of the output's shape), the
// residual Add after a bias where the pass paired it too
// (LoweringContext::ResidualAfterBias; only variants that
// absorbs_bias_then_residual), and the last Add's activation, from
// LoweringContext::OutputOf.
ProductEpilogue AddEpilogue(LoweringContext& ctx, const Node& node, ValueId residual,
                            const Activation& act, int64_t n) {
  ProductEpilogue e;
  e.norm = ctx.NormAfter(node);
  if (residual == kNoValue && act.kind == ActivationKind::kNone) return e;
  e.r = ctx.Arg(ctx.ResidualAfterBias(node));
  e.mode = act.kind != ActivationKind::kNone ? 1 : 2;
  e.c = ctx.Arg(residual);
  e.beta = 1.0f;
  if (residual != kNoValue) {
    // A residual of the output's elements (of its shape, or a view's where
    // views sit between the node and the Add), else a bias along N.
    const Shape& r = ShapeOf(ctx, residual);
    const Shape& out = ShapeOf(ctx, node.outputs[0]);
    const bool full = Product(r, 0, r.size()) == Product(out, 0, out.size());
    e.c_sm = full ? n : 0;
    e.c_sn = 1;
  }
  e.act = act;
  ctx.MarkActivationApplied();
  return e;
}

// GemmEpilogue: Gemm's C, alpha, beta and fused activation; for the tiled
// variants (which absorb a residual Add) the residual after them and that
// Add's activation, from LoweringContext::OutputOf.
ProductEpilogue GemmEpilogue(LoweringContext& ctx, const Node& node) {
  const auto& a = AttrsOr<GemmAttrs>(node);
  const GemmShape g = GemmShapeOf(ctx, node);
  const LoweringContext::Output out = ctx.OutputOf(node);
  ProductEpilogue e;
  e.norm = ctx.NormAfter(node);
  e.mode = 1;
  e.c = ctx.Arg(COf(node));
  e.r = ctx.Arg(out.residual);
  e.alpha = a.alpha;
  e.beta = a.beta;
  e.c_sm = g.c_sm;
  e.c_sn = g.c_sn;
  e.act = out.activation;
  ctx.MarkActivationApplied();
  return e;
}

bool IsConstant(const LoweringContext& ctx, ValueId v) {
  return ctx.graph().value(v).kind == Value::Kind::kConstant;
}

// TransposedConstant stores a constant [N, K] (a Linear layer's weights,
// Gemm's transposed B) as [K, N] in place of the original.
DispatchArg TransposedConstant(LoweringContext& ctx, ValueId w_id, int64_t k, int64_t n) {
  absl::Span<const float> w = ctx.graph().value(w_id).floats();
  auto kn = std::make_shared<std::vector<float>>(size_t(k * n));
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t i = 0; i < k; ++i) (*kn)[i * n + r] = w[r * k + i];
  }
  return ctx.ReplaceConstant(w_id, std::move(kn));
}

// GemmTakesProduct: Gemm as the product kernels take it, A not transposed
// and B transposed only when constant (a Linear layer's [N, K] weights,
// stored as [K, N] by GemmB).
bool GemmTakesProduct(const Node& node, const LoweringContext& ctx) {
  const auto& a = AttrsOr<GemmAttrs>(node);
  return !a.trans_a && !(a.trans_b && !IsConstant(ctx, node.inputs[1]));
}

// GemmB: Gemm's B as [K, N], the transposed constant stored in place.
DispatchArg GemmB(LoweringContext& ctx, const Node& node, const GemmShape& g) {
  return AttrsOr<GemmAttrs>(node).trans_b ? TransposedConstant(ctx, node.inputs[1], g.k, g.n)
                                          : ctx.Arg(node.inputs[1]);
}

// GemmAsProduct: Gemm's one product as a MatMulShape (no batch, zero batch
// strides).
MatMulShape GemmAsProduct(const GemmShape& g) {
  MatMulShape s;
  s.m = g.m;
  s.n = g.n;
  s.k = g.k;
  s.sa = s.sb = BroadcastStrides({}, {});
  return s;
}

// A tiled product's dispatch (matmul_local.cl's or matmul_mma.cl's, which
// take the same arguments): the kernel, its range, and how many slices of
// K it sums (RECQ_ML_SK).
struct TiledProduct {
  std::string label;
  int32_t kernel = -1;
  std::array<size_t, 3> global{}, local{};
  int64_t sk = 1;
};

// EmitTiled emits `p` for `s` over A and B into Y, and with K split the
// reduction after it (matmul_local_reduce).
void EmitTiled(TiledProduct p, LoweringContext& ctx, const MatMulShape& s, DispatchArg a,
               DispatchArg b, DispatchArg y, const ProductEpilogue& epilogue) {
  const int64_t batch = Product(s.batch, 0, s.batch.size());
  const int64_t sk = p.sk;
  Dispatch d;
  d.label = sk > 1 ? absl::StrCat(p.label, "_sk") : std::move(p.label);
  d.kernel = p.kernel;
  d.work_dim = 3;
  d.global = p.global;
  d.local = p.local;
  const DispatchArg part = sk > 1 ? ctx.Scratch() : DispatchArg::Null();
  d.args = {a,
            b,
            sk > 1 ? DispatchArg::Null() : epilogue.c,
            sk > 1 ? DispatchArg::Null() : epilogue.r,
            sk > 1 ? DispatchArg::Null() : y,
            part};
  AddInts(d, {s.m, s.n, s.k});
  d.flops = 2.0 * double(s.m) * double(s.n) * double(s.k) * double(batch);
  d.args.push_back(DispatchArg::Scalar(Pad8(s.batch, 1)));
  d.args.push_back(DispatchArg::Scalar(s.sa));
  d.args.push_back(DispatchArg::Scalar(s.sb));
  AddEpilogueArgs(d, epilogue);
  const int64_t total = s.m * s.n * batch;
  const double partial_bytes = double(sk) * double(total) * sizeof(float);
  if (sk > 1) d.bytes += partial_bytes;
  ctx.Emit(std::move(d));
  if (sk == 1) return;
  Dispatch r;
  // With the LayerNorm after it, a work-group per row of N finishes the row
  // and normalises it, each item holding about 3 elements in registers
  // (up to 16: rows of up to 4096; longer ones leave the LayerNorm to
  // itself). On an H100 ViT-B/16's rows of 768 took 10 us a row-group
  // dispatch on 256 items and 14 us on 128.
  const size_t local = GroupForRow(ctx.device(), CeilDiv(s.n, int64_t(3)), 32, 256);
  const int64_t per = CeilDiv(s.n, int64_t(local));
  const Node* norm = per <= 16 ? epilogue.norm : nullptr;
  if (norm == nullptr) {
    r.label = "matmul_local_reduce";
    r.kernel = ctx.Kernel("matmul_local.cl", "matmul_local_reduce");
    SetRange(r, {size_t(total), 1, 1}, {GpuGroup(ctx.device(), 256), 1, 1});
  } else {
    r.label = "matmul_local_reduce_norm";
    r.kernel = ctx.Kernel(
        "matmul_local.cl", "matmul_local_reduce_norm",
        {absl::StrCat("-DRECQ_ML_NORM_LOCAL=", local), absl::StrCat("-DRECQ_ML_NORM_PER=", per)});
    SetRange(r, {size_t(total / s.n) * local, 1, 1}, {local, 1, 1});
  }
  r.args = {part, epilogue.c, epilogue.r, y};
  AddInts(r, {total, s.n, sk, epilogue.mode != 0 ? 1 : 0});
  AddEpilogueArgs(r, epilogue);
  r.bytes = partial_bytes +
            double(total) * sizeof(float) * (epilogue.r.kind != DispatchArg::Kind::kNull ? 2 : 1);
  if (norm != nullptr) {
    const bool has_bias = norm->inputs.size() > 2 && norm->inputs[2] != kNoValue;
    r.args.push_back(ctx.Arg(norm->inputs[1]));
    r.args.push_back(has_bias ? ctx.Arg(norm->inputs[2]) : DispatchArg::Null());
    r.args.push_back(ctx.Arg(norm->outputs[0]));
    r.args.push_back(DispatchArg::Scalar(AttrsOr<NormalizationAttrs>(*norm).epsilon));
    r.bytes += 2.0 * double(total) * sizeof(float);
    ctx.MarkNormApplied();
  }
  ctx.Emit(std::move(r));
}

// EmitLocal emits matmul_local's dispatch for `s` over A and B into Y, and
// with K split the reduction after it.
void EmitLocal(const LocalTile& tile, const LocalParams& p, LoweringContext& ctx, std::string label,
               const MatMulShape& s, DispatchArg a, DispatchArg b, DispatchArg y,
               const ProductEpilogue& epilogue) {
  const int64_t batch = Product(s.batch, 0, s.batch.size());
  TiledProduct t;
  t.label = std::move(label);
  t.sk = SplitKOf(tile.tm, tile.tn, s, ctx.device());
  const bool vec = s.k % 4 == 0 && s.n % 4 == 0;
  const size_t lx = size_t(tile.tn / tile.rn), ly = size_t(tile.tm / tile.rm);
  std::vector<std::string> options = {
      absl::StrCat("-DRECQ_ML_TM=", tile.tm), absl::StrCat("-DRECQ_ML_TN=", tile.tn),
      absl::StrCat("-DRECQ_ML_TK=", p.tk),    absl::StrCat("-DRECQ_ML_RM=", tile.rm),
      absl::StrCat("-DRECQ_ML_RN=", tile.rn), absl::StrCat("-DRECQ_ML_CONTIG=", p.layout),
      absl::StrCat("-DRECQ_ML_DB=", p.db)};
  AddProductOptions(options, epilogue, vec, t.sk);
  t.kernel = ctx.Kernel("matmul_local.cl", "matmul_local", options);
  t.global = {CeilDiv(s.n, tile.tn) * lx, CeilDiv(s.m, tile.tm) * ly, size_t(batch * t.sk)};
  t.local = {lx, ly, 1};
  EmitTiled(std::move(t), ctx, s, a, b, y, epilogue);
}

// MatMul, with the Add after it absorbed (a Linear layer's bias [N] or a
// residual of the output's shape) and that Add's activation.
absl::Status LowerLocal(const LocalTile& tile, LoweringContext& ctx, const Node& node) {
  const MatMulShape s = ShapeOfMatMul(ctx, node);
  RECQ_ASSIGN_OR_RETURN(const LocalParams p, LocalParamsOf(tile, ctx, node));
  const auto [y, residual, act] = ctx.OutputOf(node);
  EmitLocal(tile, p, ctx, tile.name, s, ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]),
            ctx.Arg(y), AddEpilogue(ctx, node, residual, act, s.n));
  return absl::OkStatus();
}

// Gemm (not A transposed) on the same tiles: B transposed (a Linear layer's
// constant [N, K] weights) is stored as [K, N]; C, alpha, beta and the
// fused activation are applied as the tiles are written. Fewer than 16 rows
// go to gemm_rowdot, whose work-group per output fills the device better.
bool GemmLocalFits(const LocalTile& tile, const Node& node, const LoweringContext& ctx) {
  if (!LocalTilesRun(tile, ctx.device()) || !GemmTakesProduct(node, ctx)) return false;
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  return out[0] >= std::max<int64_t>(16, tile.min_m) && out[1] >= tile.min_n;
}

absl::Status LowerGemmLocal(const LocalTile& tile, LoweringContext& ctx, const Node& node) {
  const GemmShape g = GemmShapeOf(ctx, node);
  RECQ_ASSIGN_OR_RETURN(const LocalParams p, LocalParamsOf(tile, ctx, node));
  EmitLocal(tile, p, ctx, absl::StrCat("gemm_local_", tile.tm, "x", tile.tn), GemmAsProduct(g),
            ctx.Arg(node.inputs[0]), GemmB(ctx, node, g), ctx.Arg(ctx.OutputOf(node).y),
            GemmEpilogue(ctx, node));
  return absl::OkStatus();
}

// The GPU family's products on matrix units (matmul_mma.cl): tf32 tensor
// cores at fp32 accuracy (three tf32 products per product), where the
// device has them or they are emulated (DeviceFacts::MatrixUnits). One variant per op; its
// parameters are the work-group tile (the warps' layout in it fixed per
// tile), the K step and double buffering.
struct MmaTile {
  int64_t tm, tn, wm, wn;
  int64_t Items() const { return 32 * (tm / wm) * (tn / wn); }
};
constexpr MmaTile kMmaTiles[] = {
    {128, 128, 64, 32},  // 8 warps of 4x4 mma tiles
    {128, 64, 64, 32},   // 4 warps of 4x4
    {64, 64, 32, 32},    // 4 warps of 2x4
    {64, 32, 32, 16},    // 4 warps of 2x2
};
constexpr int64_t kMmaTileCount = sizeof(kMmaTiles) / sizeof(kMmaTiles[0]);

struct MmaParams {
  int64_t tile = 0;  // index into kMmaTiles
  int64_t tk = 16;
  // 0: one local tile; 1: double-buffered through registers; 2 and 3:
  // db + 1 stages in local memory, filled db steps ahead (cp.async on
  // NVIDIA), for float4 runs only (MmaStagesFit).
  int64_t db = 1;
};

// The staged fills copy float4 runs: K and N multiples of 4.
bool MmaStagesFit(const MatMulShape& s) { return s.k % 4 == 0 && s.n % 4 == 0; }

uint64_t MmaLocalBytes(const MmaParams& p) {
  const MmaTile& t = kMmaTiles[p.tile];
  return uint64_t((p.db + 1) * (t.tm * (p.tk + 4) + p.tk * (t.tn + 8))) * sizeof(float);
}

bool MmaParamsValid(const MmaParams& p, const MatMulShape& s, const DeviceFacts& device) {
  if (p.tile < 0 || p.tile >= kMmaTileCount) return false;
  if (p.tk != 16 && p.tk != 32) return false;
  if (p.db < 0 || p.db > 3 || (p.db >= 2 && !MmaStagesFit(s))) return false;
  const int64_t items = kMmaTiles[p.tile].Items();
  if (device.max_work_group_size != 0 && size_t(items) > device.max_work_group_size) return false;
  return device.LocalMemoryFits(MmaLocalBytes(p));
}

// MmaHeuristic: 128x64 for products of 256 rows or fewer (a transformer's
// tokens at batch 1) where that still gives a quarter of the compute units
// a work-group or K is long, else 64x64 (the matrix units want many
// work-groups); K split where they are still few (SplitKOf); a K step of 32
// where the double-buffered tiles fit local memory, else 16. From
// bench/gpu/gemm.sh on an H100 (every tile and step per shape,
// docs/performance.md): 128x64 ran 197x2304x768 and 197x768x3072 fastest,
// 64x64 with a step of 32 197x768x768, 3072x768x768 and 3136x64x576, and
// 2048^3 within 6 % of the best. With the instructions themselves, three
// local stages (db 2, a step of 16 where 32 does not fit) on the same
// tile: on an H200 (bench/gpu/gemm.sh --precision=fp32|tf32, 2026-11-26)
// 3072x768x768 went 0.104 -> 0.100 ms at fp32 and 0.081 -> 0.064-0.067
// at tf32 (94 % of the fp32 units' roof), 197x768x3072 0.043 -> 0.041 and
// 0.039 -> 0.032, the other shapes the same or up to 6 % faster.
MmaParams MmaHeuristic(const MatMulShape& s, const DeviceFacts& device) {
  const int64_t units = device.compute_units != 0 ? device.compute_units : 16;
  const int64_t batch = Product(s.batch, 0, s.batch.size());
  const MmaTile& t = kMmaTiles[1];
  const int64_t groups = int64_t(CeilDiv(s.m, t.tm) * CeilDiv(s.n, t.tn)) * batch;
  MmaParams p;
  p.tile = s.m <= 256 && (4 * groups >= units || s.k >= 2048) ? 1 : 2;
  for (p.tk = 32; p.tk > 16 && !MmaParamsValid(p, s, device); p.tk /= 2) {
  }
  while (p.tile < kMmaTileCount - 1 && !MmaParamsValid(p, s, device)) ++p.tile;
  if (device.MatrixInstructionsInPtx()) {
    MmaParams staged = p;
    staged.db = 2;
    for (staged.tk = 32; staged.tk > 16 && !MmaParamsValid(staged, s, device); staged.tk /= 2) {
    }
    if (MmaParamsValid(staged, s, device)) return staged;
  }
  return p;
}

KernelParams ToKernelParams(const MmaParams& p) {
  return {{"db", p.db}, {"tile", p.tile}, {"tk", p.tk}};
}

// MmaSpace: the heuristic's parameters first, then every tile and K step,
// double-buffered where that fits local memory (on an H100 single
// buffering was at best 1 % faster, bench/gpu/gemm.sh over seven shapes),
// and in three or four local stages where those fit.
std::vector<KernelParams> MmaSpace(const MatMulShape& s, const DeviceFacts& device) {
  std::vector<KernelParams> space = {ToKernelParams(MmaHeuristic(s, device))};
  auto add = [&](const MmaParams& p) {
    KernelParams kp = ToKernelParams(p);
    if (std::find(space.begin(), space.end(), kp) == space.end()) space.push_back(kp);
  };
  for (int64_t tile = 0; tile < kMmaTileCount; ++tile) {
    for (int64_t tk : {16, 32}) {
      MmaParams p{tile, tk, 1};
      if (!MmaParamsValid(p, s, device)) p.db = 0;
      if (MmaParamsValid(p, s, device)) add(p);
      for (p.db = 2; p.db <= 3; ++p.db) {
        if (MmaParamsValid(p, s, device)) add(p);
      }
    }
  }
  return space;
}

absl::StatusOr<MmaParams> MmaParamsOf(const MatMulShape& s, const LoweringContext& ctx,
                                      const Node& node) {
  const MmaParams h = MmaHeuristic(s, ctx.device());
  MmaParams p;
  p.tile = ctx.ParamOr("tile", h.tile);
  p.tk = ctx.ParamOr("tk", h.tk);
  p.db = ctx.ParamOr("db", h.db);
  if (!MmaParamsValid(p, s, ctx.device())) {
    return absl::InvalidArgumentError(
        absl::StrCat("node '", node.name, "': matmul_mma parameters tile=", p.tile, ", tk=", p.tk,
                     ", db=", p.db, " are not valid here (tile 0-", kMmaTileCount - 1,
                     ", tk 16 or 32, db 0 to 3 (2 and 3 with K and N multiples of 4), within the "
                     "work-group size and local memory)"));
  }
  return p;
}

// Scratch for the partial sums of any tile's split K.
size_t MmaScratch(const MatMulShape& s, const DeviceFacts& device) {
  size_t bytes = 0;
  for (const MmaTile& t : kMmaTiles) bytes = std::max(bytes, SplitKScratch(t.tm, t.tn, s, device));
  return bytes;
}

bool MmaRuns(const DeviceFacts& device) {
  return device.GpuKernels() && device.MatrixUnits() &&
         (device.max_work_group_size == 0 || device.max_work_group_size >= 128);
}

void EmitMma(const MmaParams& p, LoweringContext& ctx, std::string label, const MatMulShape& s,
             DispatchArg a, DispatchArg b, DispatchArg y, const ProductEpilogue& epilogue) {
  const MmaTile& tile = kMmaTiles[p.tile];
  const int64_t batch = Product(s.batch, 0, s.batch.size());
  TiledProduct t;
  t.label = absl::StrCat(label, "_", tile.tm, "x", tile.tn);
  t.sk = SplitKOf(tile.tm, tile.tn, s, ctx.device());
  const bool vec = s.k % 4 == 0 && s.n % 4 == 0;
  std::vector<std::string> options = {
      absl::StrCat("-DRECQ_MM_TM=", tile.tm), absl::StrCat("-DRECQ_MM_TN=", tile.tn),
      absl::StrCat("-DRECQ_MM_WM=", tile.wm), absl::StrCat("-DRECQ_MM_WN=", tile.wn),
      absl::StrCat("-DRECQ_MM_TK=", p.tk),    absl::StrCat("-DRECQ_MM_DB=", p.db)};
  AddProductOptions(options, epilogue, vec, t.sk);
  if (ctx.device().MatrixInstructionsInPtx()) options.push_back("-DRECQ_MM_PTX=1");
  t.kernel = ctx.Kernel("matmul_mma.cl", "matmul_mma", options);
  t.global = {CeilDiv(s.n, tile.tn) * size_t(tile.Items()), CeilDiv(s.m, tile.tm),
              size_t(batch * t.sk)};
  t.local = {size_t(tile.Items()), 1, 1};
  EmitTiled(std::move(t), ctx, s, a, b, y, epilogue);
}

// MatMul: 16 or more rows and columns (fewer go to the vector products).
bool MmaFits(const Node& node, const LoweringContext& ctx) {
  if (!MmaRuns(ctx.device())) return false;
  const MatMulShape s = ShapeOfMatMul(ctx, node);
  return s.batch.size() <= 8 && s.m >= 16 && s.n >= 16;
}

absl::Status LowerMma(LoweringContext& ctx, const Node& node) {
  const MatMulShape s = ShapeOfMatMul(ctx, node);
  RECQ_ASSIGN_OR_RETURN(const MmaParams p, MmaParamsOf(s, ctx, node));
  const auto [y, residual, act] = ctx.OutputOf(node);
  EmitMma(p, ctx, "matmul_mma", s, ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]), ctx.Arg(y),
          AddEpilogue(ctx, node, residual, act, s.n));
  return absl::OkStatus();
}

// Gemm as gemm_local takes it, 16 or more rows and columns.
bool GemmMmaFits(const Node& node, const LoweringContext& ctx) {
  if (!MmaRuns(ctx.device()) || !GemmTakesProduct(node, ctx)) return false;
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  return out[0] >= 16 && out[1] >= 16;
}

absl::Status LowerGemmMma(LoweringContext& ctx, const Node& node) {
  const GemmShape g = GemmShapeOf(ctx, node);
  const MatMulShape s = GemmAsProduct(g);
  RECQ_ASSIGN_OR_RETURN(const MmaParams p, MmaParamsOf(s, ctx, node));
  EmitMma(p, ctx, "gemm_mma", s, ctx.Arg(node.inputs[0]), GemmB(ctx, node, g),
          ctx.Arg(ctx.OutputOf(node).y), GemmEpilogue(ctx, node));
  return absl::OkStatus();
}

// The GPU family's matrix-vector products (matmul_gemv.cl): at most
// kGemvRows rows of A (batches folded) against one matrix B. A work-group
// of 256 items owns 4*cg columns; cg (2 to 32) is tunable. The heuristic
// takes the widest groups that still give every compute unit one (on an
// H100, bench/gpu/gemm.sh: 1x3072x768 in 9.8 us with cg 4, 25 us with 32).
constexpr int64_t kGemvRows = 8;
constexpr int64_t kGemvItems = 256;
// The shortest rows of a Linear layer (B transposed) that gemm_rowdot takes
// from gemm_gemv (GemmGemvFits).
constexpr int64_t kRowdotK = 4096;

bool GemvFits(const Node& node, const LoweringContext& ctx) {
  if (!ctx.device().GpuKernels()) return false;
  if (ctx.device().max_work_group_size != 0 && ctx.device().max_work_group_size < kGemvItems) {
    return false;
  }
  const MatMulShape s = ShapeOfMatMul(ctx, node);
  return s.batch.size() <= 8 && Product(s.batch, 0, s.batch.size()) == 1 && s.m <= kGemvRows &&
         s.n >= 4;
}

int64_t GemvHeuristicCg(int64_t n, const DeviceFacts& device) {
  const int64_t units = device.compute_units != 0 ? device.compute_units : 16;
  for (int64_t cg : {32, 16, 8, 4}) {
    if (int64_t(CeilDiv(n, 4 * cg)) >= units) return cg;
  }
  return 2;
}

// EmitGemv emits matmul_gemv for `rows` rows of A [rows, K] against B [K, N]
// into Y with `epilogue`.
absl::Status EmitGemv(LoweringContext& ctx, const Node& node, int64_t rows, int64_t n, int64_t k,
                      DispatchArg a, DispatchArg b, DispatchArg y,
                      const ProductEpilogue& epilogue) {
  const int64_t heuristic = GemvHeuristicCg(n, ctx.device());
  RECQ_ASSIGN_OR_RETURN(const int64_t cg, Param(ctx, node, "cg", heuristic, {2, 4, 8, 16, 32}));
  const int64_t ks = kGemvItems / cg;
  Dispatch d;
  d.label = "matmul_gemv";
  d.kernel = ctx.Kernel(
      "matmul_gemv.cl", "matmul_gemv",
      {absl::StrCat("-DRECQ_GV_CG=", cg), absl::StrCat("-DRECQ_GV_KS=", ks),
       absl::StrCat("-DRECQ_GV_R=", rows), absl::StrCat("-DRECQ_GV_EPILOGUE=", epilogue.mode)});
  d.work_dim = 2;
  d.global = {size_t(CeilDiv(n, 4 * cg) * cg), size_t(ks), 1};
  d.local = {size_t(cg), size_t(ks), 1};
  d.args = {a, b, epilogue.c, y};
  AddInts(d, {n, k});
  AddEpilogueArgs(d, epilogue);
  d.flops = 2.0 * double(rows) * double(n) * double(k);
  ctx.Emit(std::move(d));
  return absl::OkStatus();
}

absl::Status LowerGemv(LoweringContext& ctx, const Node& node) {
  const MatMulShape s = ShapeOfMatMul(ctx, node);
  const auto [y, residual, act] = ctx.OutputOf(node);
  const ProductEpilogue e = AddEpilogue(ctx, node, residual, act, s.n);
  return EmitGemv(ctx, node, s.m, s.n, s.k, ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]),
                  ctx.Arg(y), e);
}

// Gemm's matrix-vector products (a decoder's Linear layers exported as
// Gemm): A not transposed, B [K, N] or constant [N, K] (stored as [K, N]),
// with C, alpha, beta and the activation.
bool GemmGemvFits(const Node& node, const LoweringContext& ctx) {
  if (!ctx.device().GpuKernels()) return false;
  if (ctx.device().max_work_group_size != 0 && ctx.device().max_work_group_size < kGemvItems) {
    return false;
  }
  if (!GemmTakesProduct(node, ctx)) return false;
  const auto& a = AttrsOr<GemmAttrs>(node);
  // A Linear layer with rows of 4096 or more goes to gemm_rowdot, one
  // work-group per output: `recq tune --exhaustive` on an H100 chose it for
  // VGG-11's and AlexNet's classifiers (K 25088, 9216 and 4096 at batch 1:
  // 0.147 against 0.209 ms, 0.058 against 0.081, 0.030 against 0.040).
  if (a.trans_b && GemmShapeOf(ctx, node).k >= kRowdotK) return false;
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  return out[0] <= kGemvRows && out[1] >= 4;
}

absl::Status LowerGemmGemv(LoweringContext& ctx, const Node& node) {
  const GemmShape g = GemmShapeOf(ctx, node);
  return EmitGemv(ctx, node, g.m, g.n, g.k, ctx.Arg(node.inputs[0]), GemmB(ctx, node, g),
                  ctx.Arg(node.outputs[0]), GemmEpilogue(ctx, node));
}

// The CPU family's product with constant weights (matmul_packed.cl): B
// packed into panels of VW columns, RM rows by VW columns per item. MatMul
// takes it when B is one matrix for every batch; Gemm when A is not
// transposed and B is constant.
struct PackedShape {
  int64_t m = 0, n = 0, k = 0;
  bool b_nk = false;  // B stored [N, K] (Gemm's transB)
};

KernelParams PackedHeuristic(const PackedShape& s, const DeviceFacts& device) {
  // 16 columns (PoCL's fastest vector width) unless N is below 16. 8 rows
  // unless M is below 8, or 4 where 8 would take more accumulator lanes
  // than the registers hold (AVX2). 16 items per group (a group shares one
  // panel of B and walks 128 rows): on ViT-B/16's MLP product (197x768 by
  // 768x3072, `recq tune --exhaustive`, AVX-512) 9.7 ms against 15.1 ms
  // with 4. One row for one (a classifier at batch 1: rows past M would be
  // computed and dropped). One step of K at a time, each element of A
  // broadcast from memory into its FMA: with four (a vload4 of each row of
  // A, four vectors of B held) the same products ran at 59-64 % of the
  // roof against 78-95 % (`gemm_bench --target=cpu`, ViT-B/16's, Swin-T's
  // and ConvNeXt-T's shapes, PoCL 3.1, 2-core AMD EPYC with AVX-512,
  // 2026-11-28), and on an AVX2 host the four steps' vectors spilled
  // (ViT-B/16: about 560 -> 370 ms with one).
  const bool wide = device.CpuAccumulatorLanes() >= 128;
  const int64_t vw = s.n >= 16 ? 16 : 8;
  const int64_t rows = wide ? 8 : 4;
  return {{"vw", vw}, {"rm", s.m >= rows ? rows : (s.m >= 4 ? 4 : 1)}, {"ks", 1}, {"wg", 16}};
}

std::vector<KernelParams> PackedSpace(const PackedShape& s, const DeviceFacts& device) {
  return ParamSpace(PackedHeuristic(s, device),
                    {{"vw", {8, 16}}, {"rm", {1, 4, 8}}, {"ks", {1, 4}}, {"wg", {1, 4, 16}}});
}

// PackPanels returns constant B ([K, N], or [N, K] when `b_nk`) as
// [ceil(N/vw)][K][vw], zero past N.
DispatchArg PackPanels(LoweringContext& ctx, ValueId b, const PackedShape& s, int64_t vw) {
  absl::Span<const float> w = ctx.graph().value(b).floats();
  const int64_t panels = CeilDiv(s.n, vw);
  auto packed = std::make_shared<std::vector<float>>(size_t(panels * s.k * vw), 0.0f);
  for (int64_t p = 0; p < panels; ++p) {
    for (int64_t k = 0; k < s.k; ++k) {
      for (int64_t j = 0; j < vw && p * vw + j < s.n; ++j) {
        const int64_t n = p * vw + j;
        (*packed)[size_t((p * s.k + k) * vw + j)] = s.b_nk ? w[n * s.k + k] : w[k * s.n + n];
      }
    }
  }
  return ctx.ReplaceConstant(b, std::move(packed));
}

absl::Status EmitPacked(LoweringContext& ctx, const Node& node, const PackedShape& s, ValueId a,
                        ValueId b, ValueId y, const ProductEpilogue& e) {
  const KernelParams h = PackedHeuristic(s, ctx.device());
  RECQ_ASSIGN_OR_RETURN(const int64_t vw, Param(ctx, node, "vw", h.at("vw"), {8, 16}));
  RECQ_ASSIGN_OR_RETURN(const int64_t rm, Param(ctx, node, "rm", h.at("rm"), {1, 4, 8}));
  RECQ_ASSIGN_OR_RETURN(const int64_t ks, Param(ctx, node, "ks", h.at("ks"), {1, 4}));
  RECQ_ASSIGN_OR_RETURN(const int64_t wg, ParamInRange(ctx, node, "wg", h.at("wg"), 1, 1024));
  Dispatch d;
  d.label = node.op == OpType::kGemm ? "gemm_packed" : "matmul_packed";
  d.kernel = ctx.Kernel("matmul_packed.cl", "matmul_packed",
                        {absl::StrCat("-DRECQ_MP_VW=", vw), absl::StrCat("-DRECQ_MP_RM=", rm),
                         absl::StrCat("-DRECQ_MP_KS=", ks)});
  const std::array<size_t, 3> range = {CeilDiv(s.m, rm), CeilDiv(s.n, vw), 1};
  SetRange(d, range, WorkGroupFor(range, size_t(wg)));
  d.args = {ctx.Arg(a), PackPanels(ctx, b, s, vw), e.c, e.r, ctx.Arg(y)};
  AddInts(d, {s.m, s.n, s.k});
  AddEpilogueArgs(d, e);
  d.flops = 2.0 * double(s.m) * double(s.n) * double(s.k);
  ctx.Emit(std::move(d));
  return absl::OkStatus();
}

// MatMul: B a constant matrix (batches of A are rows of one product).
bool MatMulPackedFits(const Node& node, const LoweringContext& ctx) {
  if (ctx.device().GpuKernels() || !IsConstant(ctx, node.inputs[1])) return false;
  const MatMulShape s = ShapeOfMatMul(ctx, node);
  return s.batch.size() <= 8 && Product(s.batch, 0, s.batch.size()) == 1 && s.n >= 8;
}

PackedShape MatMulPackedShape(const LoweringContext& ctx, const Node& node) {
  const MatMulShape s = ShapeOfMatMul(ctx, node);
  return {s.m, s.n, s.k, false};
}

// With the Add after it absorbed (bias [N] or a residual of Y's shape) and
// that Add's activation, as matmul_local does.
absl::Status LowerMatMulPacked(LoweringContext& ctx, const Node& node) {
  const PackedShape s = MatMulPackedShape(ctx, node);
  const auto [y, residual, act] = ctx.OutputOf(node);
  return EmitPacked(ctx, node, s, node.inputs[0], node.inputs[1], y,
                    AddEpilogue(ctx, node, residual, act, s.n));
}

bool GemmPackedFits(const Node& node, const LoweringContext& ctx) {
  const auto& a = AttrsOr<GemmAttrs>(node);
  return ctx.device().CpuKernels() && !a.trans_a && IsConstant(ctx, node.inputs[1]) &&
         GemmShapeOf(ctx, node).n >= 8;
}

PackedShape GemmPackedShape(const LoweringContext& ctx, const Node& node) {
  const GemmShape g = GemmShapeOf(ctx, node);
  return {g.m, g.n, g.k, AttrsOr<GemmAttrs>(node).trans_b};
}

// With the residual Add after it absorbed (GemmEpilogue), Y is that Add's
// output.
absl::Status LowerGemmPacked(LoweringContext& ctx, const Node& node) {
  return EmitPacked(ctx, node, GemmPackedShape(ctx, node), node.inputs[0], node.inputs[1],
                    ctx.OutputOf(node).y, GemmEpilogue(ctx, node));
}

// The CPU family's matrix-vector product with constant weights
// (matmul_gemv_cpu.cl): at most kGemvCpuRows rows (a decoder step's token,
// batches of A folded; any N) against B packed as matmul_packed packs it, PP
// panels of VW columns per item. Memory-bound: every weight is read once per
// step, so what matters is that every core keeps several streams in flight
// all the time: groups are made small enough that each core gets many
// (matmul_packed's 16 items per group gave GPT-2's 768-column layers 3
// groups for 2 cores).
constexpr int64_t kGemvCpuRows = 4;

KernelParams GemvCpuHeuristic(const PackedShape& s, const DeviceFacts& device) {
  const int64_t vw = s.n >= 16 ? 16 : 8;
  const int64_t panels = CeilDiv(s.n, vw);
  const int64_t units = device.compute_units != 0 ? device.compute_units : 2;
  // Four streams of B per item (more misses in flight per core: GPT-2's LM
  // head, `gemm_bench --op=matmul --target=cpu --shapes=1x50257x768`, PoCL
  // 3.1 on the 2-core Xeon, 2026-11-26, load average near 6, medians of
  // four runs: 14.6 ms with pp 4, 22.5 ms with pp 1, 29.0 ms matmul_packed)
  // while that leaves eight items per core (a short tail when the cores
  // take the last ones); then the largest group of 16, 4 or 1 items that
  // leaves eight groups per core.
  int64_t pp = 4;
  while (pp > 1 && int64_t(CeilDiv(panels, pp)) < 8 * units) pp /= 2;
  const int64_t items = CeilDiv(panels, pp);
  int64_t wg = 16;
  while (wg > 1 && int64_t(CeilDiv(items, wg)) < 8 * units) wg /= 4;
  return {{"pp", pp}, {"vw", vw}, {"wg", wg}};
}

std::vector<KernelParams> GemvCpuSpace(const PackedShape& s, const DeviceFacts& device) {
  return ParamSpace(GemvCpuHeuristic(s, device),
                    {{"pp", {1, 2, 4}}, {"vw", {8, 16}}, {"wg", {1, 4, 16}}});
}

absl::Status EmitGemvCpu(LoweringContext& ctx, const Node& node, const PackedShape& s, ValueId a,
                         ValueId b, ValueId y, const ProductEpilogue& e) {
  const KernelParams h = GemvCpuHeuristic(s, ctx.device());
  RECQ_ASSIGN_OR_RETURN(const int64_t vw, Param(ctx, node, "vw", h.at("vw"), {8, 16}));
  RECQ_ASSIGN_OR_RETURN(const int64_t pp, Param(ctx, node, "pp", h.at("pp"), {1, 2, 4}));
  RECQ_ASSIGN_OR_RETURN(const int64_t wg, Param(ctx, node, "wg", h.at("wg"), {1, 4, 16}));
  Dispatch d;
  d.label = node.op == OpType::kGemm ? "gemm_gemv_cpu" : "matmul_gemv_cpu";
  d.kernel = ctx.Kernel("matmul_gemv_cpu.cl", "matmul_gemv_cpu",
                        {absl::StrCat("-DRECQ_GC_VW=", vw), absl::StrCat("-DRECQ_GC_R=", s.m),
                         absl::StrCat("-DRECQ_GC_PP=", pp)});
  const std::array<size_t, 3> range = {CeilDiv(CeilDiv(s.n, vw), pp), 1, 1};
  SetRange(d, range, {size_t(wg), 1, 1});
  d.args = {ctx.Arg(a), PackPanels(ctx, b, s, vw), e.c, ctx.Arg(y)};
  AddInts(d, {s.n, s.k});
  AddEpilogueArgs(d, e);
  d.flops = 2.0 * double(s.m) * double(s.n) * double(s.k);
  ctx.Emit(std::move(d));
  return absl::OkStatus();
}

bool MatMulGemvCpuFits(const Node& node, const LoweringContext& ctx) {
  if (ctx.device().GpuKernels() || !IsConstant(ctx, node.inputs[1])) return false;
  const MatMulShape s = ShapeOfMatMul(ctx, node);
  return s.batch.size() <= 8 && Product(s.batch, 0, s.batch.size()) == 1 && s.n >= 1 && s.m >= 1 &&
         s.m <= kGemvCpuRows;
}

absl::Status LowerMatMulGemvCpu(LoweringContext& ctx, const Node& node) {
  const PackedShape s = MatMulPackedShape(ctx, node);
  const auto [y, residual, act] = ctx.OutputOf(node);
  return EmitGemvCpu(ctx, node, s, node.inputs[0], node.inputs[1], y,
                     AddEpilogue(ctx, node, residual, act, s.n));
}

bool GemmGemvCpuFits(const Node& node, const LoweringContext& ctx) {
  if (!ctx.device().CpuKernels() || AttrsOr<GemmAttrs>(node).trans_a ||
      !IsConstant(ctx, node.inputs[1])) {
    return false;
  }
  const GemmShape g = GemmShapeOf(ctx, node);
  return g.n >= 1 && g.m >= 1 && g.m <= kGemvCpuRows;
}

absl::Status LowerGemmGemvCpu(LoweringContext& ctx, const Node& node) {
  return EmitGemvCpu(ctx, node, GemmPackedShape(ctx, node), node.inputs[0], node.inputs[1],
                     node.outputs[0], GemmEpilogue(ctx, node));
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
    v.param_space = [&tile](const Node&, const LoweringContext& ctx) {
      return LocalSpace(tile, ctx.device());
    };
    v.scratch_bytes = [&tile](const Node& n, const LoweringContext& ctx) {
      return SplitKScratch(tile.tm, tile.tn, GemmAsProduct(GemmShapeOf(ctx, n)), ctx.device());
    };
    v.absorbs_residual_add = true;
    v.absorbs_layernorm_after = true;
    variants.push_back(std::move(v));
  }
  return variants;
}

KernelVariant MatMulTiledVariant() { return {"matmul_tiled", Fits, Lower}; }

KernelVariant MatMulMmaGpuVariant() {
  KernelVariant v{"matmul_mma", MmaFits, LowerMma};
  v.absorbs_residual_add = true;
  v.absorbs_layernorm_after = true;
  v.absorbs_bias_add = true;
  v.absorbs_bias_then_residual = true;
  v.param_space = [](const Node& n, const LoweringContext& ctx) {
    return MmaSpace(ShapeOfMatMul(ctx, n), ctx.device());
  };
  v.scratch_bytes = [](const Node& n, const LoweringContext& ctx) {
    return MmaScratch(ShapeOfMatMul(ctx, n), ctx.device());
  };
  return v;
}

KernelVariant GemmMmaGpuVariant() {
  KernelVariant v{"gemm_mma", GemmMmaFits, LowerGemmMma};
  v.absorbs_residual_add = true;
  v.absorbs_layernorm_after = true;
  v.param_space = [](const Node& n, const LoweringContext& ctx) {
    return MmaSpace(GemmAsProduct(GemmShapeOf(ctx, n)), ctx.device());
  };
  v.scratch_bytes = [](const Node& n, const LoweringContext& ctx) {
    return MmaScratch(GemmAsProduct(GemmShapeOf(ctx, n)), ctx.device());
  };
  return v;
}

KernelVariant MatMulGemvGpuVariant() {
  KernelVariant v{"matmul_gemv", GemvFits, LowerGemv};
  v.absorbs_residual_add = true;
  v.absorbs_bias_add = true;
  v.param_space = [](const Node& n, const LoweringContext& ctx) {
    const MatMulShape s = ShapeOfMatMul(ctx, n);
    return ParamSpace({{"cg", GemvHeuristicCg(s.n, ctx.device())}}, {{"cg", {2, 4, 8, 16, 32}}});
  };
  return v;
}

KernelVariant GemmGemvGpuVariant() {
  KernelVariant v{"gemm_gemv", GemmGemvFits, LowerGemmGemv};
  v.param_space = [](const Node& n, const LoweringContext& ctx) {
    return ParamSpace({{"cg", GemvHeuristicCg(GemmShapeOf(ctx, n).n, ctx.device())}},
                      {{"cg", {2, 4, 8, 16, 32}}});
  };
  return v;
}

std::vector<KernelVariant> MatMulLocalGpuVariants() {
  std::vector<KernelVariant> variants;
  for (const LocalTile& tile : kLocalTiles) {
    KernelVariant v;
    v.name = tile.name;
    v.fits = [&tile](const Node& n, const LoweringContext& ctx) { return LocalFits(tile, n, ctx); };
    v.lower = [&tile](LoweringContext& ctx, const Node& n) { return LowerLocal(tile, ctx, n); };
    v.param_space = [&tile](const Node&, const LoweringContext& ctx) {
      return LocalSpace(tile, ctx.device());
    };
    v.absorbs_residual_add = true;
    v.absorbs_layernorm_after = true;
    v.absorbs_bias_add = true;
    v.absorbs_bias_then_residual = true;
    v.scratch_bytes = [&tile](const Node& n, const LoweringContext& ctx) {
      return SplitKScratch(tile.tm, tile.tn, ShapeOfMatMul(ctx, n), ctx.device());
    };
    variants.push_back(std::move(v));
  }
  return variants;
}

KernelVariant MatMulPackedCpuVariant() {
  KernelVariant v{"matmul_packed", MatMulPackedFits, LowerMatMulPacked};
  v.absorbs_residual_add = true;
  v.absorbs_bias_add = true;
  v.absorbs_bias_then_residual = true;
  v.param_space = [](const Node& n, const LoweringContext& ctx) {
    return PackedSpace(MatMulPackedShape(ctx, n), ctx.device());
  };
  return v;
}

KernelVariant MatMulGemvCpuVariant() {
  KernelVariant v{"matmul_gemv_cpu", MatMulGemvCpuFits, LowerMatMulGemvCpu};
  v.absorbs_residual_add = true;
  v.absorbs_bias_add = true;
  v.param_space = [](const Node& n, const LoweringContext& ctx) {
    return GemvCpuSpace(MatMulPackedShape(ctx, n), ctx.device());
  };
  return v;
}

KernelVariant GemmGemvCpuVariant() {
  KernelVariant v{"gemm_gemv_cpu", GemmGemvCpuFits, LowerGemmGemvCpu};
  v.param_space = [](const Node& n, const LoweringContext& ctx) {
    return GemvCpuSpace(GemmPackedShape(ctx, n), ctx.device());
  };
  return v;
}

KernelVariant GemmPackedCpuVariant() {
  KernelVariant v{"gemm_packed", GemmPackedFits, LowerGemmPacked};
  v.absorbs_residual_add = true;
  v.param_space = [](const Node& n, const LoweringContext& ctx) {
    return PackedSpace(GemmPackedShape(ctx, n), ctx.device());
  };
  return v;
}

}  // namespace recq::internal
