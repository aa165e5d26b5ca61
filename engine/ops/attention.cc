// The fused attention op (engine/ops/attention.h) and its kernels
// (attention.cl): FlashAttention-style GPU variants (query tiles per
// work-group, K and V streamed through local memory; on the fp32 units or
// on matrix units) and a CPU variant
// (vector work-items of a few query rows each). Both run one pass over the
// keys with an online softmax and write the output once.
#include "engine/ops/attention.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/fusion/elementwise_expr.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

const OpType kAttention("Attention");

// Local memory a GPU work-group may use: the device's
// CL_DEVICE_LOCAL_MEM_SIZE, or OpenCL's guaranteed 32 KiB where unknown.
uint64_t LocalMemBytes(const DeviceFacts& device) {
  return device.local_mem_bytes != 0 ? device.local_mem_bytes : 32 * 1024;
}

// The largest element index a view reaches over [batch, heads, rows, cols].
int64_t MaxOffset(const AttentionView& v, int64_t batch, int64_t heads, int64_t rows,
                  int64_t cols) {
  return v.Offset(batch - 1, heads - 1, rows - 1, cols - 1);
}

absl::Status CheckView(OpType op, const char* name, const AttentionView& v, const TensorDesc& t,
                       int64_t batch, int64_t heads, int64_t rows, int64_t cols) {
  if (v.offset < 0 || v.sb_lo < 0 || v.sb_hi < 0 || v.sh < 0 || v.sr < 0 || v.sc < 0) {
    return Bad(op, absl::StrCat(name, ": view offsets and strides must be non-negative"));
  }
  if (v.batch_mod < 1 || batch % v.batch_mod != 0) {
    return Bad(op,
               absl::StrCat(name, ": batch_mod ", v.batch_mod, " must divide the batch ", batch));
  }
  const int64_t last = MaxOffset(v, batch, heads, rows, cols);
  if (last >= t.NumElements() || last > INT32_MAX) {
    return Bad(op, absl::StrCat(name, ": the view reaches element ", last, " of ", t.ToString(),
                                " (", t.NumElements(), " elements)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<TensorDesc> Infer(const OpAttrs& attrs, InferInputs in) {
  const OpType op = kAttention;
  RECQ_RETURN_IF_ERROR(CheckInputCount(op, in, 3, 4));
  RECQ_ASSIGN_OR_RETURN(const AttentionAttrs* a, AttrsOf<AttentionAttrs>(op, attrs));
  if (a->batch < 1 || a->heads < 1 || a->lq < 1 || a->lk < 1 || a->dk < 1 || a->dv < 1) {
    return Bad(op, "batch, heads, lq, lk, dk and dv must be positive");
  }
  if (a->dk > 256 || a->dv > 256) {
    return Bad(op,
               absl::StrCat("head widths dk ", a->dk, " and dv ", a->dv, " must be at most 256"));
  }
  RECQ_RETURN_IF_ERROR(CheckView(op, "Q", a->q, *in[0], a->batch, a->heads, a->lq, a->dk));
  RECQ_RETURN_IF_ERROR(CheckView(op, "K", a->k, *in[1], a->batch, a->heads, a->lk, a->dk));
  RECQ_RETURN_IF_ERROR(CheckView(op, "V", a->v, *in[2], a->batch, a->heads, a->lk, a->dv));
  if (in.size() > 3 && in[3] != nullptr) {
    RECQ_RETURN_IF_ERROR(CheckView(op, "mask", a->mask, *in[3], a->batch, a->heads, a->lq, a->lk));
  }
  TensorDesc out;
  out.shape = a->out_shape;
  if (out.NumElements() != a->batch * a->heads * a->lq * a->dv) {
    return Bad(op, absl::StrCat("output shape ", S(a->out_shape), " must hold batch x heads x lq x",
                                " dv = ", a->batch * a->heads * a->lq * a->dv, " elements"));
  }
  RECQ_RETURN_IF_ERROR(CheckView(op, "output", a->o, out, a->batch, a->heads, a->lq, a->dv));
  return out;
}

cl_int8 ViewArg(const AttentionView& v) {
  cl_int8 r{};
  const int64_t f[7] = {v.offset, v.batch_mod, v.sb_lo, v.sb_hi, v.sh, v.sr, v.sc};
  for (int i = 0; i < 7; ++i) r.s[i] = static_cast<cl_int>(f[i]);
  return r;
}

bool HasMask(const Node& node) { return node.inputs.size() > 3 && node.inputs[3] != kNoValue; }

std::vector<std::string> CommonOptions(const Node& node, const AttentionAttrs& a) {
  return {absl::StrCat("-DRECQ_AT_DK=", a.dk), absl::StrCat("-DRECQ_AT_DV=", a.dv),
          absl::StrCat("-DRECQ_AT_MASK=", HasMask(node) ? 1 : 0),
          absl::StrCat("-DRECQ_AT_CAUSAL=", a.causal ? 1 : 0)};
}

void AddArgs(LoweringContext& ctx, const Node& node, const AttentionAttrs& a, Dispatch& d) {
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]), ctx.Arg(node.inputs[2]),
            HasMask(node) ? ctx.Arg(node.inputs[3]) : DispatchArg::Null(),
            ctx.Arg(node.outputs[0])};
  for (const AttentionView* v : {&a.q, &a.k, &a.v, &a.mask, &a.o}) {
    d.args.push_back(DispatchArg::Scalar(ViewArg(*v)));
  }
  AddInts(d, {a.lq, a.lk});
  d.args.push_back(DispatchArg::Scalar(a.scale));
  AddInts(d, {a.causal_offset});
  d.flops = 2.0 * double(a.batch * a.heads) * double(a.lq) * double(a.lk) * double(a.dk + a.dv);
}

