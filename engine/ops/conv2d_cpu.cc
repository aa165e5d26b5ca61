// Conv2D's CPU kernel family: vector work-items and small groups, tuned on
// PoCL. In order of preference:
// - Winograd F(4x4, 3x3) where the precision relaxes float32 (tf32, half
//   storage): 3x3 stride 1 with 16 or more channels each way and 16 or more
//   4x4 output tiles;
// - the panel GEMM (groups 1: any kernel, stride, dilation and padding, the
//   pixels' taps copied into panels first; 1x1 stride 1 with few output
//   channels reads its input in place);
// - pointwise (1x1 stride 1 as a register-blocked GEMM; a stride above 1
//   after a copy of the strided pixels);
// - depthwise 3x3 strips, then depthwise KxK strips (conv2d_depthwise.cl:
//   square kernels up to 7x7, any padding);
// - the tiled direct convolution on rows first copied into zero-padded
//   scratch (where a quarter or more of the tiles would take the edge path:
//   narrow padded maps), then the tiled direct convolution (any kernel,
//   stride, dilation, padding and groups with constant weights);
// - dense 3x3 strips, and the generic one-output-per-item convolution
//   (weights that are not constants).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/conv2d.h"
#include "engine/ops/op_util.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

bool Cpu(const LoweringContext& ctx) { return ctx.device().CpuKernels(); }

// Dense 3x3 weights [OC][C][3][3] repacked as [ceil(OC/8)][C][3][3][8],
// zero past OC.
DispatchArg PackDense3x3Weights(LoweringContext& ctx, ValueId w, int64_t oc, int64_t c) {
  absl::Span<const float> src = ctx.graph().value(w).floats();
  auto packed = std::make_shared<std::vector<float>>(CeilDiv(oc, 8) * 8 * c * 9, 0.0f);
  for (int64_t o = 0; o < oc; ++o) {
    for (int64_t i = 0; i < c * 9; ++i) {
      (*packed)[((o / 8) * c * 9 + i) * 8 + o % 8] = src[o * c * 9 + i];
    }
  }
  return ctx.ReplaceConstant(w, std::move(packed));
}

ValueId Bias(const Node& node) { return node.inputs.size() > 2 ? node.inputs[2] : kNoValue; }

// Finishes a conv dispatch: the activation of what the conv writes.
absl::Status Finish(LoweringContext& ctx, Dispatch d, const Activation& act) {
  AddActivation(d, act);
  ctx.MarkActivationApplied();
  ctx.Emit(std::move(d));
  return absl::OkStatus();
}

// Pointwise parameters: vw pixels per item (one vector), ocb output
// channels per item, wg items per work-group.
KernelParams PointwiseHeuristic(const Node& node, const LoweringContext& ctx) {
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  // float16 (PoCL's fastest vector width) unless HW is below 16; 8
  // output channels per item measured as fast as 16 on PoCL 3.1 on AVX-512,
  // 4 where 8 would take more accumulator lanes than the registers hold
  // (AVX2); 16 items per group measured best (vs 1, 4, 64).
  const int64_t vw = out[2] * out[3] >= 16 ? 16 : 8;
  int64_t ocb = vw * 8 <= ctx.device().CpuAccumulatorLanes() ? 8 : 4;
  // 16 channels over 512 or more input channels with 16-lane vectors (16
  // of AVX-512's 32 registers): each loaded vector of pixels feeds twice
  // the FMAs. `recq tune --exhaustive` chose it for MobileNet V2's 960 ->
  // 160 and 960 -> 320 at 7x7 (0.108 and 0.220 ms against 0.134 and 0.315
  // at the defaults before; AMD EPYC, PoCL 3.1, 2026-11-28).
  if (ShapeOf(ctx, node.inputs[0])[1] >= 512 && ctx.device().native_float_lanes >= 16) ocb = 16;
  return {{"vw", vw}, {"ocb", ocb}, {"wg", 16}};
}

// PointwiseGroup shapes `wg` items as (up to 16 pixel tiles, output channel
// blocks, 1): the shape depends on wg alone, not on the tensor's shape, so
// that PoCL compiles one work-group function per program and wg instead of
// one per layer shape (tiles and blocks past the end return at once).
std::array<size_t, 3> PointwiseGroup(int64_t wg) {
  const int64_t tiles = std::min<int64_t>(wg, 16);
  return {size_t(tiles), size_t(std::max<int64_t>(wg / tiles, 1)), 1};
}

// The pointwise kernel, after a copy of the strided pixels into scratch
// when `strided` (1x1 with a stride above 1: ResNet's downsampling
// shortcuts, which the tiled kernel ran at 15-25 % of this host's roof).
absl::Status LowerPointwiseImpl(LoweringContext& ctx, const Node& node, bool strided) {
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  const auto [y, residual, act] = ctx.OutputOf(node);
  const int64_t hw = out[2] * out[3];
  const KernelParams h = PointwiseHeuristic(node, ctx);
  RECQ_ASSIGN_OR_RETURN(const int64_t vw, Param(ctx, node, "vw", h.at("vw"), {8, 16}));
  RECQ_ASSIGN_OR_RETURN(const int64_t ocb, Param(ctx, node, "ocb", h.at("ocb"), {4, 8, 16}));
  RECQ_ASSIGN_OR_RETURN(const int64_t wg, ParamInRange(ctx, node, "wg", h.at("wg"), 1, 1024));
  // Both kernels from one program build: no second compile on a cold start.
  const std::vector<std::string> options = {absl::StrCat("-DRECQ_PW_VW=", vw),
                                            absl::StrCat("-DRECQ_PW_OCB=", ocb)};
  DispatchArg src = ctx.Arg(node.inputs[0]);
  if (strided) {
    const auto& a = AttrsOr<Conv2DAttrs>(node);
    Dispatch sd;
    sd.label = "conv2d_subsample";
    sd.kernel = ctx.Kernel("conv2d_pointwise.cl", "conv2d_subsample", options);
    const std::array<size_t, 3> rows = {size_t(out[2]), size_t(x[0] * x[1]), 1};
    SetRange(sd, rows, WorkGroupFor(rows, 16));
    sd.args = {src, ctx.Scratch()};
    AddInts(sd, {x[0] * x[1], x[2], x[3], out[2], out[3], a.strides[0], a.strides[1]});
    // Reads and writes the output's share of the input.
    const double in_bytes = double(ctx.graph().value(node.inputs[0]).desc.ByteSize());
    sd.bytes = 2.0 * in_bytes * double(hw) / double(x[2] * x[3]);
    ctx.Emit(std::move(sd));
    src = ctx.Scratch();
  }
  Dispatch d;
  d.label = "conv2d_pointwise";
  d.kernel = ctx.Kernel("conv2d_pointwise.cl", "conv2d_pointwise", options);
  const std::array<size_t, 3> range = {CeilDiv(hw, vw), CeilDiv(out[1], ocb), size_t(out[0])};
  SetRange(d, range, PointwiseGroup(wg));
  d.args = {src, PackPointwiseWeights(ctx, node.inputs[1], out[1], x[1], ocb), ctx.Arg(Bias(node)),
            ctx.Arg(residual), ctx.Arg(y)};
  AddInts(d, {x[0], x[1], hw, out[1]});
  SetConvWork(node, ctx, residual, d);
  return Finish(ctx, std::move(d), act);
}

absl::Status LowerPointwise(LoweringContext& ctx, const Node& node) {
  return LowerPointwiseImpl(ctx, node, /*strided=*/false);
}

absl::Status LowerPointwiseStrided(LoweringContext& ctx, const Node& node) {
  return LowerPointwiseImpl(ctx, node, /*strided=*/true);
}

