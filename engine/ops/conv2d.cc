// Conv2D: 2-D convolution of NCHW input x [N,C,H,W] with weights
// w [OC, C/groups, KH, KW] and an optional bias [OC]; ONNX Conv.
#include "engine/ops/conv2d.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/layout_attrs.h"
#include "engine/ops/onnx_emitter.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/ops/window.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

constexpr OpType kOp = OpType::kConv2D;

absl::StatusOr<TensorDesc> Infer(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kOp, in, 2, 3));
  RECQ_ASSIGN_OR_RETURN(const Conv2DAttrs* a, AttrsOf<Conv2DAttrs>(kOp, attrs));
  const Shape& x = in[0]->shape;
  const Shape& w = in[1]->shape;
  if (x.size() != 4) return Bad(kOp, absl::StrCat("input must be NCHW (rank 4), got ", S(x)));
  if (w.size() != 4) return Bad(kOp, absl::StrCat("weight must be rank 4, got ", S(w)));
  if (a->groups <= 0 || x[1] % a->groups != 0 || w[0] % a->groups != 0) {
    return Bad(kOp, absl::StrCat("groups ", a->groups, " must divide input channels ", x[1],
                                 " and output channels ", w[0]));
  }
  if (w[1] * a->groups != x[1]) {
    return Bad(kOp, absl::StrCat("weight ", S(w), " expects ", w[1] * a->groups,
                                 " input channels with groups ", a->groups, ", input has ", x[1]));
  }
  if (in.size() == 3 && in[2] != nullptr && in[2]->shape != Shape{w[0]}) {
    return Bad(kOp, absl::StrCat("bias must be [", w[0], "], got ", S(in[2]->shape)));
  }
  Shape out = {x[0], w[0], 0, 0};
  for (int i = 0; i < 2; ++i) {
    RECQ_ASSIGN_OR_RETURN(
        out[2 + i], WindowOutput(kOp, x[2 + i], a->pads[i], a->pads[2 + i], w[2 + i], a->strides[i],
                                 a->dilations[i], false));
  }
  return TensorDesc{out};
}