// --- CPU ---

// The vector width along the head: the widest of 16, 8, 4 that divides both
// widths when Q, K and V have contiguous columns, else 1.
int64_t CpuWidth(const AttentionAttrs& a) {
  if (a.q.sc != 1 || a.k.sc != 1 || a.v.sc != 1) return 1;
  for (int64_t w : {16, 8, 4}) {
    if (a.dk % w == 0 && a.dv % w == 0) return w;
  }
  return 1;
}

// SetCpuRowRange: the CPU kernels' items, `rows` query rows of one (b, h)
// each, in groups of 4 items, fewer where that leaves under four groups per
// compute unit: a decode step's 12 heads made 3 groups for PoCL's 2 cores,
// one of which then ran two.
void SetCpuRowRange(const LoweringContext& ctx, const AttentionAttrs& a, int64_t rows,
                    Dispatch& d) {
  const std::array<size_t, 3> range = {CeilDiv(a.lq, rows), size_t(a.heads), size_t(a.batch)};
  const size_t items = range[0] * range[1] * range[2];
  const size_t units = ctx.device().compute_units != 0 ? ctx.device().compute_units : 1;
  size_t group = 4;
  while (group > 1 && CeilDiv(int64_t(items), int64_t(group)) < 4 * units) group /= 2;
  SetRange(d, range, WorkGroupFor(range, group));
}

KernelParams CpuHeuristic(const AttentionAttrs& a) {
  // Rows per item share each K and V load; one row for decode (Lq 1).
  // ViT-B/16's heads on PoCL (2-core Xeon, 2026-11-25, recq bench
  // --profile of a TorchScript-exported ViT attention block): 16 keys a
  // block and 4 rows a item ran 0.41 of the in-projection's time, 8 keys
  // 0.54, 2 rows 0.46, 1 row 0.89.
  const int64_t rows = a.lq >= 4 ? 4 : (a.lq >= 2 ? 2 : 1);
  return {{"rows", rows}, {"key_block", 16}};
}

absl::Status LowerCpu(LoweringContext& ctx, const Node& node) {
  const auto& a = AttrsOr<AttentionAttrs>(node);
  const KernelParams h = CpuHeuristic(a);
  RECQ_ASSIGN_OR_RETURN(int64_t rows, Param(ctx, node, "rows", h.at("rows"), {1, 2, 4, 8}));
  RECQ_ASSIGN_OR_RETURN(int64_t kb, Param(ctx, node, "key_block", h.at("key_block"), {4, 8, 16}));
  std::vector<std::string> options = CommonOptions(node, a);
  options.push_back("-DRECQ_AT_CPU=1");
  options.push_back(absl::StrCat("-DRECQ_AT_W=", CpuWidth(a)));
  options.push_back(absl::StrCat("-DRECQ_AT_R=", rows));
  options.push_back(absl::StrCat("-DRECQ_AT_KB=", kb));
  Dispatch d;
  d.label = "attention_cpu";
  d.kernel = ctx.Kernel("attention.cl", "attention_cpu", std::move(options));
  SetCpuRowRange(ctx, a, rows, d);
  AddArgs(ctx, node, a, d);
  ctx.Emit(std::move(d));
  return absl::OkStatus();
}