// The strided pixels' copy: the input's channels at the output's size.
size_t PointwiseStridedScratch(const Node& node, const LoweringContext& ctx) {
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  // Floats: enough for either storage precision.
  return size_t(x[0] * x[1] * out[2] * out[3]) * sizeof(float);
}

// --- conv2d_gemm (conv2d_gemm.cl): groups-1 convolutions as a product of
// the weights [OC][C*KH*KW] by panels of VW output pixels' taps, written by
// conv2d_panels first (im2col). Where the direct tiled kernels broadcast
// weights over a row of output columns, this streams each panel
// contiguously and reuses it across the output channels of a work-group:
// ResNet-50's convolutions took 0.74x the device time of the direct kernels
// and Inception-v3's 0.59x (AVX2, PoCL 3.1, docs/performance.md).

// A stride-1 1x1 convolution with at most this many output channels reads
// its input in place instead of through panels: the copy costs as much as
// 1/OC of the product, and MobileNet V2's 16- to 64-channel projections ran
// 0.41-0.79x as long without it (AVX2, PoCL 3.1), its wider layers
// 1.0-1.4x as long. With 16-lane vectors (AVX-512) every stride-1 1x1
// layer reads in place: the products' device time stayed within the host's
// noise (0.95-1.00x of their fastest runs) and the panels' dispatches went,
// MobileNet V3-Large replaying in 0.89x the time, V2 0.96x, MNASNet 0.96x,
// ResNet-50 1.02x (PoCL 3.1, 2-core EPYC, bench/ab_profile.py, 7 rounds,
// 2026-11-28).
constexpr int64_t kGemmDirectMaxChannels = 64;
// The panels' largest size: above it the direct kernels run instead.
constexpr size_t kGemmMaxPanelBytes = size_t(64) << 20;
// Below 64 output channels the copy's share grows, and the panels must be
// at most this large (the L2 and L3 caches still hold them): Inception-v3's
// 32-channel 3x3 on 147x147 (25 MB of panels) took 1.6x as long as the
// tiled kernel, MobileNet V2's 32-channel stem (1.4 MB) 0.89x.
constexpr size_t kGemmSmallMaxPanelBytes = size_t(4) << 20;

// The input read in place (no panels): see kGemmDirectMaxChannels. 16
// pixels or more, so that a tile of either width fits in the image.
bool GemmDirect(const Node& node, const LoweringContext& ctx) {
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  const bool wide_vectors = ctx.device().native_float_lanes >= 16;
  return ConvShapeOf(node, ctx).pointwise && (out[1] <= kGemmDirectMaxChannels || wide_vectors) &&
         out[2] * out[3] >= 16;
}

// Panels: N * K * HW floats, HW rounded up to 16 pixels (either width),
// in either storage precision; none when the input is read in place.
size_t GemmScratch(const Node& node, const LoweringContext& ctx) {
  if (GemmDirect(node, ctx)) return 0;
  const Shape& w = ShapeOf(ctx, node.inputs[1]);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  return size_t(out[0] * w[1] * w[2] * w[3]) * CeilDiv(out[2] * out[3], 16) * 16 * sizeof(float);
}

bool GemmFits(const Node& node, const LoweringContext& ctx) {
  const ConvShape s = ConvShapeOf(node, ctx);
  if (!Cpu(ctx) || !s.groups_1 || !s.constant_weights) return false;
  if (GemmDirect(node, ctx)) return true;
  const size_t panels = GemmScratch(node, ctx);
  const int64_t oc = ShapeOf(ctx, node.outputs[0])[1];
  return panels <= kGemmMaxPanelBytes && (oc >= 64 || panels <= kGemmSmallMaxPanelBytes);
}

// Parameters: vw pixels per panel (one vector), rm output channels per item
// (rm vector accumulators: 4 of float16 with AVX2's 16 registers, 8 with
// AVX-512's 32; 8 with AVX2 took 1.5x as long on ResNet-50, spilling), wg
// items per work-group (the channel blocks sharing one panel).
KernelParams GemmHeuristic(const Node& node, const LoweringContext& ctx) {
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  const int64_t vw = out[2] * out[3] >= 16 ? 16 : 8;
  const int64_t rm = std::clamp<int64_t>(ctx.device().CpuAccumulatorLanes() / vw, 2, 8);
  return {{"vw", vw}, {"rm", rm}, {"wg", 16}};
}

std::vector<KernelParams> GemmSpace(const Node& node, const LoweringContext& ctx) {
  return ParamSpace(GemmHeuristic(node, ctx), {{"vw", {8, 16}}, {"rm", {4, 8}}, {"wg", {16, 64}}});
}

// conv2d_panels' table: per panel and tap, each lane's input offset within
// a channel's plane (-1: padding, or past the output); then per panel and
// tap the first offset of VW consecutive in-plane inputs, or -1; then per
// panel and tap the first offset of VW in-plane inputs two apart (a
// stride-2 layer's taps away from the padding) whose two vectors, 2 * VW
// inputs, lie in the plane, or -1.
std::shared_ptr<const HostData> PanelOffsets(const Node& node, const LoweringContext& ctx,
                                             int64_t vw) {
  const auto& a = AttrsOr<Conv2DAttrs>(node);
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const Shape& w = ShapeOf(ctx, node.inputs[1]);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  const int64_t hw = out[2] * out[3], taps = w[2] * w[3];
  const int64_t tiles = int64_t(CeilDiv(hw, vw));
  std::vector<int32_t> offs(size_t(tiles * taps * (vw + 2)), -1);
  int32_t* runs = offs.data() + tiles * taps * vw;
  int32_t* runs2 = runs + tiles * taps;
  for (int64_t t = 0; t < tiles; ++t) {
    for (int64_t kh = 0; kh < w[2]; ++kh) {
      for (int64_t kw = 0; kw < w[3]; ++kw) {
        const int64_t tap = kh * w[3] + kw;
        int32_t* lane = offs.data() + (t * taps + tap) * vw;
        bool run = true, run2 = true;
        for (int64_t i = 0; i < vw; ++i) {
          const int64_t q = t * vw + i;
          const int64_t ih = q / out[3] * a.strides[0] - a.pads[0] + kh * a.dilations[0];
          const int64_t iw = q % out[3] * a.strides[1] - a.pads[1] + kw * a.dilations[1];
          if (q < hw && ih >= 0 && ih < x[2] && iw >= 0 && iw < x[3]) {
            lane[i] = int32_t(ih * x[3] + iw);
          }
          run = run && lane[i] >= 0 && lane[i] == lane[0] + i;
          run2 = run2 && lane[i] >= 0 && lane[i] == lane[0] + 2 * i;
        }
        if (run) runs[t * taps + tap] = lane[0];
        if (!run && run2 && lane[0] + 2 * vw <= x[2] * x[3]) runs2[t * taps + tap] = lane[0];
      }
    }
  }
  return std::make_shared<const HostData>(std::move(offs));
}

// The fraction of a product's lanes that `hw` pixels fill in tiles of `vw`.
double LaneUse(int64_t hw, int64_t vw) { return double(hw) / double(CeilDiv(hw, vw) * vw); }

