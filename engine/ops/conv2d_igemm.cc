// Conv2D as an implicit GEMM on GPUs (conv2d_igemm.cl): on matrix units
// where the device has them and they measured faster, four tile shapes on
// the fp32 units in order of preference, then the matrix units again for
// the tuner; each with K split over enough work-groups to fill the device.
// Grouped, strided, dilated and asymmetric kernels all run here; the
// pointwise and depthwise GPU variants come first where they fit.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/conv2d.h"
#include "engine/ops/op_util.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

// A tile shape: TM output channels x TN columns per work-group, RM x RN per
// work-item, TK rows of K staged at a time. 256 work-items each.
struct IgemmTile {
  const char* name;
  int64_t tm, tn, rm, rn;
  bool contiguous;  // RECQ_IG_CONTIG
  // The smallest channels per group and columns it takes: below them a
  // smaller tile wastes less. (H100, VGG-11: its 14x14 layers of 512
  // channels ran at 5.8 TFLOP/s in 32x64 tiles, the 28x28 ones at 11.7 in
  // 128x64 tiles.)
  int64_t min_ocg, min_columns;
};
constexpr int64_t kIgemmTk = 16;
constexpr size_t kIgemmItems = 256;
constexpr IgemmTile kIgemmTiles[] = {
    {"conv2d_igemm_gpu_128x64", 128, 64, 8, 4, true, 128, 192},
    {"conv2d_igemm_gpu_64x64", 64, 64, 4, 4, true, 64, 128},
    {"conv2d_igemm_gpu_32x64", 32, 64, 2, 4, false, 16, 64},
    {"conv2d_igemm_gpu_32x32", 32, 32, 2, 2, false, 8, 1},
};

struct IgemmShape {
  int64_t groups, ocg, ocgp, kg, columns, tiles, sk;
  int64_t taps;         // KH * KW
  bool channels_inner;  // RECQ_IG_KC: K as (tap, channel)
};

IgemmShape ShapeFor(int64_t tm, int64_t tn, const Node& node, const LoweringContext& ctx) {
  const auto& a = AttrsOr<Conv2DAttrs>(node);
  const Shape& w = ShapeOf(ctx, node.inputs[1]);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  IgemmShape s;
  s.groups = a.groups;
  s.ocg = out[1] / a.groups;
  s.ocgp = static_cast<int64_t>(CeilDiv(s.ocg, tm)) * tm;
  s.kg = w[1] * w[2] * w[3];
  s.taps = w[2] * w[3];
  // Channels innermost where a TK step then reads a single tap: no
  // division or bounds check per staged element (conv2d_igemm.cl).
  s.channels_inner = s.taps > 1 && w[1] % kIgemmTk == 0;
  s.columns = out[0] * out[2] * out[3];
  s.tiles = s.groups * (s.ocgp / tm) * static_cast<int64_t>(CeilDiv(s.columns, tn));
  // Split K until about two work-groups per compute unit, keeping at least
  // four TK steps per slice and at most 16 slices (each adds a pass over
  // the output to the reduction).
  const int64_t units = ctx.device().compute_units != 0 ? ctx.device().compute_units : 16;
  const int64_t want = std::max<int64_t>(1, 2 * units / s.tiles);
  s.sk = std::clamp<int64_t>(std::min<int64_t>(want, s.kg / (4 * kIgemmTk)), 1, 16);
  return s;
}

// SplitKScratch: the bytes of `node`'s partial sums with K split as `s`
// says (none unsplit).
size_t SplitKScratch(const IgemmShape& s, const Node& node, const LoweringContext& ctx) {
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  return s.sk > 1 ? size_t(s.sk) * size_t(Product(out, 0, 4)) * sizeof(float) : 0;
}

bool Fits(const IgemmTile& tile, const Node& node, const LoweringContext& ctx) {
  const DeviceFacts& device = ctx.device();
  if (device.CpuKernels()) return false;
  if (device.max_work_group_size != 0 && device.max_work_group_size < kIgemmItems) return false;
  // The A and B slices staged in local memory (conv2d_igemm.cl); where that
  // is global memory (Mali) the direct GPU variants do better.
  const uint64_t local_bytes = uint64_t(kIgemmTk * (tile.tm + tile.tn)) * sizeof(float);
  if (!device.LocalMemoryTilesPay() || !device.LocalMemoryFits(local_bytes)) return false;
  if (!ConvShapeOf(node, ctx).constant_weights) return false;
  const IgemmShape s = ShapeFor(tile.tm, tile.tn, node, ctx);
  return s.ocg >= tile.min_ocg && s.columns >= tile.min_columns;
}