// A 3-D conv, x (N, C, D, H, W) and constant w [OC, C/g, KD, KH, KW], runs
// as one 2-D conv over the depth taps stacked as channels: with xp = x
// padded along D, S_a = xp[:, :, a*dd : ... : sd] (N, C, D', H, W) is tap
// a's input for every output depth; the S_a, moved to (N, D', C, H, W),
// are concatenated per group as channels (a, c) and viewed as
// (N*D', C*KD, H, W); the weights are reordered to [OC, KD*C/g, KH, KW]
// to match, and the result (N*D', OC, H', W') is moved back to
// (N, OC, D', H', W').
absl::Status ImportConv3D(OnnxNodeContext& n, ValueId x) {
  OnnxNodeEmitter* e = EmitterOf(n);
  if (e == nullptr)
    return n.Unsupported("a 3-D conv needs an importer that can emit several nodes");
  RECQ_ASSIGN_OR_RETURN(const OnnxConstant* wc, n.ConstantInput(1));
  if (wc == nullptr || !wc->is_float || wc->dims.size() != 5) {
    return n.Invalid("a 3-D conv needs float weights [OC, C/group, KD, KH, KW]");
  }
  RECQ_ASSIGN_OR_RETURN(ValueId b, n.Input(2, /*optional=*/true));
  const Shape xs = n.desc(x).shape;
  const std::vector<int64_t>& wd = wc->dims;
  RECQ_ASSIGN_OR_RETURN(int64_t group, n.Int("group", 1));
  if (group <= 0 || xs[1] % group != 0 || wd[1] * group != xs[1] || wd[0] % group != 0) {
    return n.Invalid(
        absl::StrCat("weights ", S(wd), " and group ", group, " do not fit input ", S(xs)));
  }
  const std::array<int64_t, 3> kernel = {wd[2], wd[3], wd[4]};
  RECQ_ASSIGN_OR_RETURN(const Window3D win, ResolveWindow3D(n, xs, kernel));
  const std::array<int64_t, 3>& strides = win.strides;
  const std::array<int64_t, 3>& dilations = win.dilations;
  const std::array<int64_t, 6>& pads = win.pads;
  const int64_t kd = kernel[0], sd = strides[0], dd = dilations[0];
  const int64_t padded = xs[2] + pads[0] + pads[3];
  const int64_t span = (kd - 1) * dd + 1;
  if (padded < span) return n.Invalid("the depth window is larger than the padded input");
  const int64_t d_out = (padded - span) / sd + 1;
  const int64_t N = xs[0], C = xs[1], H = xs[3], W = xs[4], cg = C / group;

  ValueId xp = x;
  if (pads[0] > 0 || pads[3] > 0) {
    PadAttrs pad;
    pad.pads = {0, 0, pads[0], 0, 0, 0, 0, pads[3], 0, 0};
    RECQ_ASSIGN_OR_RETURN(xp, e->EmitValue(OpType("Pad"), {x}, pad, "depth_padded"));
  }
  std::vector<ValueId> taps;
  for (int64_t a = 0; a < kd; ++a) {
    const int64_t start = a * dd;
    RECQ_ASSIGN_OR_RETURN(
        ValueId s, e->EmitValue(OpType("Slice"), {xp},
                                SliceAttrs{{start}, {start + (d_out - 1) * sd + 1}, {2}, {sd}},
                                absl::StrCat("tap", a)));
    RECQ_ASSIGN_OR_RETURN(s, e->EmitValue(OpType::kTranspose, {s}, TransposeAttrs{{0, 2, 1, 3, 4}},
                                          absl::StrCat("tap", a, "_moved")));
    RECQ_ASSIGN_OR_RETURN(
        s, e->EmitValue(OpType::kReshape, {s}, ReshapeAttrs{{N, d_out, group, cg, H * W}},
                        absl::StrCat("tap", a, "_groups")));
    taps.push_back(s);
  }
  ValueId stacked = taps[0];
  if (kd > 1) {
    RECQ_ASSIGN_OR_RETURN(stacked,
                          e->EmitValue(OpType::kConcat, std::move(taps), ConcatAttrs{3}, "taps"));
  }
  RECQ_ASSIGN_OR_RETURN(
      ValueId planes,
      e->EmitValue(OpType::kReshape, {stacked}, ReshapeAttrs{{N * d_out, C * kd, H, W}}, "planes"));
  // w2[oc, a * cg + c, :, :] = w[oc, c, a, :, :].
  OnnxConstant w2 = *wc;
  w2.dims = {wd[0], kd * cg, wd[3], wd[4]};
  const int64_t hw = wd[3] * wd[4];
  for (int64_t oc = 0; oc < wd[0]; ++oc) {
    for (int64_t c = 0; c < cg; ++c) {
      for (int64_t a = 0; a < kd; ++a) {
        for (int64_t k = 0; k < hw; ++k) {
          w2.floats[((oc * kd + a) * cg + c) * hw + k] =
              wc->floats[((oc * cg + c) * kd + a) * hw + k];
        }
      }
    }
  }
  RECQ_ASSIGN_OR_RETURN(ValueId w, e->AddConstantValue(std::move(w2), "weights_2d"));
  Conv2DAttrs attrs;
  attrs.strides = {strides[1], strides[2]};
  attrs.dilations = {dilations[1], dilations[2]};
  attrs.pads = {pads[1], pads[2], pads[4], pads[5]};
  attrs.groups = group;
  RECQ_ASSIGN_OR_RETURN(ValueId y2, e->EmitValue(kOp, {planes, w, b}, attrs, "2d"));
  const Shape ys = n.desc(y2).shape;
  RECQ_ASSIGN_OR_RETURN(ValueId y5,
                        e->EmitValue(OpType::kReshape, {y2},
                                     ReshapeAttrs{{N, d_out, ys[1], ys[2], ys[3]}}, "by_depth"));
  return n.Emit(OpType::kTranspose, {y5}, TransposeAttrs{{0, 2, 1, 3, 4}});
}