// conv2d_gemm_oc fits where conv2d_gemm fits on maps of at most 256 pixels
// whose 16-pixel tiles leave a tenth more of the lanes idle than items of 8
// pixels do (7x7 maps: 49 pixels fill 49 of 64 lanes, 49 of 56), with 512
// taps or more and 320 output channels or more. Its epilogue turns 16
// channels by 8 pixels around, which a short sum does not pay for, and the
// measured gains grew with both. Fastest of 2-3x10 profile runs per layer,
// RECQ_TUNING=off, AMD EPYC, PoCL 3.1, 2026-11-28, against conv2d_gemm:
// ResNet-50's 7x7 layers (512 to 4608 taps, 512 or 2048 channels)
// 0.75-0.89x; MobileNet V2's 960 taps to 320 channels 0.92x, to 160 1.0x,
// 160 taps 1.28x; EfficientNet-V2-S's 256 taps 1.16x, 1536 taps to 256
// channels 1.03x; ResNet-50's 14x14 layers (196 of 208 lanes) 1.05-1.15x.
bool GemmOcFits(const Node& node, const LoweringContext& ctx) {
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  const int64_t hw = out[2] * out[3];
  const Shape& w = ShapeOf(ctx, node.inputs[1]);
  return GemmFits(node, ctx) && hw <= 256 && hw >= 16 && out[1] >= 320 &&
         w[1] * w[2] * w[3] >= 512 && LaneUse(hw, 8) >= LaneUse(hw, 16) + 0.1;
}

// conv2d_gemm_oc's parameters: vw pixels per item (8: see GemmOcFits), wg
// items per work-group (the channel blocks sharing one panel).
KernelParams GemmOcHeuristic(const Node&, const LoweringContext&) {
  return {{"vw", 8}, {"wg", 16}};
}

std::vector<KernelParams> GemmOcSpace(const Node& node, const LoweringContext& ctx) {
  return ParamSpace(GemmOcHeuristic(node, ctx), {{"vw", {8, 16}}, {"wg", {4, 16}}});
}

// conv2d_gemm (`oc_vectors` false: vectors of pixels, rm channels per item)
// or conv2d_gemm_oc (vectors of 16 channels, vw pixels per item), after the
// panels unless the input is read in place.
absl::Status LowerGemmImpl(LoweringContext& ctx, const Node& node, bool oc_vectors) {
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const Shape& w = ShapeOf(ctx, node.inputs[1]);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  const auto [y, residual, act] = ctx.OutputOf(node);
  const int64_t hw = out[2] * out[3];
  const int64_t k = w[1] * w[2] * w[3];
  const KernelParams h = oc_vectors ? GemmOcHeuristic(node, ctx) : GemmHeuristic(node, ctx);
  RECQ_ASSIGN_OR_RETURN(const int64_t vw, Param(ctx, node, "vw", h.at("vw"), {8, 16}));
  int64_t rm = 8;  // conv2d_gemm_oc: any value, the same as conv2d_gemm's usual one
  if (!oc_vectors) {
    RECQ_ASSIGN_OR_RETURN(rm, Param(ctx, node, "rm", h.at("rm"), {2, 4, 6, 8}));
  }
  RECQ_ASSIGN_OR_RETURN(const int64_t wg, ParamInRange(ctx, node, "wg", h.at("wg"), 1, 1024));
  const bool direct = GemmDirect(node, ctx);
  // Both kernels, and both forms of the product, from one program build: no
  // second compile on a cold start.
  std::vector<std::string> options = {absl::StrCat("-DRECQ_CG_VW=", vw),
                                      absl::StrCat("-DRECQ_CG_RM=", rm)};
  const int64_t tiles = int64_t(CeilDiv(hw, vw));
  if (!direct) {
    Dispatch pd;
    pd.label = "conv2d_panels";
    pd.kernel = ctx.Kernel("conv2d_gemm.cl", "conv2d_panels", options);
    const std::array<size_t, 3> panels = {size_t(x[1]), size_t(tiles), size_t(x[0])};
    // 16 channels per group whatever C is (the kernel skips those past C):
    // PoCL compiles a work-group function per local size at the first
    // enqueue, and a 3-channel stem's own shape would cost one more.
    SetRange(pd, panels, {16, 1, 1});
    pd.args = {ctx.Arg(node.inputs[0]), ctx.AddConstant(PanelOffsets(node, ctx, vw)),
               ctx.Scratch()};
    AddInts(pd, {x[0], x[1], x[2] * x[3], tiles, w[2] * w[3]});
    // Reads the input, writes the panels.
    const double in_bytes = double(ctx.graph().value(node.inputs[0]).desc.ByteSize());
    pd.bytes = in_bytes * (1.0 + double(out[0] * k * tiles * vw) / double(Product(x, 0, 4)));
    ctx.Emit(std::move(pd));
  }
  const int64_t block = oc_vectors ? 16 : rm;
  Dispatch d;
  d.label = oc_vectors ? "conv2d_gemm_oc" : "conv2d_gemm";
  d.kernel = ctx.Kernel("conv2d_gemm.cl", d.label, options);
  const std::array<size_t, 3> range = {CeilDiv(out[1], block), size_t(tiles), size_t(out[0])};
  SetRange(d, range, {size_t(wg), 1, 1});
  d.args = {direct ? ctx.Arg(node.inputs[0]) : ctx.Scratch(),
            PackPointwiseWeights(ctx, node.inputs[1], out[1], k, block), ctx.Arg(Bias(node)),
            ctx.Arg(residual), ctx.Arg(y)};
  AddInts(d, {out[0], k, hw, out[1], direct ? 1 : 0});
  SetConvWork(node, ctx, residual, d);
  return Finish(ctx, std::move(d), act);
}

absl::Status LowerGemm(LoweringContext& ctx, const Node& node) {
  return LowerGemmImpl(ctx, node, /*oc_vectors=*/false);
}

absl::Status LowerGemmOc(LoweringContext& ctx, const Node& node) {
  return LowerGemmImpl(ctx, node, /*oc_vectors=*/true);
}

// Depthwise 3x3 parameters: vw output columns per item, wg items per group.
KernelParams Depthwise3x3Heuristic(const Node& node, const LoweringContext& ctx) {
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  // float16 strips measured 1.6x faster than float8 where OW >= 16.
  const int64_t vw = out[3] >= 16 ? 16 : 8;
  // Little work per item: large groups where there are enough items. Two
  // sizes only: PoCL compiles a work-group function per kernel and local
  // size at the first enqueue, so every distinct size costs a cold start.
  const int64_t items = int64_t(CeilDiv(out[3], vw)) * out[2] * out[0] * out[1];
  const int64_t many = 128 * 4 * std::max<int64_t>(ctx.device().compute_units, 1);
  return {{"vw", vw}, {"wg", items >= many ? 128 : 16}};
}

// Output rows per item of conv2d_depthwise3x3, each input row loaded once
// for the rows that read it: 2 took MobileNet V2's depthwise 3x3 layers
// 0.88x and MNASNet's 0.83x as long as 1 (device time, AVX2, PoCL 3.1,
// RECQ_TUNING=off, 8 rounds); 4 measured no better than 2. With 16-lane
// vectors 4: `recq tune --exhaustive` chose it for seven of the eight
// layers it left on this kernel in MobileNet V2 and V3-Small and
// EfficientNet-B0 (AMD EPYC, 2026-11-28).
int64_t Depthwise3x3Rows(const LoweringContext& ctx) {
  return ctx.device().native_float_lanes >= 16 ? 4 : 2;
}

// conv2d_depthwise3x3 gives way to conv2d_depthwise_staged at stride 1
// from 16 columns and at stride 2 up to 7: `recq tune --exhaustive` of
// MobileNet V2 and V3-Small and EfficientNet-B0 chose the staged kernel on
// each such layer (MobileNet V2's 144 channels at 56x56: 0.176 against
// 0.390 ms at the defaults then, 192 at 28x28: 0.061 against 0.120), and
// this one at 7 columns, on strided layers of 14 columns and more, and,
// by a little, at 14x14 (AMD EPYC, PoCL 3.1, 2026-11-28).
bool Depthwise3x3Defers(const Node& node, const LoweringContext& ctx) {
  const int64_t ow = ShapeOf(ctx, node.outputs[0])[3];
  return AttrsOr<Conv2DAttrs>(node).strides[0] == 1 ? ow >= 16 : ow <= 7;
}