std::vector<KernelParams> CpuSpace(const Node& node, const LoweringContext&) {
  const auto& a = AttrsOr<AttentionAttrs>(node);
  return ParamSpace(CpuHeuristic(a), {{"rows", {1, 2, 4}}, {"key_block", {4, 8, 16}}});
}

// --- GPU ---

size_t GpuLocalBytes(const AttentionAttrs& a, int64_t bq, int64_t bk) {
  return sizeof(float) * size_t(bq * a.dk + bk * (a.dk + 1) + bk * a.dv + bq * (bk + 1));
}

// Whether (rows per group, keys per tile, items per row) can run: the group
// within the device's limit and the tiles within its local memory.
bool GpuParamsFit(const AttentionAttrs& a, const DeviceFacts& device, int64_t bq, int64_t bk,
                  int64_t tpr) {
  const size_t wg = size_t(bq * tpr);
  if (device.max_work_group_size != 0 && wg > device.max_work_group_size) return false;
  return wg <= 1024 && GpuLocalBytes(a, bq, bk) <= LocalMemBytes(device);
}

KernelParams GpuHeuristic(const AttentionAttrs& a, const DeviceFacts& device) {
  // 8 rows of 32 items, keys in tiles of 32: on an H100 (OpenCL 580.x,
  // 2026-11-25, recq bench --profile of a TorchScript-exported ViT-B/16
  // attention block) the kernel took 0.041 ms, against 0.049 for 16 rows
  // of 16 items, 0.073 for 16 rows of 8 and 0.111 for 32 rows of 4.
  // Decode (one query row): the whole group on that row.
  int64_t bq = 8, tpr = 32, bk = 32;
  if (a.lq == 1) {
    bq = 1;
    tpr = 64;
    bk = 64;
  } else if (a.lq < 8) {
    bq = 4;
  }
  while (bk > 16 && !GpuParamsFit(a, device, bq, bk, tpr)) bk /= 2;
  while (bq > 1 && !GpuParamsFit(a, device, bq, bk, tpr)) bq /= 2;
  while (tpr > 4 && !GpuParamsFit(a, device, bq, bk, tpr)) tpr /= 2;
  return {{"rows", bq}, {"key_tile", bk}, {"row_items", tpr}};
}

bool GpuFits(const Node& node, const LoweringContext& ctx) {
  if (!ctx.device().GpuKernels()) return false;
  const auto& a = AttrsOr<AttentionAttrs>(node);
  const KernelParams h = GpuHeuristic(a, ctx.device());
  return GpuParamsFit(a, ctx.device(), h.at("rows"), h.at("key_tile"), h.at("row_items"));
}

absl::Status LowerGpu(LoweringContext& ctx, const Node& node) {
  const auto& a = AttrsOr<AttentionAttrs>(node);
  const KernelParams h = GpuHeuristic(a, ctx.device());
  RECQ_ASSIGN_OR_RETURN(int64_t bq,
                        Param(ctx, node, "rows", h.at("rows"), {1, 2, 4, 8, 16, 32, 64}));
  RECQ_ASSIGN_OR_RETURN(int64_t bk, Param(ctx, node, "key_tile", h.at("key_tile"), {16, 32, 64}));
  RECQ_ASSIGN_OR_RETURN(int64_t tpr,
                        Param(ctx, node, "row_items", h.at("row_items"), {4, 8, 16, 32, 64}));
  if (!GpuParamsFit(a, ctx.device(), bq, bk, tpr)) {
    return absl::InvalidArgumentError(
        absl::StrCat("node '", node.name, "': rows=", bq, ", key_tile=", bk, ", row_items=", tpr,
                     " need a group of ", bq * tpr, " items and ", GpuLocalBytes(a, bq, bk),
                     " bytes of local memory; the device allows ", ctx.device().max_work_group_size,
                     " items and ", LocalMemBytes(ctx.device()), " bytes"));
  }
  std::vector<std::string> options = CommonOptions(node, a);
  options.push_back("-DRECQ_AT_GPU=1");
  options.push_back(absl::StrCat("-DRECQ_AT_BQ=", bq));
  options.push_back(absl::StrCat("-DRECQ_AT_BK=", bk));
  options.push_back(absl::StrCat("-DRECQ_AT_TPR=", tpr));
  Dispatch d;
  d.label = "attention_gpu";
  d.kernel = ctx.Kernel("attention.cl", "attention_gpu", std::move(options));
  const size_t wg = size_t(bq * tpr);
  SetRange(d, {CeilDiv(a.lq, bq) * wg, size_t(a.heads), size_t(a.batch)}, {wg, 1, 1});
  AddArgs(ctx, node, a, d);
  d.args.push_back(DispatchArg::Null());
  ctx.Emit(std::move(d));
  return absl::OkStatus();
}

