// Conv2D's GPU kernel family (conv2d_gpu.cl): one or a few outputs per
// work-item, consecutive work-items along pixels. In order of preference:
// pointwise with split-K local reduction, depthwise, the implicit GEMMs
// (conv2d_igemm.cc), and direct.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/conv2d.h"
#include "engine/ops/op_util.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

bool Gpu(const LoweringContext& ctx) { return ctx.device().GpuKernels(); }
ValueId Bias(const Node& node) { return node.inputs.size() > 2 ? node.inputs[2] : kNoValue; }

// How conv2d_pointwise_gpu splits one layer: output channels per work-item,
// slices of C per output, local size along the outputs.
struct PointwiseGpuShape {
  int64_t ocb = 1;
  int64_t ks = 1;
  size_t lx = 128;
};

// ChoosePointwiseGpu: a work-item's time is about its serial loop over C
// (H200: 1x1 layers of 16-960 channels measured 6-20 us, rising with the
// loop, nearly flat in the item count), so C is split into slices of at
// most about 24 channels, summed in local memory, while the items stay below
// what the device holds at once (about 2048 per compute unit). Four output
// channels per item measured best or within noise of it.
PointwiseGpuShape ChoosePointwiseGpu(const DeviceFacts& device, int64_t n, int64_t hw, int64_t oc,
                                     int64_t c) {
  const size_t units = device.compute_units != 0 ? device.compute_units : 16;
  const size_t fill = units * 2048;
  // Slices of 12, 16, 32 or 48 channels measured no better in sum.
  const int64_t loop = 24;
  const size_t max_ks = std::min<size_t>(32, GpuGroup(device, 256) / 8);
  PointwiseGpuShape s;
  if (n * hw <= 4) {
    // A squeeze-excitation layer (1x1 pixels): too few outputs to fill the
    // device, so one channel per item and C in slices of about two channels,
    // as `recq tune --exhaustive` chose on an H100 for EfficientNetV2-S's
    // (32-1536 channels in, 32-1536 out; 2-4x faster than the rule below,
    // 2026-11-26).
    s.ocb = 1;
    while (size_t(s.ks) < max_ks && 2 * s.ks < c) s.ks *= 2;
    s.lx = GpuGroup(device, 256) / s.ks;
    return s;
  }
  // Four channels per item unless that pads a small OC much.
  s.ocb = oc >= 16 || oc % 4 == 0 ? 4 : oc % 2 == 0 ? 2 : 1;
  const size_t items = static_cast<size_t>(n * hw) * CeilDiv(oc, s.ocb);
  while (size_t(s.ks) < max_ks && c > loop * s.ks && items * s.ks * 2 <= fill) s.ks *= 2;
  s.lx = GpuGroup(device, 256) / s.ks;
  return s;
}

absl::Status Finish(LoweringContext& ctx, Dispatch d, const Activation& act) {
  AddActivation(d, act);
  ctx.MarkActivationApplied();
  ctx.Emit(std::move(d));
  return absl::OkStatus();
}

PointwiseGpuShape PointwiseGpuOf(const Node& node, const LoweringContext& ctx) {
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  return ChoosePointwiseGpu(ctx.device(), out[0], out[2] * out[3], out[1], x[1]);
}

// The slices of C (ks) and output channels per item (ocb); the local size
// follows from ks.
std::vector<KernelParams> PointwiseGpuSpace(const Node& node, const LoweringContext& ctx) {
  const PointwiseGpuShape s = PointwiseGpuOf(node, ctx);
  std::vector<int64_t> slices;
  for (int64_t ks = 1; ks <= 32 && size_t(ks) <= GpuGroup(ctx.device(), 256); ks *= 2) {
    slices.push_back(ks);
  }
  return ParamSpace({{"ocb", s.ocb}, {"ks", s.ks}}, {{"ks", slices}, {"ocb", {1, 2, 4}}});
}

absl::Status LowerPointwiseGpu(LoweringContext& ctx, const Node& node) {
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  const auto [y, residual, act] = ctx.OutputOf(node);
  const int64_t hw = out[2] * out[3];
  PointwiseGpuShape s = PointwiseGpuOf(node, ctx);
  RECQ_ASSIGN_OR_RETURN(s.ocb, Param(ctx, node, "ocb", s.ocb, {1, 2, 4, 8}));
  RECQ_ASSIGN_OR_RETURN(s.ks, Param(ctx, node, "ks", s.ks, {1, 2, 4, 8, 16, 32}));
  if (size_t(s.ks) > GpuGroup(ctx.device(), 256)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node '", node.name, "': kernel parameter ks=", s.ks, " exceeds the work-group size"));
  }
  s.lx = GpuGroup(ctx.device(), 256) / s.ks;
  Dispatch d;
  d.label = "conv2d_pointwise_gpu";
  d.kernel = ctx.Kernel("conv2d_gpu.cl", "conv2d_pointwise_gpu",
                        {absl::StrCat("-DRECQ_PW_OCB=", s.ocb), absl::StrCat("-DRECQ_PW_KS=", s.ks),
                         absl::StrCat("-DRECQ_PW_LX=", s.lx), FixedActivationOption(act)});
  const size_t items = size_t(out[0]) * CeilDiv(out[1], s.ocb) * size_t(hw);
  d.work_dim = 2;
  d.global = {RoundUp(items, s.lx), size_t(s.ks), 1};
  d.local = {s.lx, size_t(s.ks), 1};
  d.args = {ctx.Arg(node.inputs[0]), PackPointwiseWeights(ctx, node.inputs[1], out[1], x[1], s.ocb),
            ctx.Arg(Bias(node)), ctx.Arg(residual), ctx.Arg(y)};
  AddInts(d, {x[0], x[1], hw, out[1]});
  SetConvWork(node, ctx, residual, d);
  return Finish(ctx, std::move(d), act);
}