// DepthwiseGroup shapes `wg` items as (1, rows, channels): up to 8 rows of
// one strip column, so that the shape depends on wg alone, not on the
// tensor's width or height (rows and channels past the end idle).
std::array<size_t, 3> DepthwiseGroup(int64_t wg) {
  const int64_t rows = std::clamp<int64_t>(wg / 16, 1, 8);
  return {1, size_t(rows), size_t(std::max<int64_t>(wg / rows, 1))};
}

// The depthwise strips' parameters (3x3 and KxK): vw columns per item, wg
// items, the heuristic's unless the tuner chose.
struct DepthwiseStrip {
  int64_t vw, wg;
};
absl::StatusOr<DepthwiseStrip> DepthwiseStripOf(const LoweringContext& ctx, const Node& node) {
  const KernelParams h = Depthwise3x3Heuristic(node, ctx);
  RECQ_ASSIGN_OR_RETURN(const int64_t vw, Param(ctx, node, "vw", h.at("vw"), {8, 16}));
  RECQ_ASSIGN_OR_RETURN(const int64_t wg, ParamInRange(ctx, node, "wg", h.at("wg"), 1, 1024));
  return DepthwiseStrip{vw, wg};
}

absl::Status LowerDepthwise3x3(LoweringContext& ctx, const Node& node) {
  const auto& a = AttrsOr<Conv2DAttrs>(node);
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  const auto [y, residual, act] = ctx.OutputOf(node);
  RECQ_ASSIGN_OR_RETURN(const DepthwiseStrip strip, DepthwiseStripOf(ctx, node));
  const int64_t vw = strip.vw, wg = strip.wg;
  Dispatch d;
  d.label = "conv2d_depthwise3x3";
  RECQ_ASSIGN_OR_RETURN(const int64_t rb, Param(ctx, node, "rb", Depthwise3x3Rows(ctx), {1, 2, 4}));
  d.kernel = ctx.Kernel("conv2d_3x3.cl", "conv2d_depthwise3x3",
                        {absl::StrCat("-DRECQ_C3_STRIDE=", a.strides[0]),
                         absl::StrCat("-DRECQ_C3_VW=", vw), absl::StrCat("-DRECQ_C3_RB=", rb)});
  const std::array<size_t, 3> range = {CeilDiv(out[3], vw), CeilDiv(out[2], rb),
                                       size_t(out[0] * out[1])};
  SetRange(d, range, DepthwiseGroup(wg));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]), ctx.Arg(Bias(node)), ctx.Arg(y)};
  AddInts(d, {x[0], x[1], x[2], x[3], out[2], out[3], a.pads[0]});
  SetConvWork(node, ctx, residual, d);
  return Finish(ctx, std::move(d), act);
}

// Depthwise KxK (conv2d_depthwise.cl): square kernels up to 7x7 with unit
// dilation and equal strides of 1 or 2, any padding (MobileNet V3's and
// EfficientNet's 5x5, 3x3 without the left pad of 1 conv2d_depthwise3x3 needs).
bool DepthwiseKxkFits(const Node& node, const LoweringContext& ctx) {
  if (!Cpu(ctx) || !ConvShapeOf(node, ctx).depthwise) return false;
  const auto& a = AttrsOr<Conv2DAttrs>(node);
  const Shape& w = ShapeOf(ctx, node.inputs[1]);
  return w[2] == w[3] && w[2] >= 2 && w[2] <= 7 && a.dilations[0] == 1 && a.dilations[1] == 1 &&
         a.strides[0] == a.strides[1] && (a.strides[0] == 1 || a.strides[0] == 2);
}

absl::Status LowerDepthwiseKxk(LoweringContext& ctx, const Node& node) {
  const auto& a = AttrsOr<Conv2DAttrs>(node);
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const Shape& w = ShapeOf(ctx, node.inputs[1]);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  const auto [y, residual, act] = ctx.OutputOf(node);
  // The same parameters as the 3x3 strips.
  RECQ_ASSIGN_OR_RETURN(const DepthwiseStrip strip, DepthwiseStripOf(ctx, node));
  const int64_t vw = strip.vw, wg = strip.wg;
  Dispatch d;
  d.label = "conv2d_depthwise_kxk";
  d.kernel =
      ctx.Kernel("conv2d_depthwise.cl", "conv2d_depthwise_kxk",
                 {absl::StrCat("-DRECQ_DW_K=", w[2]), absl::StrCat("-DRECQ_DW_S=", a.strides[0]),
                  absl::StrCat("-DRECQ_DW_VW=", vw)});
  const std::array<size_t, 3> range = {CeilDiv(out[3], vw), size_t(out[2]),
                                       size_t(out[0] * out[1])};
  SetRange(d, range, WorkGroupFor(range, size_t(wg)));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]), ctx.Arg(Bias(node)), ctx.Arg(y)};
  AddInts(d, {x[0], x[1], x[2], x[3], out[2], out[3], a.pads[0], a.pads[1]});
  SetConvWork(node, ctx, residual, d);
  return Finish(ctx, std::move(d), act);
}

// conv2d_depthwise_staged (conv2d_depthwise.cl): the shapes
// conv2d_depthwise_kxk takes, each item computing whole output rows of one
// channel from a private copy of their padded input rows.
// The copy's floats (16 KB of each item's stack).
constexpr int64_t kDepthwiseStagedFloats = 4096;

// The most output rows an item can take at `vw` lanes a strip: those whose
// (rb-1)*S+K padded input rows fit the copy (0: not one).
int64_t DepthwiseStagedMaxRows(const Node& node, const LoweringContext& ctx, int64_t vw) {
  const int64_t s = AttrsOr<Conv2DAttrs>(node).strides[0];
  const Shape& w = ShapeOf(ctx, node.inputs[1]);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  const int64_t wp = (std::max(out[3], vw) - 1) * s + w[2];
  const int64_t in_rows = kDepthwiseStagedFloats / wp;
  return in_rows < w[2] ? 0 : std::min(out[2], (in_rows - w[2]) / s + 1);
}

bool DepthwiseStagedFits(const Node& node, const LoweringContext& ctx) {
  return DepthwiseKxkFits(node, ctx) && DepthwiseStagedMaxRows(node, ctx, 16) >= 1;
}

// Parameters: vw lanes a strip (16 from 16 columns: the exhaustive tune of
// MobileNet V2 and V3-Small chose 8 at 14 columns), rb output rows an item
// (as many as the copy holds, halved while the items number fewer than 16
// a compute unit), wg items a group.
KernelParams DepthwiseStagedHeuristic(const Node& node, const LoweringContext& ctx) {
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  const int64_t vw = out[3] >= 16 ? 16 : 8;
  int64_t rb = DepthwiseStagedMaxRows(node, ctx, vw);
  const int64_t want = 16 * std::max<int64_t>(ctx.device().compute_units, 1);
  while (rb > 1 && out[0] * out[1] * int64_t(CeilDiv(out[2], rb)) < want) rb = CeilDiv(rb, 2);
  return {{"vw", vw}, {"rb", std::max<int64_t>(rb, 1)}, {"wg", 4}};
}

std::vector<KernelParams> DepthwiseStagedSpace(const Node& node, const LoweringContext& ctx) {
  const KernelParams h = DepthwiseStagedHeuristic(node, ctx);
  std::vector<KernelParams> space;
  for (KernelParams p :
       ParamSpace(h, {{"vw", {8, 16}}, {"rb", {h.at("rb"), 1, 2, 4, 8, 16}}, {"wg", {1, 4, 16}}})) {
    if (p.at("rb") <= DepthwiseStagedMaxRows(node, ctx, p.at("vw"))) space.push_back(p);
  }
  return space;
}

