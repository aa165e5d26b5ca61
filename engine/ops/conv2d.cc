// Conv2D: 2-D convolution of NCHW input x [N,C,H,W] with weights
// w [OC, C/groups, KH, KW] and an optional bias [OC]; ONNX Conv.
#include "engine/ops/conv2d.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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

absl::Status ImportConv(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(
      n.CheckAttrs({"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}));
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
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
    return n.Unsupported(absl::StrCat("input is ", xd.ToString(),
                                      "; only 1-D (N, C, L) and 2-D (NCHW) are supported"));
  }
  if (wd.shape.size() != 4) {
    return n.Invalid(absl::StrCat("weight '", n.value_name(w), "' is ", wd.ToString(),
                                  "; a 2-D conv needs [OC, C/group, KH, KW]"));
  }
  RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> kernel_shape, n.Ints("kernel_shape"));
  if (one_d && kernel_shape.size() == 1) kernel_shape.insert(kernel_shape.begin(), 1);
  if (!kernel_shape.empty() && (kernel_shape.size() != 2 || kernel_shape[0] != wd.shape[2] ||
                                kernel_shape[1] != wd.shape[3])) {
    return n.Invalid(absl::StrCat("kernel_shape [", absl::StrJoin(kernel_shape, ","),
                                  "] does not match weight ", wd.ToString()));
  }
  RECQ_ASSIGN_OR_RETURN(Window win, ResolveWindow(n, xd, {wd.shape[2], wd.shape[3]}, one_d));
  RECQ_ASSIGN_OR_RETURN(int64_t group, n.Int("group", 1));
  Conv2DAttrs attrs;
  attrs.strides = win.strides;
  attrs.dilations = win.dilations;
  attrs.pads = win.pads;
  attrs.groups = group;
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
  s.pointwise = a.groups == 1 && w[2] == 1 && w[3] == 1 && a.strides[0] == 1 && a.strides[1] == 1 &&
                a.pads[0] == 0 && a.pads[1] == 0 && a.pads[2] == 0 && a.pads[3] == 0 &&
                s.constant_weights;
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