// PackWeights returns [OC][C/g][KH][KW] weights as [g][Kg][OCgp], zero past
// OCg, K as (channel, tap) or with channels inner as (tap, channel),
// stored in the original's place.
DispatchArg PackWeights(LoweringContext& ctx, ValueId w, const IgemmShape& s) {
  absl::Span<const float> src = ctx.graph().value(w).floats();
  auto packed = std::make_shared<std::vector<float>>(s.groups * s.kg * s.ocgp, 0.0f);
  const int64_t cpg = s.kg / s.taps;
  for (int64_t g = 0; g < s.groups; ++g) {
    for (int64_t m = 0; m < s.ocg; ++m) {
      const float* from = src.data() + (g * s.ocg + m) * s.kg;
      for (int64_t k = 0; k < s.kg; ++k) {
        const int64_t c = k / s.taps, tap = k % s.taps;
        const int64_t to = s.channels_inner ? tap * cpg + c : k;
        (*packed)[(g * s.kg + to) * s.ocgp + m] = from[k];
      }
    }
  }
  return ctx.ReplaceConstant(w, std::move(packed));
}

// AddFixedActivation adds the build option that fixes the activation the kernel
// applies where it finishes the output itself (K not split; common.cl's
// RECQ_ACT_FIXED), so that its unrolled stores carry no switch.
void AddFixedActivation(std::vector<std::string>& options, const LoweringContext& ctx,
                        const Node& node, const IgemmShape& s) {
  if (s.sk == 1) options.push_back(FixedActivationOption(ctx.OutputOf(node).activation));
}

// EmitIgemm emits conv2d_igemm_gpu's dispatch (built as `kernel`, over
// `global` in groups of `local`) for `node` in the tiles of `s`, and with K
// split the reduction after it.
absl::Status EmitIgemm(LoweringContext& ctx, const Node& node, std::string label, int32_t kernel,
                       std::array<size_t, 3> global, std::array<size_t, 3> local,
                       const IgemmShape& s) {
  const auto& a = AttrsOr<Conv2DAttrs>(node);
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  const auto [y, residual, act] = ctx.OutputOf(node);
  const ValueId bias = node.inputs.size() > 2 ? node.inputs[2] : kNoValue;
  Dispatch d;
  d.label = std::move(label);
  d.kernel = kernel;
  d.work_dim = 3;
  d.global = global;
  d.local = local;
  const DispatchArg part = s.sk > 1 ? ctx.Scratch() : DispatchArg::Null();
  d.args = {ctx.Arg(node.inputs[0]),
            PackWeights(ctx, node.inputs[1], s),
            s.sk > 1 ? DispatchArg::Null() : ctx.Arg(bias),
            s.sk > 1 ? DispatchArg::Null() : ctx.Arg(residual),
            s.sk > 1 ? DispatchArg::Null() : ctx.Arg(y),
            part};
  AddInts(d, {x[0], x[1], x[2], x[3], out[1], out[2], out[3], a.strides[0], a.strides[1], a.pads[0],
              a.pads[1], a.dilations[0], a.dilations[1], a.groups});
  SetConvWork(node, ctx, residual, d);
  AddActivation(d, act);
  if (s.sk == 1) {
    ctx.MarkActivationApplied();
    ctx.Emit(std::move(d));
    return absl::OkStatus();
  }
  const double partial_bytes = double(s.sk) * double(Product(out, 0, 4)) * sizeof(float);
  d.bytes += partial_bytes;
  ctx.Emit(std::move(d));
  const int64_t total = Product(out, 0, 4);
  Dispatch r;
  r.label = "conv2d_igemm_reduce";
  r.kernel = ctx.Kernel("conv2d_igemm.cl", "conv2d_igemm_reduce");
  SetRange(r, {size_t(total), 1, 1}, {GpuGroup(ctx.device(), 256), 1, 1});
  r.args = {part, ctx.Arg(bias), ctx.Arg(residual), ctx.Arg(y)};
  AddInts(r, {total, out[1], out[2] * out[3], s.sk});
  AddActivation(r, act);
  r.bytes = partial_bytes + double(total) * sizeof(float) * (residual != kNoValue ? 2 : 1);
  ctx.MarkActivationApplied();
  ctx.Emit(std::move(r));
  return absl::OkStatus();
}