absl::Status LowerDepthwiseStaged(LoweringContext& ctx, const Node& node) {
  const auto& a = AttrsOr<Conv2DAttrs>(node);
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const Shape& w = ShapeOf(ctx, node.inputs[1]);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  const auto [y, residual, act] = ctx.OutputOf(node);
  const KernelParams h = DepthwiseStagedHeuristic(node, ctx);
  RECQ_ASSIGN_OR_RETURN(const int64_t vw, Param(ctx, node, "vw", h.at("vw"), {8, 16}));
  const int64_t max_rows = DepthwiseStagedMaxRows(node, ctx, vw);
  RECQ_ASSIGN_OR_RETURN(const int64_t rb,
                        ParamInRange(ctx, node, "rb", std::min(h.at("rb"), max_rows), 1, max_rows));
  RECQ_ASSIGN_OR_RETURN(const int64_t wg, ParamInRange(ctx, node, "wg", h.at("wg"), 1, 1024));
  Dispatch d;
  d.label = "conv2d_depthwise_staged";
  d.kernel = ctx.Kernel(
      "conv2d_depthwise.cl", "conv2d_depthwise_staged",
      {absl::StrCat("-DRECQ_DW_K=", w[2]), absl::StrCat("-DRECQ_DW_S=", a.strides[0]),
       absl::StrCat("-DRECQ_DW_VW=", vw), absl::StrCat("-DRECQ_DW_BUF=", kDepthwiseStagedFloats)});
  SetRange(d, {size_t(out[0] * out[1]), CeilDiv(out[2], rb), 1}, {size_t(wg), 1, 1});
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]), ctx.Arg(Bias(node)), ctx.Arg(y)};
  AddInts(d, {x[0], x[1], x[2], x[3], out[2], out[3], a.pads[0], a.pads[1], rb});
  SetConvWork(node, ctx, residual, d);
  return Finish(ctx, std::move(d), act);
}

absl::Status LowerDense3x3(LoweringContext& ctx, const Node& node) {
  const auto& a = AttrsOr<Conv2DAttrs>(node);
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  const auto [y, residual, act] = ctx.OutputOf(node);
  // vw output columns per item; 8 is the heuristic.
  RECQ_ASSIGN_OR_RETURN(const int64_t vw, Param(ctx, node, "vw", 8, {8, 16}));
  // Much work per item: one-item groups measured as good as larger ones.
  RECQ_ASSIGN_OR_RETURN(const int64_t wg, ParamInRange(ctx, node, "wg", 1, 1, 1024));
  Dispatch d;
  d.label = "conv2d_dense3x3";
  d.kernel = ctx.Kernel(
      "conv2d_3x3.cl", "conv2d_dense3x3",
      {absl::StrCat("-DRECQ_C3_STRIDE=", a.strides[0]), absl::StrCat("-DRECQ_C3_VW=", vw)});
  const std::array<size_t, 3> range = {CeilDiv(out[3], vw), size_t(out[2]),
                                       size_t(out[0]) * CeilDiv(out[1], 8)};
  SetRange(d, range, WorkGroupFor(range, size_t(wg)));
  d.args = {ctx.Arg(node.inputs[0]), PackDense3x3Weights(ctx, node.inputs[1], out[1], x[1]),
            ctx.Arg(Bias(node)), ctx.Arg(y)};
  AddInts(d, {x[0], x[1], x[2], x[3], out[1], out[2], out[3], a.pads[0]});
  SetConvWork(node, ctx, residual, d);
  return Finish(ctx, std::move(d), act);
}

// TiledParams: conv2d_tiled's tile (conv2d_cpu.cl).
struct TiledParams {
  int64_t vw = 16;  // output columns per item (one vector)
  int64_t ocb = 8;  // output channels per item
  int64_t rb = 1;   // output rows per item
};

// `lanes`: DeviceFacts::CpuAccumulatorLanes().
TiledParams ChooseTiled(int64_t ow, int64_t ocpg, int64_t lanes) {
  TiledParams p;
  // 16 unless it computes over 1/8 more padded columns than 8: float16
  // measured faster than float8 on PoCL where both fit (Inception-v3's
  // 147- and 71-wide stem convolutions: 7.5 -> 5.9 and 9.5 -> 7.7 ms).
  p.vw = CeilDiv(ow, 16) * 16 * 8 <= CeilDiv(ow, 8) * 8 * 9 ? 16 : 8;
  // Whole groups of up to 8 channels (ResNeXt's 4 per group), else 8, and
  // no more than the accumulator lanes hold.
  p.ocb = std::clamp<int64_t>(lanes / p.vw, 1, std::min<int64_t>(ocpg, 8));
  // Rows up to the accumulator lanes (128 on AVX-512: 8 of its registers)
  // to cover the FMA latency.
  p.rb = std::clamp<int64_t>(int64_t(CeilDiv(lanes, p.vw * p.ocb)), 1, 4);
  return p;
}

// Weights [OC][CPG][KH][KW] repacked as [groups][ceil(OCPG/ocb)][CPG][KH][KW]
// [ocb], zero past each group's OCPG.
DispatchArg PackTiledWeights(LoweringContext& ctx, ValueId w, const Shape& ws, int64_t groups,
                             int64_t ocb) {
  absl::Span<const float> src = ctx.graph().value(w).floats();
  const int64_t ocpg = ws[0] / groups;
  const int64_t k = ws[1] * ws[2] * ws[3];
  const int64_t blocks = CeilDiv(ocpg, ocb);
  auto packed = std::make_shared<std::vector<float>>(groups * blocks * k * ocb, 0.0f);
  for (int64_t o = 0; o < ws[0]; ++o) {
    const int64_t g = o / ocpg;
    const int64_t oc = o % ocpg;
    float* dst = packed->data() + ((g * blocks + oc / ocb) * k) * ocb + oc % ocb;
    for (int64_t i = 0; i < k; ++i) dst[i * ocb] = src[o * k + i];
  }
  return ctx.ReplaceConstant(w, std::move(packed));
}

// The row width conv2d_tiled_padded copies the input to: the left pad, the
// row, and zeros up to what the last tile of either width (8 or 16) reads
// with direct loads (stride 1 or 2).
int64_t PaddedWidth(const Node& node, const LoweringContext& ctx) {
  const auto& a = AttrsOr<Conv2DAttrs>(node);
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const Shape& w = ShapeOf(ctx, node.inputs[1]);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  return std::max(a.pads[1] + x[3] + a.pads[3],
                  a.strides[1] * std::max<int64_t>(out[3], 16) + (w[3] - 1) * a.dilations[1]);
}

// conv2d_tiled_padded fits where a quarter or more of conv2d_tiled's column
// tiles (at the heuristic width) would take the edge window, which copies
// the taps lane by lane through private memory: narrow maps with padding
// (Inception-v3's 1x7 and 3x3 convolutions on 17x17 and 8x8 maps) or a last
// tile past the row. Strides 1 and 2 only (the direct loads), and 1 MFLOP
// or more, so that the copy's own dispatch is small beside the convolution.
bool TiledPaddedFits(const Node& node, const LoweringContext& ctx) {
  if (!Cpu(ctx) || !ConvShapeOf(node, ctx).constant_weights) return false;
  const auto& a = AttrsOr<Conv2DAttrs>(node);
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const Shape& w = ShapeOf(ctx, node.inputs[1]);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  const int64_t sw = a.strides[1];
  if (sw != 1 && sw != 2) return false;
  if (2.0 * double(Product(out, 0, 4)) * double(w[1] * w[2] * w[3]) < 1e6) return false;
  const int64_t vw = ChooseTiled(out[3], out[1] / a.groups, ctx.device().CpuAccumulatorLanes()).vw;
  const int64_t span =
      sw == 1 ? vw + (w[3] - 1) * a.dilations[1] : 2 * vw + (w[3] - 1) * a.dilations[1];
  const int64_t tiles = int64_t(CeilDiv(out[3], vw));
  int64_t edge = 0;
  for (int64_t i = 0; i < tiles; ++i) {
    const int64_t ow0 = out[3] >= vw ? std::min(i * vw, out[3] - vw) : 0;
    const int64_t q = ow0 * sw - a.pads[1];
    if (q < 0 || q + span > x[3]) ++edge;
  }
  return edge * 4 >= tiles;
}