// --- GPU, matrix units ---

// attention_mma's local memory: the 16 rows of Q, a tile per warp (K's,
// then V's), and where the matrix units are emulated the probabilities and
// the lanes' exchange.
size_t MmaLocalBytes(const AttentionAttrs& a, const DeviceFacts& device, int64_t warps,
                     int64_t bk) {
  size_t floats = size_t(16 * (a.dk + 4) + warps * bk * (std::max(a.dk, a.dv) + 4));
  if (!device.MatrixInstructionsInPtx()) floats += size_t(warps * (16 * (bk + 1) + 32));
  return sizeof(float) * floats;
}

bool MmaParamsFit(const AttentionAttrs& a, const DeviceFacts& device, int64_t warps, int64_t bk) {
  const size_t items = size_t(32 * warps);
  if (device.max_work_group_size != 0 && items > device.max_work_group_size) return false;
  return MmaLocalBytes(a, device, warps, bk) <= LocalMemBytes(device);
}

// Keys in tiles of 16 (32 past 256 keys, where a tile's fixed costs weigh
// more), split over as many warps as there are tiles, up to 8: a warp's
// work on a tile is a long chain of dependent steps, so more warps on
// fewer keys each finish sooner. On an H100 (recq run --profile,
// RECQ_TUNING=off, 2026-11-26) ViT-B/16's twelve attention dispatches took
// 0.24 ms on 8 warps of 16-key tiles, 0.25 on 4 of 32 and 0.48 on one warp
// of 64 (attention_gpu: 0.45); Swin-T's 0.15 ms on 4 warps of 16 keys,
// 0.17 on 2 of 32 and 0.19 on one of 64 (attention_gpu: 0.20).
KernelParams MmaHeuristic(const AttentionAttrs& a, const DeviceFacts& device) {
  int64_t bk = a.lk <= 256 ? 16 : 32;
  const int64_t tiles = CeilDiv(a.lk, bk);
  int64_t warps = 1;
  while (warps < 8 && 2 * warps <= tiles) warps *= 2;
  while (bk > 16 && !MmaParamsFit(a, device, warps, bk)) bk /= 2;
  while (warps > 1 && !MmaParamsFit(a, device, warps, bk)) warps /= 2;
  return {{"warps", warps}, {"key_tile", bk}};
}

// Q, K and V read four columns at a time: contiguous columns, and every
// offset and stride of the views a multiple of 4 (the head widths too).
bool MmaVec4(const AttentionAttrs& a) {
  for (const AttentionView* v : {&a.q, &a.k, &a.v}) {
    if (v->sc != 1) return false;
    for (int64_t x : {v->offset, v->sb_lo, v->sb_hi, v->sh, v->sr}) {
      if (x % 4 != 0) return false;
    }
  }
  return a.dk % 4 == 0 && a.dv % 4 == 0;
}