absl::Status Lower(const IgemmTile& tile, LoweringContext& ctx, const Node& node) {
  const Shape& w = ShapeOf(ctx, node.inputs[1]);
  const IgemmShape s = ShapeFor(tile.tm, tile.tn, node, ctx);
  const size_t lx = size_t(tile.tn / tile.rn);
  const size_t ly = size_t(tile.tm / tile.rm);
  std::vector<std::string> options = {absl::StrCat("-DRECQ_IG_TM=", tile.tm),
                                      absl::StrCat("-DRECQ_IG_TN=", tile.tn),
                                      absl::StrCat("-DRECQ_IG_TK=", kIgemmTk),
                                      absl::StrCat("-DRECQ_IG_RM=", tile.rm),
                                      absl::StrCat("-DRECQ_IG_RN=", tile.rn),
                                      absl::StrCat("-DRECQ_IG_KH=", w[2]),
                                      absl::StrCat("-DRECQ_IG_KW=", w[3]),
                                      absl::StrCat("-DRECQ_IG_SK=", s.sk),
                                      absl::StrCat("-DRECQ_IG_KC=", s.channels_inner ? 1 : 0)};
  AddFixedActivation(options, ctx, node, s);
  const int32_t kernel = ctx.Kernel("conv2d_igemm.cl", "conv2d_igemm_gpu", options);
  return EmitIgemm(
      ctx, node, tile.name, kernel,
      {CeilDiv(s.columns, tile.tn) * lx, size_t(s.groups * (s.ocgp / tile.tm)) * ly, size_t(s.sk)},
      {lx, ly, 1}, s);
}

// The implicit GEMM on matrix units (conv2d_igemm.cl's RECQ_IG_MMA): one
// variant whose parameter is the tile, TM output channels x TN columns
// per work-group of four warps, each warp WM x WN of it.
struct MmaIgemmTile {
  int64_t tm, tn, wm, wn;
  int64_t min_ocg, min_columns;  // as IgemmTile's
};
constexpr MmaIgemmTile kMmaIgemmTiles[] = {
    {128, 64, 64, 32, 128, 192},
    {64, 64, 32, 32, 64, 128},
    {32, 64, 32, 16, 16, 64},
    {32, 32, 16, 16, 16, 1},
};
constexpr int64_t kMmaIgemmTileCount = sizeof(kMmaIgemmTiles) / sizeof(kMmaIgemmTiles[0]);
constexpr size_t kMmaIgemmItems = 128;

uint64_t MmaIgemmLocalBytes(const MmaIgemmTile& t, int64_t stages = 1) {
  return uint64_t(stages * kIgemmTk * (t.tm + 8 + t.tn + 8)) * sizeof(float);
}

// The stages of the tiles in local memory (conv2d_igemm.cl's
// RECQ_IG_STAGES): 1 stages them through registers, a step ahead; 3 fills
// local stages two steps ahead (cp.async where the instructions run). On
// an H200 (bench/gpu/ab_models.sh, 2026-11-26) three stages ran the
// convolution nets' matrix-unit layers faster at both precisions
// (docs/performance.md); the heuristic takes them with the instructions,
// where they fit local memory, and one stage in the emulation.
constexpr int64_t kMmaIgemmStages[] = {1, 3};

int64_t MmaIgemmStagesHeuristic(const MmaIgemmTile& t, const LoweringContext& ctx) {
  const DeviceFacts& device = ctx.device();
  return device.MatrixInstructionsInPtx() && device.LocalMemoryFits(MmaIgemmLocalBytes(t, 3)) ? 3
                                                                                              : 1;
}

// The heuristic's tile, from `recq tune --exhaustive` on an H100
// (ResNet-50 and ResNet-18, 2026-11-26): the matrix units want many
// work-groups, so 32x32 where K is short (256 or less), 32x64 where the
// columns are few (64 or less), else 64x64.
int64_t MmaIgemmHeuristic(const Node& node, const LoweringContext& ctx) {
  const IgemmShape s = ShapeFor(kMmaIgemmTiles[0].tm, kMmaIgemmTiles[0].tn, node, ctx);
  if (s.kg <= 256) return 3;
  if (s.columns <= 64) return 2;
  return 1;
}

// MmaIgemmRuns: matrix units (or their emulation), constant weights, 16 or
// more output channels per group (fewer leave most of a 16-row mma tile
// empty).
bool MmaIgemmRuns(const Node& node, const LoweringContext& ctx) {
  const DeviceFacts& device = ctx.device();
  if (!device.GpuKernels() || !device.MatrixUnits()) return false;
  if (device.max_work_group_size != 0 && device.max_work_group_size < kMmaIgemmItems) return false;
  if (!device.LocalMemoryFits(MmaIgemmLocalBytes(kMmaIgemmTiles[0]))) return false;
  if (!ConvShapeOf(node, ctx).constant_weights) return false;
  return ShapeFor(kMmaIgemmTiles[0].tm, kMmaIgemmTiles[0].tn, node, ctx).ocg >= 16;
}