size_t TiledPaddedScratch(const Node& node, const LoweringContext& ctx) {
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  // Floats: enough for either storage precision.
  return size_t(x[0] * x[1] * x[2] * PaddedWidth(node, ctx)) * sizeof(float);
}

absl::Status LowerTiledImpl(LoweringContext& ctx, const Node& node, bool padded) {
  const auto& a = AttrsOr<Conv2DAttrs>(node);
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const Shape& w = ShapeOf(ctx, node.inputs[1]);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  const auto [y, residual, act] = ctx.OutputOf(node);
  const int64_t ocpg = out[1] / a.groups;
  TiledParams p = ChooseTiled(out[3], ocpg, ctx.device().CpuAccumulatorLanes());
  RECQ_ASSIGN_OR_RETURN(p.vw, Param(ctx, node, "vw", p.vw, {8, 16}));
  RECQ_ASSIGN_OR_RETURN(p.ocb, ParamInRange(ctx, node, "ocb", p.ocb, 1, 16));
  RECQ_ASSIGN_OR_RETURN(p.rb, ParamInRange(ctx, node, "rb", p.rb, 1, 4));
  DispatchArg src = ctx.Arg(node.inputs[0]);
  int64_t in_w = x[3], pl = a.pads[1];
  if (padded) {
    const int64_t wp = PaddedWidth(node, ctx);
    Dispatch pd;
    pd.label = "conv2d_pad_columns";
    pd.kernel = ctx.Kernel("conv2d_cpu.cl", "conv2d_pad_columns");
    const std::array<size_t, 3> rows = {size_t(x[2]), size_t(x[0] * x[1]), 1};
    SetRange(pd, rows, WorkGroupFor(rows, 16));
    pd.args = {src, ctx.Scratch()};
    AddInts(pd, {x[0] * x[1], x[2], x[3], wp, a.pads[1]});
    const double in_bytes = double(ctx.graph().value(node.inputs[0]).desc.ByteSize());
    pd.bytes = in_bytes * (1.0 + double(wp) / double(x[3]));
    ctx.Emit(std::move(pd));
    src = ctx.Scratch();
    in_w = wp;
    pl = 0;
  }
  Dispatch d;
  d.label = padded ? "conv2d_tiled_padded" : "conv2d_tiled";
  d.kernel = ctx.Kernel(
      "conv2d_cpu.cl", "conv2d_tiled",
      {absl::StrCat("-DRECQ_CT_VW=", p.vw), absl::StrCat("-DRECQ_CT_OCB=", p.ocb),
       absl::StrCat("-DRECQ_CT_RB=", p.rb), absl::StrCat("-DRECQ_CT_KW=", w[3]),
       absl::StrCat("-DRECQ_CT_SW=", a.strides[1]), absl::StrCat("-DRECQ_CT_DW=", a.dilations[1])});
  const std::array<size_t, 3> range = {CeilDiv(out[3], p.vw), CeilDiv(out[2], p.rb),
                                       size_t(out[0] * a.groups) * CeilDiv(ocpg, p.ocb)};
  // About 1 MFLOP per work-group: PoCL's per-group cost stays small while
  // both cores get many groups.
  const int64_t item_flops = 2 * w[1] * w[2] * w[3] * p.ocb * p.vw * p.rb;
  // Measured faster than one-item groups on ResNet-18 (PoCL 3.1, 2 cores).
  RECQ_ASSIGN_OR_RETURN(
      const int64_t wg,
      ParamInRange(ctx, node, "wg", std::clamp<int64_t>(1'000'000 / item_flops, 1, 64), 1, 1024));
  SetRange(d, range, WorkGroupFor(range, size_t(wg)));
  d.args = {src, PackTiledWeights(ctx, node.inputs[1], w, a.groups, p.ocb), ctx.Arg(Bias(node)),
            ctx.Arg(residual), ctx.Arg(y)};
  AddInts(d, {x[0], x[1], x[2], in_w, out[1], out[2], out[3], w[2], a.strides[0], a.dilations[0],
              a.pads[0], pl, a.groups});
  SetConvWork(node, ctx, residual, d);
  return Finish(ctx, std::move(d), act);
}

absl::Status LowerTiled(LoweringContext& ctx, const Node& node) {
  return LowerTiledImpl(ctx, node, /*padded=*/false);
}

absl::Status LowerTiledPadded(LoweringContext& ctx, const Node& node) {
  return LowerTiledImpl(ctx, node, /*padded=*/true);
}

// Winograd F(4x4, 3x3) (conv2d_winograd.cl): 3x3, stride 1, unit dilation,
// groups 1, constant weights, any padding. It computes 36 products of
// C x K over the 4x4 output tiles where the direct convolution computes 144
// multiply-adds per output position and channel pair: 4x fewer, for 4x the
// weights' bytes (U is 6x6 per channel pair, in float). It fits where both
// channel counts are 16 or more (the transforms' cost, linear in C + K,
// stays small beside the products) and there are 16 tiles or more: each of
// U's floats feeds one multiply-add per tile (per 8-tile vector lane set,
// rows padded), and with fewer the products wait on memory. ResNet-18's
// layer3, whose three stride-1 3x3 layers on 14x14 maps have 16 tiles,
// took 4.04 ms with them on it against 4.45 ms direct (sum of each
// dispatch's fastest of 20 profile runs, tf32, AMD EPYC, PoCL 3.1,
// 2026-11-28); its 7x7 maps have 4 tiles.
struct WinogradTiles {
  int64_t th, tw, twp, tp;
};
WinogradTiles WinogradTilesOf(const Node& node, const LoweringContext& ctx) {
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  const int64_t th = CeilDiv(out[2], 4), tw = CeilDiv(out[3], 4);
  const int64_t twp = int64_t(CeilDiv(tw, 8)) * 8;
  return {th, tw, twp, int64_t(CeilDiv(out[0] * th * twp, 16)) * 16};
}

// The padded copy's row width: the left pad, the row, and zeros up to what
// the last row of 8 tiles reads (two vectors of 16 and two columns more).
int64_t WinogradPaddedWidth(const Node& node, const LoweringContext& ctx) {
  const auto& a = AttrsOr<Conv2DAttrs>(node);
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  return std::max(a.pads[1] + x[3], 4 * WinogradTilesOf(node, ctx).twp + 2);
}

// Scratch, in floats under either storage precision: the padded copy of X,
// then V [36][C][TP], then M [36][K][TP].
struct WinogradLayout {
  int64_t v_offset, m_offset, floats;
};
WinogradLayout WinogradLayoutOf(const Node& node, const LoweringContext& ctx) {
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  const int64_t tp = WinogradTilesOf(node, ctx).tp;
  const int64_t v = int64_t(CeilDiv(x[0] * x[1] * x[2] * WinogradPaddedWidth(node, ctx), 16)) * 16;
  const int64_t m = v + 36 * tp * x[1];
  return {v, m, m + 36 * tp * out[1]};
}