// 16 query rows or more (a warp's rows), head widths in whole mma tiles
// of 8 and at most 128 (the accumulators are registers).
bool MmaFits(const Node& node, const LoweringContext& ctx) {
  const DeviceFacts& device = ctx.device();
  if (!device.GpuKernels() || !device.MatrixUnits()) return false;
  const auto& a = AttrsOr<AttentionAttrs>(node);
  if (a.lq < 16 || a.dk % 8 != 0 || a.dv % 8 != 0 || a.dk > 128 || a.dv > 128) return false;
  const KernelParams h = MmaHeuristic(a, device);
  return MmaParamsFit(a, device, h.at("warps"), h.at("key_tile"));
}

absl::Status LowerMma(LoweringContext& ctx, const Node& node) {
  const auto& a = AttrsOr<AttentionAttrs>(node);
  const KernelParams h = MmaHeuristic(a, ctx.device());
  RECQ_ASSIGN_OR_RETURN(int64_t warps, Param(ctx, node, "warps", h.at("warps"), {1, 2, 4, 8}));
  RECQ_ASSIGN_OR_RETURN(int64_t bk, Param(ctx, node, "key_tile", h.at("key_tile"), {16, 32, 64}));
  if (!MmaParamsFit(a, ctx.device(), warps, bk)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node '", node.name, "': attention_mma with warps=", warps, ", key_tile=", bk, " needs ",
        32 * warps, " items and ", MmaLocalBytes(a, ctx.device(), warps, bk),
        " bytes of local memory; the device allows ", ctx.device().max_work_group_size,
        " items and ", LocalMemBytes(ctx.device()), " bytes"));
  }
  std::vector<std::string> options = CommonOptions(node, a);
  options.push_back("-DRECQ_AT_MMA=1");
  options.push_back(absl::StrCat("-DRECQ_AT_WARPS=", warps));
  options.push_back(absl::StrCat("-DRECQ_AT_BK=", bk));
  options.push_back(absl::StrCat("-DRECQ_AT_VEC4=", MmaVec4(a) ? 1 : 0));
  if (ctx.device().MatrixInstructionsInPtx()) options.push_back("-DRECQ_MM_PTX=1");
  Dispatch d;
  d.label = "attention_mma";
  d.kernel = ctx.Kernel("attention.cl", "attention_mma", std::move(options));
  const size_t items = size_t(32 * warps);
  SetRange(d, {CeilDiv(a.lq, 16) * items, size_t(a.heads), size_t(a.batch)}, {items, 1, 1});
  AddArgs(ctx, node, a, d);
  d.args.push_back(DispatchArg::Null());
  ctx.Emit(std::move(d));
  return absl::OkStatus();
}

std::vector<KernelParams> MmaSpace(const Node& node, const LoweringContext& ctx) {
  const auto& a = AttrsOr<AttentionAttrs>(node);
  std::vector<KernelParams> space;
  for (const KernelParams& p : ParamSpace(MmaHeuristic(a, ctx.device()),
                                          {{"warps", {1, 2, 4, 8}}, {"key_tile", {16, 32, 64}}})) {
    if (MmaParamsFit(a, ctx.device(), p.at("warps"), p.at("key_tile"))) space.push_back(p);
  }
  return space;
}

// --- GPU, keys split over work-groups (decode) ---

// SplitsOf returns how many slices of the keys give the device about two
// groups per compute unit when (batch x heads x query tiles) groups are
// too few, each slice at least two key tiles, at most 32; 1: no split.
int64_t SplitsOf(const AttentionAttrs& a, const DeviceFacts& device) {
  const KernelParams h = GpuHeuristic(a, device);
  const int64_t groups = a.batch * a.heads * static_cast<int64_t>(CeilDiv(a.lq, h.at("rows")));
  const int64_t units = device.compute_units != 0 ? device.compute_units : 16;
  const int64_t want = (2 * units + groups - 1) / groups;
  return std::clamp<int64_t>(std::min(want, a.lk / (2 * h.at("key_tile"))), 1, 32);
}

bool GpuSplitFits(const Node& node, const LoweringContext& ctx) {
  const auto& a = AttrsOr<AttentionAttrs>(node);
  return GpuFits(node, ctx) && a.lq <= 16 && SplitsOf(a, ctx.device()) > 1;
}

size_t GpuSplitScratch(const Node& node, const LoweringContext& ctx) {
  const auto& a = AttrsOr<AttentionAttrs>(node);
  return sizeof(float) * size_t(a.batch * a.heads * SplitsOf(a, ctx.device()) * a.lq * (a.dv + 2));
}