// MmaIgemmPreferredRule: the layers an untuned compile runs on matrix
// units.
// - 1x1 layers of 256 or more input and output channels, over any columns.
//   There `recq tune --exhaustive` on an H100 (2026-11-26) chose the matrix
//   units on every such layer of ResNet-50 (0.017-0.026 ms against
//   0.021-0.037 for the fp32 tiles' heuristics).
// - 1x1 layers of 64 or more input and output channels over 784 columns
//   (28x28) or more (which holds 256 to 128 channels over 56x56, also
//   chosen by that tune). Before the local stages DenseNet-121's
//   bottlenecks, 128 output channels over fewer columns, ran 8 % slower on
//   matrix units. With the tiles in three local stages, ResNet-50 ran
//   0.933x (fp32) and 0.909x (tf32) of the time without these, ResNeXt-50
//   0.957x and 0.949x, ResNet-18 0.967x and 0.972x; MobileNet V2,
//   EfficientNet-B0, RegNetY-400MF and DenseNet-121 moved within their
//   spread between runs (H200, 2026-11-26, bench/gpu/ab_models.sh, 3
//   rounds, RECQ_TUNING=off; docs/h200/igemm_rule_ab_h200_2026-11-26.txt).
// - Larger kernels of 64 or more output channels whose K runs channels
//   innermost (RECQ_IG_KC). Before that ordering VGG-11 and FCN-ResNet50
//   ran 14 % slower with their 3x3 layers on matrix units; with it, and
//   these layers on them, VGG-11 ran at 0.85x, ResNet-18 0.81x, ResNet-50
//   0.90x and Inception-v3 0.82x of the fp32 tiles' time (H100, 2026-11-26,
//   bench/gpu/ab_models.sh with RECQ_TUNING=off, medians of 3 rounds).
bool MmaIgemmPreferredRule(const Node& node, const LoweringContext& ctx) {
  const Shape& w = ShapeOf(ctx, node.inputs[1]);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  if (AttrsOr<Conv2DAttrs>(node).groups != 1) return false;
  if (w[2] * w[3] > 1) {
    const IgemmShape s = ShapeFor(kMmaIgemmTiles[0].tm, kMmaIgemmTiles[0].tn, node, ctx);
    return s.channels_inner && s.ocg >= 64;
  }
  const int64_t columns = out[0] * out[2] * out[3];
  return (w[1] >= 256 && w[0] >= 256) || (w[1] >= 64 && w[0] >= 64 && columns >= 784);
}

std::vector<KernelParams> MmaIgemmSpace(const Node& node, const LoweringContext& ctx) {
  const int64_t h = MmaIgemmHeuristic(node, ctx);
  std::vector<KernelParams> space = {
      {{"stages", MmaIgemmStagesHeuristic(kMmaIgemmTiles[h], ctx)}, {"tile", h}}};
  for (int64_t i = 0; i < kMmaIgemmTileCount; ++i) {
    for (int64_t stages : kMmaIgemmStages) {
      if (!ctx.device().LocalMemoryFits(MmaIgemmLocalBytes(kMmaIgemmTiles[i], stages))) continue;
      KernelParams p = {{"stages", stages}, {"tile", i}};
      if (p != space[0]) space.push_back(std::move(p));
    }
  }
  return space;
}