size_t WinogradScratch(const Node& node, const LoweringContext& ctx) {
  return size_t(WinogradLayoutOf(node, ctx).floats) * sizeof(float);
}

// Fits as above, with the scratch's float offsets within the kernels' int
// arguments.
bool WinogradFits(const Node& node, const LoweringContext& ctx) {
  const ConvShape s = ConvShapeOf(node, ctx);
  if (!Cpu(ctx) || !ctx.relaxed_fp32() || !s.constant_weights || !s.groups_1) return false;
  const auto& a = AttrsOr<Conv2DAttrs>(node);
  const Shape& w = ShapeOf(ctx, node.inputs[1]);
  const WinogradTiles tiles = WinogradTilesOf(node, ctx);
  return w[2] == 3 && w[3] == 3 && a.strides[0] == 1 && a.strides[1] == 1 && a.dilations[0] == 1 &&
         a.dilations[1] == 1 && w[1] >= 16 && w[0] >= 16 &&
         ShapeOf(ctx, node.inputs[0])[0] * tiles.th * tiles.tw >= 16 &&
         WinogradLayoutOf(node, ctx).floats <= std::numeric_limits<int32_t>::max();
}

// Winograd parameters: vw tiles per GEMM item (one vector), ocb output
// channels per GEMM item, wg GEMM items per work-group: conv2d_pointwise's
// heuristic (the GEMM is its kernel with tiles for pixels).
KernelParams WinogradHeuristic(const DeviceFacts& device) {
  return {{"vw", 16}, {"ocb", 16 * 8 <= device.CpuAccumulatorLanes() ? 8 : 4}, {"wg", 16}};
}

std::vector<KernelParams> WinogradSpace(const Node&, const LoweringContext& ctx) {
  return ParamSpace(WinogradHeuristic(ctx.device()),
                    {{"vw", {8, 16}}, {"ocb", {4, 8, 16}}, {"wg", {4, 16, 64}}});
}

// Weights [K][C][3][3] transformed to U = G g G^T (6x6 per pair, in double)
// and packed as [36][ceil(K/ocb)][C][ocb], zero past K. Stored as float32
// under either storage precision (as the bits of uint32 elements, which
// half storage leaves as they are): the output transform multiplies U's
// errors by up to 8 per axis, so a half U (2^-11 relative) loses more than
// half storage's tolerance allows (0.12 against 0.06 on a 64-channel case).
DispatchArg PackWinogradWeights(LoweringContext& ctx, ValueId w, int64_t k, int64_t c,
                                int64_t ocb) {
  static constexpr double kG[6][3] = {{1.0 / 4, 0, 0},
                                      {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                      {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                      {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                      {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                      {0, 0, 1}};
  absl::Span<const float> src = ctx.graph().value(w).floats();
  const int64_t blocks = CeilDiv(k, ocb);
  std::vector<float> packed(size_t(36 * blocks * c * ocb), 0.0f);
  for (int64_t o = 0; o < k; ++o) {
    for (int64_t i = 0; i < c; ++i) {
      const float* g = src.data() + (o * c + i) * 9;
      double gg[6][3];  // G g
      for (int r = 0; r < 6; ++r) {
        for (int col = 0; col < 3; ++col) {
          gg[r][col] = kG[r][0] * g[col] + kG[r][1] * g[3 + col] + kG[r][2] * g[6 + col];
        }
      }
      for (int r = 0; r < 6; ++r) {
        for (int col = 0; col < 6; ++col) {
          const double u = gg[r][0] * kG[col][0] + gg[r][1] * kG[col][1] + gg[r][2] * kG[col][2];
          const int64_t e = r * 6 + col;
          packed[size_t(((e * blocks + o / ocb) * c + i) * ocb + o % ocb)] = float(u);
        }
      }
    }
  }
  std::vector<uint32_t> bits(packed.size());
  std::memcpy(bits.data(), packed.data(), packed.size() * sizeof(float));
  return ctx.ReplaceConstant(w, std::make_shared<const HostData>(std::move(bits)));
}

absl::Status LowerWinograd(LoweringContext& ctx, const Node& node) {
  const auto& a = AttrsOr<Conv2DAttrs>(node);
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  const auto [y, residual, act] = ctx.OutputOf(node);
  const KernelParams h = WinogradHeuristic(ctx.device());
  RECQ_ASSIGN_OR_RETURN(const int64_t vw, Param(ctx, node, "vw", h.at("vw"), {8, 16}));
  RECQ_ASSIGN_OR_RETURN(const int64_t ocb, Param(ctx, node, "ocb", h.at("ocb"), {4, 8, 16}));
  RECQ_ASSIGN_OR_RETURN(const int64_t wg, ParamInRange(ctx, node, "wg", h.at("wg"), 1, 1024));
  const WinogradTiles tiles = WinogradTilesOf(node, ctx);
  const WinogradLayout layout = WinogradLayoutOf(node, ctx);
  const int64_t c = x[1], k = out[1], tp = tiles.tp;
  const int64_t wp = WinogradPaddedWidth(node, ctx);
  const std::vector<std::string> options = {absl::StrCat("-DRECQ_WG_VW=", vw),
                                            absl::StrCat("-DRECQ_WG_OCB=", ocb)};
  // Fixed groups (one work-group function per kernel on PoCL, whatever the
  // layer's shape).
  const std::array<size_t, 3> transform_group = {2, 1, 4};
  const double in_bytes = double(ctx.graph().value(node.inputs[0]).desc.ByteSize());

  Dispatch pd;
  pd.label = "conv2d_pad_columns";
  pd.kernel = ctx.Kernel("conv2d_cpu.cl", "conv2d_pad_columns");
  SetRange(pd, {size_t(x[2]), size_t(x[0] * c), 1}, {16, 1, 1});
  pd.args = {ctx.Arg(node.inputs[0]), ctx.Scratch()};
  AddInts(pd, {x[0] * c, x[2], x[3], wp, a.pads[1]});
  pd.bytes = in_bytes * (1.0 + double(wp) / double(x[3]));
  ctx.Emit(std::move(pd));

  Dispatch in;
  in.label = "conv2d_winograd_input";
  in.kernel = ctx.Kernel("conv2d_winograd.cl", "conv2d_winograd_input", options);
  SetRange(in, {size_t(tiles.twp / 8), size_t(tiles.th), size_t(x[0] * c)}, transform_group);
  in.args = {ctx.Scratch()};
  AddInts(in, {layout.v_offset, x[0], c, x[2], wp, tiles.th, tiles.twp, tp, a.pads[0]});
  in.bytes = in_bytes * double(wp) / double(x[3]) + double(36 * tp * c) * sizeof(float);
  ctx.Emit(std::move(in));

  Dispatch gemm;
  gemm.label = "conv2d_winograd_gemm";
  gemm.kernel = ctx.Kernel("conv2d_winograd.cl", "conv2d_winograd_gemm", options);
  const std::array<size_t, 3> range = {size_t(tp / vw), CeilDiv(k, ocb), 36};
  SetRange(gemm, range, WorkGroupFor(range, size_t(wg)));
  gemm.args = {ctx.Scratch(), PackWinogradWeights(ctx, node.inputs[1], k, c, ocb)};
  AddInts(gemm, {layout.v_offset, layout.m_offset, tp, c, k});
  gemm.flops = 2.0 * 36 * double(x[0] * tiles.th * tiles.tw) * double(c) * double(k);
  gemm.bytes = double(36 * tp * (c + k) + 36 * c * k) * sizeof(float);
  ctx.Emit(std::move(gemm));

  Dispatch o;
  o.label = "conv2d_winograd_output";
  o.kernel = ctx.Kernel("conv2d_winograd.cl", "conv2d_winograd_output", options);
  SetRange(o, {size_t(tiles.twp / 8), size_t(tiles.th), size_t(x[0] * k)}, transform_group);
  o.args = {ctx.Scratch()};
  AddInts(o, {layout.m_offset});
  o.args.push_back(ctx.Arg(Bias(node)));
  o.args.push_back(ctx.Arg(residual));
  o.args.push_back(ctx.Arg(y));
  AddInts(o, {x[0], k, out[2], out[3], tiles.th, tiles.twp, tp});
  const double y_bytes = double(ctx.graph().value(node.outputs[0]).desc.ByteSize());
  o.bytes = double(36 * tp * k) * sizeof(float) + (residual != kNoValue ? 2 : 1) * y_bytes;
  return Finish(ctx, std::move(o), act);
}

absl::Status LowerGeneric(LoweringContext& ctx, const Node& node) {
  const auto& a = AttrsOr<Conv2DAttrs>(node);
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const Shape& w = ShapeOf(ctx, node.inputs[1]);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  const auto [y, residual, act] = ctx.OutputOf(node);
  Dispatch d;
  d.label = "conv2d";
  d.kernel = ctx.Kernel("conv2d.cl", "conv2d");
  d.work_dim = 3;
  d.global = {size_t(out[3]), size_t(out[2]), size_t(out[0] * out[1])};
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]), ctx.Arg(Bias(node)), ctx.Arg(y)};
  AddInts(d, {x[1], x[2], x[3], out[1], out[2], out[3], w[2], w[3], a.strides[0], a.strides[1],
              a.pads[0], a.pads[1], a.dilations[0], a.dilations[1], a.groups});
  SetConvWork(node, ctx, residual, d);
  return Finish(ctx, std::move(d), act);
}

std::vector<KernelParams> PointwiseSpace(const Node& node, const LoweringContext& ctx) {
  return ParamSpace(PointwiseHeuristic(node, ctx),
                    {{"vw", {8, 16}}, {"ocb", {4, 8, 16}}, {"wg", {4, 16, 64}}});
}

std::vector<KernelParams> Depthwise3x3Space(const Node& node, const LoweringContext& ctx) {
  return ParamSpace(Depthwise3x3Heuristic(node, ctx), {{"vw", {8, 16}}, {"wg", {16, 128, 256}}});
}

// conv2d_depthwise3x3's: the strips' parameters and its output rows per item.
std::vector<KernelParams> Depthwise3x3RowsSpace(const Node& node, const LoweringContext& ctx) {
  KernelParams h = Depthwise3x3Heuristic(node, ctx);
  h["rb"] = Depthwise3x3Rows(ctx);
  return ParamSpace(h, {{"vw", {8, 16}}, {"wg", {16, 128, 256}}, {"rb", {1, 2, 4}}});
}

std::vector<KernelParams> Dense3x3Space(const Node&, const LoweringContext&) {
  return ParamSpace({{"vw", 8}}, {{"vw", {8, 16}}});
}

// The tile's shape; the group size stays the heuristic's (it follows the
// tile's work).
std::vector<KernelParams> TiledSpace(const Node& node, const LoweringContext& ctx) {
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  const int64_t ocpg = out[1] / AttrsOr<Conv2DAttrs>(node).groups;
  const TiledParams p = ChooseTiled(out[3], ocpg, ctx.device().CpuAccumulatorLanes());
  std::vector<int64_t> ocbs;
  for (int64_t ocb : {4, 8, 16}) {
    const int64_t v = std::min(ocb, ocpg);
    if (std::find(ocbs.begin(), ocbs.end(), v) == ocbs.end()) ocbs.push_back(v);
  }
  return ParamSpace({{"vw", p.vw}, {"ocb", p.ocb}, {"rb", p.rb}},
                    {{"rb", {1, 2, 4}}, {"vw", {16, 8}}, {"ocb", ocbs}});
}

}  // namespace