absl::Status ImportConv(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(
      n.CheckAttrs({"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}));
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  if (n.desc(x).shape.size() == 5) return ImportConv3D(n, x);
  // A 1-D conv (N, C, L) runs as the 2-D one on (N, C, 1, L).
  const bool one_d = n.desc(x).shape.size() == 3;
  ValueId w = kNoValue;
  if (one_d) {
    RECQ_ASSIGN_OR_RETURN(x, ViewAs2D(n, x));
    RECQ_ASSIGN_OR_RETURN(w, WeightsAs2D(n, 1));
  } else {
    RECQ_ASSIGN_OR_RETURN(w, n.Input(1));
  }
  RECQ_ASSIGN_OR_RETURN(ValueId b, n.Input(2, /*optional=*/true));
  const TensorDesc& xd = n.desc(x);
  const TensorDesc& wd = n.desc(w);
  if (xd.shape.size() != 4) {
    return n.Unsupported(
        absl::StrCat("input is ", xd.ToString(),
                     "; only 1-D (N, C, L), 2-D (NCHW) and 3-D (NCDHW) are supported"));
  }
  if (wd.shape.size() != 4) {
    return n.Invalid(absl::StrCat("weight '", n.value_name(w), "' is ", wd.ToString(),
                                  "; a 2-D conv needs [OC, C/group, KH, KW]"));
  }
  RECQ_ASSIGN_OR_RETURN(const Conv2DAttrs attrs, ResolveConvAttrs(n, xd, wd, one_d));
  if (one_d) return EmitFrom2D(n, kOp, {x, w, b}, attrs);
  return n.Emit(kOp, {x, w, b}, attrs);
}

// y * s[c] + t[c] folded into the weights and bias of output channel c.
std::optional<OpDef::FoldedWeights> FoldChannelAffine(
    const Node& node, const std::function<const std::vector<float>*(ValueId)>& constant,
    const std::function<const TensorDesc&(ValueId)>&, const std::vector<float>& s,
    const std::vector<float>& t) {
  const std::vector<float>* w = constant(node.inputs[1]);
  const ValueId bias_id = node.inputs.size() > 2 ? node.inputs[2] : kNoValue;
  const std::vector<float>* b = bias_id == kNoValue ? nullptr : constant(bias_id);
  if (!w || (bias_id != kNoValue && !b)) return std::nullopt;
  const size_t channels = s.size();
  OpDef::FoldedWeights out{*w, std::vector<float>(channels), node.attrs};
  const size_t per_oc = out.weights.size() / channels;
  for (size_t c = 0; c < channels; ++c) {
    for (size_t k = 0; k < per_oc; ++k) out.weights[c * per_oc + k] *= s[c];
  }
  for (size_t c = 0; c < channels; ++c) out.bias[c] = (b ? (*b)[c] : 0.0f) * s[c] + t[c];
  return out;
}

absl::Status ExportConv(const Node& node, const Graph& g, OnnxNodeWriter& out) {
  const auto& a = AttrsOr<Conv2DAttrs>(node);
  out.SetOpType("Conv");
  out.DropTrailingEmptyInputs();
  const Shape& w = g.value(node.inputs[1]).desc.shape;
  out.SetInts("kernel_shape", {w[2], w[3]});
  out.SetInts("strides", {a.strides[0], a.strides[1]});
  out.SetInts("dilations", {a.dilations[0], a.dilations[1]});
  out.SetInts("pads", {a.pads[0], a.pads[1], a.pads[2], a.pads[3]});
  out.SetInt("group", a.groups);
  return absl::OkStatus();
}

}  // namespace

ConvShape ConvShapeOf(const Node& node, const LoweringContext& ctx) {
  const auto& a = AttrsOr<Conv2DAttrs>(node);
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const Shape& w = ShapeOf(ctx, node.inputs[1]);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  ConvShape s;
  s.constant_weights = ctx.graph().value(node.inputs[1]).kind == Value::Kind::kConstant;
  s.groups_1 = a.groups == 1;
  const bool unit_dilation = a.dilations[0] == 1 && a.dilations[1] == 1;
  s.shifts_3x3 = w[2] == 3 && w[3] == 3 && unit_dilation && a.strides[0] == a.strides[1] &&
                 (a.strides[0] == 1 || a.strides[0] == 2) && a.pads[1] == 1;
  const bool unpadded_1x1 = a.groups == 1 && w[2] == 1 && w[3] == 1 && a.pads[0] == 0 &&
                            a.pads[1] == 0 && a.pads[2] == 0 && a.pads[3] == 0 &&
                            s.constant_weights;
  const bool unit_stride = a.strides[0] == 1 && a.strides[1] == 1;
  s.pointwise = unpadded_1x1 && unit_stride;
  s.pointwise_strided = unpadded_1x1 && !unit_stride;
  s.depthwise = a.groups == x[1] && out[1] == x[1];
  return s;
}

void SetConvWork(const Node& node, const LoweringContext& ctx, ValueId residual, Dispatch& d) {
  const Shape& w = ShapeOf(ctx, node.inputs[1]);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  d.flops = 2.0 * double(Product(out, 0, 4)) * double(w[1] * w[2] * w[3]);
  d.bytes = 0;
  for (ValueId id : node.inputs) {
    if (id != kNoValue) d.bytes += double(ctx.graph().value(id).desc.ByteSize());
  }
  const double y = double(ctx.graph().value(node.outputs[0]).desc.ByteSize());
  d.bytes += residual != kNoValue ? 2 * y : y;
}

DispatchArg PackPointwiseWeights(LoweringContext& ctx, ValueId w, int64_t oc, int64_t c,
                                 int64_t ocb) {
  absl::Span<const float> src = ctx.graph().value(w).floats();
  auto packed = std::make_shared<std::vector<float>>(CeilDiv(oc, ocb) * ocb * c, 0.0f);
  for (int64_t o = 0; o < oc; ++o) {
    for (int64_t i = 0; i < c; ++i) {
      (*packed)[((o / ocb) * c + i) * ocb + o % ocb] = src[o * c + i];
    }
  }
  return ctx.ReplaceConstant(w, std::move(packed));
}

RECQ_REGISTER_OPS(Conv2D) {
  OpDef def;
  def.type = kOp;
  def.onnx = {{"", "Conv", 1, kOnnxOpsetMax, ImportConv}};
  def.infer = Infer;
  def.export_onnx = ExportConv;
  def.variants = ConvCpuVariants();
  for (KernelVariant& v : ConvGpuVariants()) def.variants.push_back(std::move(v));
  def.absorbs_activation = true;
  def.fold_channel_affine = FoldChannelAffine;
  return table.Add(std::move(def));
}

}  // namespace recq::internal