absl::Status LowerMmaIgemm(LoweringContext& ctx, const Node& node) {
  RECQ_ASSIGN_OR_RETURN(
      const int64_t tile_index,
      ParamInRange(ctx, node, "tile", MmaIgemmHeuristic(node, ctx), 0, kMmaIgemmTileCount - 1));
  const MmaIgemmTile& tile = kMmaIgemmTiles[tile_index];
  const int64_t stages = ctx.ParamOr("stages", MmaIgemmStagesHeuristic(tile, ctx));
  if (std::find(std::begin(kMmaIgemmStages), std::end(kMmaIgemmStages), stages) ==
          std::end(kMmaIgemmStages) ||
      !ctx.device().LocalMemoryFits(MmaIgemmLocalBytes(tile, stages))) {
    return absl::InvalidArgumentError(
        absl::StrCat("node '", node.name, "': conv2d_igemm_mma parameter stages=", stages,
                     " is not valid here (1 or 3, within local memory)"));
  }
  const Shape& w = ShapeOf(ctx, node.inputs[1]);
  const IgemmShape s = ShapeFor(tile.tm, tile.tn, node, ctx);
  std::vector<std::string> options = {"-DRECQ_IG_MMA=1",
                                      absl::StrCat("-DRECQ_IG_TM=", tile.tm),
                                      absl::StrCat("-DRECQ_IG_TN=", tile.tn),
                                      absl::StrCat("-DRECQ_IG_WM=", tile.wm),
                                      absl::StrCat("-DRECQ_IG_WN=", tile.wn),
                                      absl::StrCat("-DRECQ_IG_TK=", kIgemmTk),
                                      absl::StrCat("-DRECQ_IG_KH=", w[2]),
                                      absl::StrCat("-DRECQ_IG_KW=", w[3]),
                                      absl::StrCat("-DRECQ_IG_SK=", s.sk),
                                      absl::StrCat("-DRECQ_IG_KC=", s.channels_inner ? 1 : 0),
                                      absl::StrCat("-DRECQ_IG_STAGES=", stages)};
  if (ctx.device().MatrixInstructionsInPtx()) options.push_back("-DRECQ_MM_PTX=1");
  AddFixedActivation(options, ctx, node, s);
  const int32_t kernel = ctx.Kernel("conv2d_igemm.cl", "conv2d_igemm_gpu", options);
  return EmitIgemm(ctx, node, absl::StrCat("conv2d_igemm_mma_", tile.tm, "x", tile.tn), kernel,
                   {CeilDiv(s.columns, tile.tn) * kMmaIgemmItems,
                    size_t(s.groups * (s.ocgp / tile.tm)), size_t(s.sk)},
                   {kMmaIgemmItems, 1, 1}, s);
}

// Scratch for the partial sums of any tile's split K.
size_t MmaIgemmScratch(const Node& node, const LoweringContext& ctx) {
  size_t bytes = 0;
  for (const MmaIgemmTile& t : kMmaIgemmTiles) {
    bytes = std::max(bytes, SplitKScratch(ShapeFor(t.tm, t.tn, node, ctx), node, ctx));
  }
  return bytes;
}

}  // namespace

bool MmaIgemmPreferred(const Node& node, const LoweringContext& ctx) {
  return MmaIgemmRuns(node, ctx) && MmaIgemmPreferredRule(node, ctx);
}

bool IgemmGpuFits(const Node& node, const LoweringContext& ctx) {
  return std::any_of(std::begin(kIgemmTiles), std::end(kIgemmTiles),
                     [&](const IgemmTile& tile) { return Fits(tile, node, ctx); });
}

std::vector<KernelVariant> ConvIgemmGpuVariants() {
  std::vector<KernelVariant> variants;
  // The matrix units, first where they measured faster...
  KernelVariant preferred{"conv2d_igemm_mma", MmaIgemmPreferred, LowerMmaIgemm};
  preferred.absorbs_residual_add = true;
  preferred.param_space = MmaIgemmSpace;
  preferred.scratch_bytes = MmaIgemmScratch;
  variants.push_back(std::move(preferred));
  for (const IgemmTile& tile : kIgemmTiles) {
    KernelVariant v;
    v.name = tile.name;
    v.fits = [&tile](const Node& n, const LoweringContext& ctx) { return Fits(tile, n, ctx); };
    v.lower = [&tile](LoweringContext& ctx, const Node& n) { return Lower(tile, ctx, n); };
    v.absorbs_residual_add = true;
    v.scratch_bytes = [&tile](const Node& n, const LoweringContext& ctx) {
      return SplitKScratch(ShapeFor(tile.tm, tile.tn, n, ctx), n, ctx);
    };
    variants.push_back(std::move(v));
  }
  // ...and after the fp32 tiles elsewhere, for the tuner: at its
  // heuristic's tiles on every layer it ran ResNet-50 9 % and ResNet-18 6 %
  // slower on an H100 (bench/gpu/ab_models.sh, 2026-11-26), whose
  // exhaustive tunes kept most 3x3 layers on the fp32 tiles.
  KernelVariant v{"conv2d_igemm_mma_tuned",
                  [](const Node& n, const LoweringContext& ctx) {
                    return MmaIgemmRuns(n, ctx) && !MmaIgemmPreferredRule(n, ctx);
                  },
                  LowerMmaIgemm};
  v.absorbs_residual_add = true;
  v.param_space = MmaIgemmSpace;
  v.scratch_bytes = MmaIgemmScratch;
  variants.push_back(std::move(v));
  return variants;
}

}  // namespace recq::internal