std::vector<KernelVariant> ConvCpuVariants() {
  KernelVariant depthwise3x3{"conv2d_depthwise3x3",
                             [](const Node& n, const LoweringContext& ctx) {
                               const ConvShape s = ConvShapeOf(n, ctx);
                               return Cpu(ctx) && s.depthwise && s.shifts_3x3;
                             },
                             LowerDepthwise3x3, false, Depthwise3x3RowsSpace};
  depthwise3x3.defers = Depthwise3x3Defers;
  // conv2d_gemm stays first for 3x3 stems and 1x1 layers although the
  // exhaustive tunes chose conv2d_tiled_padded, conv2d_dense3x3 or
  // conv2d_pointwise on many (docs/cpu_tune_exhaustive_2026-11-28.txt):
  // defaults that took them made MobileNet V2 run 0.92x as long but its
  // cold start 4.4 s against 2.1, each new kernel a first-enqueue compile
  // on PoCL (AMD EPYC, 2026-11-28).
  return {
      // First where it fits: only when the precision relaxes float32
      // (LoweringContext::relaxed_fp32). F(4x4, 3x3) put FCN-ResNet50's
      // output at relative L2 1.9e-4 from onnxruntime's against 9.4e-5 with
      // the direct kernels, and Inception-v3's at 1.2e-4 against 4.5e-5,
      // past the 1e-4 float32 compiles are held to; its transforms' rounding
      // stays far inside tf32's and half storage's (PoCL, 2026-11-28).
      {"conv2d_winograd", WinogradFits, LowerWinograd, /*absorbs_residual_add=*/true, WinogradSpace,
       WinogradScratch},
      {"conv2d_gemm_oc", GemmOcFits, LowerGemmOc, /*absorbs_residual_add=*/true, GemmOcSpace,
       GemmScratch},
      {"conv2d_gemm", GemmFits, LowerGemm, /*absorbs_residual_add=*/true, GemmSpace, GemmScratch},
      {"conv2d_pointwise",
       [](const Node& n, const LoweringContext& ctx) {
         return Cpu(ctx) && ConvShapeOf(n, ctx).pointwise;
       },
       LowerPointwise, /*absorbs_residual_add=*/true, PointwiseSpace},
      {"conv2d_pointwise_strided",
       [](const Node& n, const LoweringContext& ctx) {
         return Cpu(ctx) && ConvShapeOf(n, ctx).pointwise_strided;
       },
       LowerPointwiseStrided, /*absorbs_residual_add=*/true, PointwiseSpace,
       PointwiseStridedScratch},
      std::move(depthwise3x3),
      {"conv2d_depthwise_staged", DepthwiseStagedFits, LowerDepthwiseStaged, false,
       DepthwiseStagedSpace},
      {"conv2d_depthwise_kxk", DepthwiseKxkFits, LowerDepthwiseKxk, false, Depthwise3x3Space},
      {"conv2d_tiled_padded", TiledPaddedFits, LowerTiledPadded, /*absorbs_residual_add=*/true,
       TiledSpace, TiledPaddedScratch},
      {"conv2d_tiled",
       [](const Node& n, const LoweringContext& ctx) {
         return Cpu(ctx) && ConvShapeOf(n, ctx).constant_weights;
       },
       LowerTiled, /*absorbs_residual_add=*/true, TiledSpace},
      {"conv2d_dense3x3",
       [](const Node& n, const LoweringContext& ctx) {
         const ConvShape s = ConvShapeOf(n, ctx);
         return Cpu(ctx) && s.groups_1 && s.shifts_3x3 && s.constant_weights;
       },
       LowerDense3x3, false, Dense3x3Space},
      {"conv2d", [](const Node&, const LoweringContext& ctx) { return Cpu(ctx); }, LowerGeneric},
  };
}

}  // namespace recq::internal