// LowerFlatGpu emits the one-dimensional GPU convs (`items` work-items,
// groups of 128): x, w, bias, y, then the shape and window ints, depthwise
// without OC and groups.
absl::Status LowerFlatGpu(LoweringContext& ctx, const Node& node, const char* kernel,
                          std::vector<std::string> options, size_t items, bool depthwise) {
  // wg: the local size, 128 unless chosen.
  RECQ_ASSIGN_OR_RETURN(const int64_t wg, Param(ctx, node, "wg", 128, {32, 64, 128, 256}));
  const auto& a = AttrsOr<Conv2DAttrs>(node);
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  const auto [y, residual, act] = ctx.OutputOf(node);
  Dispatch d;
  d.label = kernel;
  options.push_back(FixedActivationOption(act));
  d.kernel = ctx.Kernel("conv2d_gpu.cl", kernel, std::move(options));
  const size_t local = GpuGroup(ctx.device(), size_t(wg));
  d.work_dim = 1;
  d.global = {RoundUp(items, local), 1, 1};
  d.local = {local, 1, 1};
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]), ctx.Arg(Bias(node)), ctx.Arg(y)};
  AddInts(d, {x[0], x[1], x[2], x[3]});
  if (!depthwise) AddInts(d, {out[1]});
  AddInts(d, {out[2], out[3], a.strides[0], a.strides[1], a.pads[0], a.pads[1], a.dilations[0],
              a.dilations[1]});
  if (!depthwise) AddInts(d, {a.groups});
  SetConvWork(node, ctx, residual, d);
  return Finish(ctx, std::move(d), act);
}

// Whether items may take 4 outputs of a row (rn): the row's stride and
// dilation are 1 and the rows are 8 or wider, so that the outputs share
// their inputs in registers.
bool DepthwiseRowsShare(const Node& node, const LoweringContext& ctx) {
  const auto& a = AttrsOr<Conv2DAttrs>(node);
  return a.strides[1] == 1 && a.dilations[1] == 1 && ShapeOf(ctx, node.outputs[0])[3] >= 8;
}

// 4 outputs an item for kernels 5 wide or wider, where a row's loads fall
// most (7x7: 2.5 an output against 7). On an H100 (recq run --profile,
// 2026-11-26) ConvNeXt-T's 7x7 at 56x56 took 12 us against 17, its
// depthwise convolutions 0.170 ms against 0.217; MobileNet V2's 3x3 ones,
// at 7-10 us a dispatch either way, gained nothing.
int64_t DepthwiseRn(const Node& node, const LoweringContext& ctx) {
  return DepthwiseRowsShare(node, ctx) && ShapeOf(ctx, node.inputs[1])[3] >= 5 ? 4 : 1;
}

absl::Status LowerDepthwiseGpu(LoweringContext& ctx, const Node& node) {
  const Shape& w = ShapeOf(ctx, node.inputs[1]);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  RECQ_ASSIGN_OR_RETURN(const int64_t rn, Param(ctx, node, "rn", DepthwiseRn(node, ctx), {1, 4}));
  if (rn > 1 && !DepthwiseRowsShare(node, ctx)) {
    return absl::InvalidArgumentError(
        absl::StrCat("node '", node.name, "': kernel parameter rn=", rn,
                     " needs stride and dilation 1 along rows of 8 or more outputs"));
  }
  const size_t items = size_t(out[0] * out[1] * out[2]) * CeilDiv(out[3], rn);
  return LowerFlatGpu(ctx, node, "conv2d_depthwise_gpu",
                      {absl::StrCat("-DRECQ_DW_KH=", w[2]), absl::StrCat("-DRECQ_DW_KW=", w[3]),
                       absl::StrCat("-DRECQ_DW_RN=", rn)},
                      items, /*depthwise=*/true);
}

int64_t PerGroup(const Node& node, const LoweringContext& ctx) {
  return ShapeOf(ctx, node.outputs[0])[1] / AttrsOr<Conv2DAttrs>(node).groups;
}