// The heuristic's tiles (not tuned: the scratch is sized from them) with
// the keys in SplitsOf slices, then attention_combine.
absl::Status LowerGpuSplit(LoweringContext& ctx, const Node& node) {
  const auto& a = AttrsOr<AttentionAttrs>(node);
  const KernelParams h = GpuHeuristic(a, ctx.device());
  const int64_t bq = h.at("rows"), bk = h.at("key_tile"), tpr = h.at("row_items");
  const int64_t splits = SplitsOf(a, ctx.device());
  std::vector<std::string> options = CommonOptions(node, a);
  options.push_back("-DRECQ_AT_GPU=1");
  options.push_back(absl::StrCat("-DRECQ_AT_BQ=", bq));
  options.push_back(absl::StrCat("-DRECQ_AT_BK=", bk));
  options.push_back(absl::StrCat("-DRECQ_AT_TPR=", tpr));
  options.push_back(absl::StrCat("-DRECQ_AT_SPLIT=", splits));
  Dispatch d;
  d.label = "attention_gpu_split";
  d.kernel = ctx.Kernel("attention.cl", "attention_gpu", options);
  const size_t wg = size_t(bq * tpr);
  SetRange(d, {CeilDiv(a.lq, bq) * wg, size_t(a.heads), size_t(a.batch * splits)}, {wg, 1, 1});
  AddArgs(ctx, node, a, d);
  d.args.push_back(ctx.Scratch());
  ctx.Emit(std::move(d));
  Dispatch c = MakeDispatch(ctx, "attention.cl", "attention_combine",
                            {size_t(a.dv), size_t(a.lq), size_t(a.batch * a.heads)}, options);
  c.args = {ctx.Scratch(), ctx.Arg(node.outputs[0]), DispatchArg::Scalar(ViewArg(a.o))};
  AddInts(c, {a.lq, a.heads});
  ctx.Emit(std::move(c));
  return absl::OkStatus();
}

// --- CPU, keys in vector lanes ---

// attention_cpu_kt: K copied transposed into scratch (attention.cl), then
// each row's scores of 16 keys summed as one vector. For query rows of 8
// and more (encoders, prefill); a decode step's one row keeps
// attention_cpu, which reads the cache in place.
constexpr int64_t kKtLanes = 16;

bool CpuKtFits(const Node& node, const LoweringContext& ctx) {
  return !ctx.device().GpuKernels() && AttrsOr<AttentionAttrs>(node).lq >= 8;
}

size_t CpuKtScratch(const Node& node, const LoweringContext&) {
  const auto& a = AttrsOr<AttentionAttrs>(node);
  return sizeof(float) * size_t(a.batch * a.heads * a.dk) * RoundUp(size_t(a.lk), kKtLanes);
}

KernelParams CpuKtHeuristic(const AttentionAttrs& a, const DeviceFacts& device) {
  // Rows an item, at most 4, as many as the accumulators (rows x DV lanes)
  // allow: with AVX-512's 32 vector registers twice the register-blocked
  // lanes (DeviceFacts::CpuAccumulatorLanes; 4 rows at DV 64 take 16
  // registers beside the four score vectors and a row of K^T, as measured
  // on ViT-B/16), else those lanes (AVX2's 16 registers; not measured).
  const int64_t lanes = device.CpuAccumulatorLanes();
  const int64_t budget = lanes >= 128 ? 2 * lanes : lanes;
  const int64_t fit = std::clamp<int64_t>(budget / a.dv, 1, 4);
  int64_t rows = 1;
  while (rows * 2 <= std::min<int64_t>(fit, a.lq)) rows *= 2;
  return {{"rows", rows}};
}

absl::Status LowerCpuKt(LoweringContext& ctx, const Node& node) {
  const auto& a = AttrsOr<AttentionAttrs>(node);
  RECQ_ASSIGN_OR_RETURN(
      const int64_t rows,
      Param(ctx, node, "rows", CpuKtHeuristic(a, ctx.device()).at("rows"), {1, 2, 4, 8}));
  std::vector<std::string> options = CommonOptions(node, a);
  options.push_back("-DRECQ_AT_CPU_KT=1");
  // V and the output in vectors along the head where V's columns are
  // contiguous (Q is read by element, K through kt).
  int64_t width = 1;
  for (int64_t w : {16, 8, 4}) {
    if (a.v.sc == 1 && a.dv % w == 0) {
      width = w;
      break;
    }
  }
  options.push_back(absl::StrCat("-DRECQ_AT_W=", width));
  options.push_back(absl::StrCat("-DRECQ_AT_R=", rows));
  Dispatch t =
      MakeDispatch(ctx, "attention.cl", "attention_cpu_kt_transpose",
                   {RoundUp(size_t(a.lk), kKtLanes), size_t(a.heads), size_t(a.batch)}, options);
  t.args = {ctx.Arg(node.inputs[1]), ctx.Scratch(), DispatchArg::Scalar(ViewArg(a.k))};
  AddInts(t, {a.lk, a.heads});
  ctx.Emit(std::move(t));
  Dispatch d;
  d.label = "attention_cpu_kt";
  d.kernel = ctx.Kernel("attention.cl", "attention_cpu_kt", std::move(options));
  SetCpuRowRange(ctx, a, rows, d);
  d.args = {ctx.Arg(node.inputs[0]), ctx.Scratch(), ctx.Arg(node.inputs[2]),
            HasMask(node) ? ctx.Arg(node.inputs[3]) : DispatchArg::Null(),
            ctx.Arg(node.outputs[0])};
  for (const AttentionView* v : {&a.q, &a.v, &a.mask, &a.o}) {
    d.args.push_back(DispatchArg::Scalar(ViewArg(*v)));
  }
  AddInts(d, {a.lq, a.lk, a.heads});
  d.args.push_back(DispatchArg::Scalar(a.scale));
  AddInts(d, {a.causal_offset});
  d.flops = 2.0 * double(a.batch * a.heads) * double(a.lq) * double(a.lk) * double(a.dk + a.dv);
  ctx.Emit(std::move(d));
  return absl::OkStatus();
}

std::vector<KernelParams> CpuKtSpace(const Node& node, const LoweringContext& ctx) {
  return ParamSpace(CpuKtHeuristic(AttrsOr<AttentionAttrs>(node), ctx.device()),
                    {{"rows", {1, 2, 4}}});
}

// --- GPU, one query row (decode) ---

// Whether attention_decode runs with `wg` items: one query row, a group of
// at least DV items within the device's limit, and the scores of every key
// in local memory.
bool DecodeParamsFit(const AttentionAttrs& a, const DeviceFacts& device, int64_t wg) {
  if (device.max_work_group_size != 0 && size_t(wg) > device.max_work_group_size) return false;
  const uint64_t local = sizeof(float) * uint64_t(a.dk + a.lk + wg);
  return a.lq == 1 && wg >= a.dv && local <= LocalMemBytes(device);
}

// 256 items (fewer where the device allows fewer): on an H100 a GPT-2
// step's attention over 144 cached keys took a fifth of attention_gpu's
// time with one 64-item row (bench: recq generate --profile-step).
int64_t DecodeHeuristic(const AttentionAttrs& a, const DeviceFacts& device) {
  int64_t wg = 256;
  while (wg > 64 && !DecodeParamsFit(a, device, wg)) wg /= 2;
  return wg;
}

bool DecodeFits(const Node& node, const LoweringContext& ctx) {
  if (!ctx.device().GpuKernels()) return false;
  const auto& a = AttrsOr<AttentionAttrs>(node);
  return DecodeParamsFit(a, ctx.device(), DecodeHeuristic(a, ctx.device()));
}

absl::Status LowerDecode(LoweringContext& ctx, const Node& node) {
  const auto& a = AttrsOr<AttentionAttrs>(node);
  RECQ_ASSIGN_OR_RETURN(const int64_t wg, Param(ctx, node, "items",
                                                DecodeHeuristic(a, ctx.device()), {64, 128, 256}));
  if (!DecodeParamsFit(a, ctx.device(), wg)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node '", node.name, "': attention_decode with ", wg, " items needs at least dv ", a.dv,
        " items, the device's work-group limit and ", sizeof(float) * (a.dk + a.lk + wg),
        " bytes of local memory (the device has ", LocalMemBytes(ctx.device()), ")"));
  }
  std::vector<std::string> options = CommonOptions(node, a);
  options.push_back("-DRECQ_AT_DECODE=1");
  options.push_back(absl::StrCat("-DRECQ_AT_WG=", wg));
  options.push_back(absl::StrCat("-DRECQ_AT_LK=", a.lk));
  Dispatch d;
  d.label = "attention_decode";
  d.kernel = ctx.Kernel("attention.cl", "attention_decode", std::move(options));
  SetRange(d, {size_t(wg), size_t(a.heads), size_t(a.batch)}, {size_t(wg), 1, 1});
  AddArgs(ctx, node, a, d);
  d.args.push_back(DispatchArg::Null());
  ctx.Emit(std::move(d));
  return absl::OkStatus();
}