// Channels per item share the input loads (the 3-channel stem: 4 per item
// measured 10-11 us on the H200, 19-23 us with one, 13 with 8).
int64_t DirectGpuOcb(int64_t per_group) {
  return per_group % 4 == 0 ? 4 : per_group % 2 == 0 ? 2 : 1;
}

std::vector<KernelParams> DepthwiseGpuSpace(const Node& node, const LoweringContext& ctx) {
  if (!DepthwiseRowsShare(node, ctx)) return ParamSpace({{"wg", 128}}, {{"wg", {64, 128, 256}}});
  return ParamSpace({{"rn", DepthwiseRn(node, ctx)}, {"wg", 128}},
                    {{"rn", {1, 4}}, {"wg", {64, 128, 256}}});
}

std::vector<KernelParams> DirectGpuSpace(const Node& node, const LoweringContext& ctx) {
  const int64_t per_group = PerGroup(node, ctx);
  std::vector<int64_t> ocbs;
  for (int64_t ocb : {1, 2, 4}) {
    if (per_group % ocb == 0) ocbs.push_back(ocb);
  }
  return ParamSpace({{"ocb", DirectGpuOcb(per_group)}, {"wg", 128}},
                    {{"ocb", ocbs}, {"wg", {64, 128, 256}}});
}

absl::Status LowerDirectGpu(LoweringContext& ctx, const Node& node) {
  const Shape& w = ShapeOf(ctx, node.inputs[1]);
  const int64_t per_group = PerGroup(node, ctx);
  RECQ_ASSIGN_OR_RETURN(const int64_t ocb,
                        Param(ctx, node, "ocb", DirectGpuOcb(per_group), {1, 2, 4}));
  if (per_group % ocb != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("node '", node.name, "': kernel parameter ocb=", ocb, " does not divide the ",
                     per_group, " output channels per group"));
  }
  return LowerFlatGpu(ctx, node, "conv2d_direct_gpu",
                      {absl::StrCat("-DRECQ_DG_KH=", w[2]), absl::StrCat("-DRECQ_DG_KW=", w[3]),
                       absl::StrCat("-DRECQ_DG_OCB=", ocb)},
                      size_t(Product(ShapeOf(ctx, node.outputs[0]), 0, 4) / ocb),
                      /*depthwise=*/false);
}

}  // namespace

// PointwiseGoesToIgemm: a 1x1 layer big enough that the implicit GEMM's
// local-memory tiles beat conv2d_pointwise_gpu's item per pixel, which
// reads every input element once per OCB output channels. `recq tune
// --exhaustive` on an H100 (2026-11-26; ResNet-50, ResNeXt-50,
// FCN-ResNet50, DenseNet-121, Inception-v3, GoogLeNet) chose the implicit
// GEMM for every 1x1 layer of at least 30M multiply-adds with 256 or more
// output channels (1.05-2.5x faster; not where fewer than 64 columns meet
// fewer than 1024 input channels), and conv2d_pointwise_gpu, or a tie,
// below that. (It also chose 32x32 tiles over 56x56 columns at 128 output
// channels, 1.1-1.3x; there the default tile, 128x64, is slower than
// conv2d_pointwise_gpu: DenseNet-121 lost 4 %.) On matrix units the
// implicit GEMM takes more (MmaIgemmPreferred).
bool PointwiseGoesToIgemm(const Node& node, const LoweringContext& ctx) {
  if (MmaIgemmPreferred(node, ctx)) return true;
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  const int64_t c = x[1], oc = out[1], columns = out[0] * out[2] * out[3];
  if (double(c) * double(oc) * double(columns) < 30e6) return false;
  return oc >= 256 && !(columns < 64 && c < 1024) && IgemmGpuFits(node, ctx);
}

std::vector<KernelVariant> ConvGpuVariants() {
  std::vector<KernelVariant> variants = {
      {"conv2d_pointwise_gpu",
       [](const Node& n, const LoweringContext& ctx) {
         return Gpu(ctx) && ConvShapeOf(n, ctx).pointwise && !PointwiseGoesToIgemm(n, ctx);
       },
       LowerPointwiseGpu, /*absorbs_residual_add=*/true, PointwiseGpuSpace},
      {"conv2d_depthwise_gpu",
       [](const Node& n, const LoweringContext& ctx) {
         return Gpu(ctx) && ConvShapeOf(n, ctx).depthwise;
       },
       LowerDepthwiseGpu, false, DepthwiseGpuSpace},
  };
  for (KernelVariant& v : ConvIgemmGpuVariants()) variants.push_back(std::move(v));
  variants.push_back({"conv2d_direct_gpu",
                      [](const Node&, const LoweringContext& ctx) { return Gpu(ctx); },
                      LowerDirectGpu, false, DirectGpuSpace});
  return variants;
}

}  // namespace recq::internal