std::vector<KernelParams> DecodeSpace(const Node& node, const LoweringContext& ctx) {
  const auto& a = AttrsOr<AttentionAttrs>(node);
  std::vector<KernelParams> space = {{{"items", DecodeHeuristic(a, ctx.device())}}};
  for (int64_t wg : {64, 128, 256}) {
    if (DecodeParamsFit(a, ctx.device(), wg) && wg != space[0].at("items")) {
      space.push_back({{"items", wg}});
    }
  }
  return space;
}

std::vector<KernelParams> GpuSpace(const Node& node, const LoweringContext& ctx) {
  const auto& a = AttrsOr<AttentionAttrs>(node);
  std::vector<KernelParams> space;
  for (const KernelParams& p :
       ParamSpace(GpuHeuristic(a, ctx.device()), {{"rows", {1, 4, 8, 16, 32, 64}},
                                                  {"key_tile", {16, 32, 64}},
                                                  {"row_items", {4, 8, 16, 32, 64}}})) {
    const int64_t bq = p.at("rows"), bk = p.at("key_tile"), tpr = p.at("row_items");
    if (!GpuParamsFit(a, ctx.device(), bq, bk, tpr) || bq * tpr < 32) continue;
    // More rows than queries only idles items.
    if (bq > 1 && bq / 2 >= a.lq) continue;
    space.push_back(p);
  }
  return space;
}

// ViewKey renders a view for the tuner's key.
std::string ViewKey(const char* name, const AttentionView& v) {
  return absl::StrCat(" ", name, "=", v.offset, ",", v.batch_mod, ",", v.sb_lo, ",", v.sb_hi, ",",
                      v.sh, ",", v.sr, ",", v.sc);
}

// TuningAttrs renders every attribute: nodes of equal keys compute the same
// function of equally shaped inputs.
std::string TuningAttrs(const Node& node) {
  const auto& a = AttrsOr<AttentionAttrs>(node);
  return absl::StrCat("batch=", a.batch, " heads=", a.heads, " lq=", a.lq, " lk=", a.lk,
                      " dk=", a.dk, " dv=", a.dv, " scale=", FloatLiteral(a.scale),
                      " causal=", a.causal, " causal_offset=", a.causal_offset, ViewKey("q", a.q),
                      ViewKey("k", a.k), ViewKey("v", a.v), ViewKey("o", a.o),
                      ViewKey("mask", a.mask), " out=", absl::StrJoin(a.out_shape, ","));
}

}  // namespace

RECQ_REGISTER_OPS(Attention) {
  OpDef def;
  def.type = kAttention;
  def.infer = Infer;
  def.variants = {{"attention_decode", DecodeFits, LowerDecode},
                  {"attention_gpu_split", GpuSplitFits, LowerGpuSplit},
                  {"attention_mma", MmaFits, LowerMma},
                  {"attention_gpu", GpuFits, LowerGpu},
                  {"attention_cpu_kt", CpuKtFits, LowerCpuKt},
                  {"attention_cpu", nullptr, LowerCpu}};
  def.variants[0].param_space = DecodeSpace;
  def.variants[1].scratch_bytes = GpuSplitScratch;
  def.variants[2].param_space = MmaSpace;
  def.variants[3].param_space = GpuSpace;
  def.variants[4].param_space = CpuKtSpace;
  def.variants[4].scratch_bytes = CpuKtScratch;
  def.variants[5].param_space = CpuSpace;
  def.tuning_attrs = TuningAttrs;
  return table.Add(std::move(def));
}

}  // namespace recq::internal
