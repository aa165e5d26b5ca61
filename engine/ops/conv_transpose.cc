// ConvTranspose (ConvTransposeAttrs), 2-D: x [N, C, H, W], w [C, OC/groups,
// KH, KW], optional bias [OC]. ONNX ConvTranspose opsets 1-21 (strides,
// pads, dilations, output_padding, output_shape, group, auto_pad).
//
// Gather form: one work-item per output element sums, for each kernel tap
// that lands on it, the input channels of its group.
#include <array>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/layout_attrs.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/ops/window.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

const OpType kConvTranspose("ConvTranspose");

absl::StatusOr<TensorDesc> Infer(const OpAttrs& attrs, InferInputs in) {
  constexpr const OpType& op = kConvTranspose;
  RECQ_RETURN_IF_ERROR(CheckInputCount(op, in, 2, 3));
  RECQ_ASSIGN_OR_RETURN(const ConvTransposeAttrs* a, AttrsOf<ConvTransposeAttrs>(op, attrs));
  const Shape& x = in[0]->shape;
  const Shape& w = in[1]->shape;
  if (x.size() != 4 || w.size() != 4) {
    return Bad(op, absl::StrCat("input ", S(x), " and weights ", S(w), " must be 4-D"));
  }
  const int64_t g = a->groups;
  if (g <= 0 || x[1] % g != 0 || w[0] != x[1]) {
    return Bad(op, absl::StrCat("weights ", S(w), " must be [C, OC/groups, KH, KW] for input ",
                                S(x), " and ", g, " groups"));
  }
  const int64_t oc = w[1] * g;
  if (in.size() > 2 && in[2] != nullptr && in[2]->shape != Shape{oc}) {
    return Bad(op, absl::StrCat("bias ", S(in[2]->shape), " must be [", oc, "]"));
  }
  TensorDesc out = *in[0];
  out.shape = {x[0], oc, 0, 0};
  for (int i = 0; i < 2; ++i) {
    if (a->strides[i] <= 0 || a->dilations[i] <= 0 || a->output_padding[i] < 0) {
      return Bad(op, "strides and dilations must be positive, output_padding non-negative");
    }
    out.shape[2 + i] = a->strides[i] * (x[2 + i] - 1) + a->output_padding[i] +
                       (w[2 + i] - 1) * a->dilations[i] + 1 - a->pads[i] - a->pads[2 + i];
    if (out.shape[2 + i] <= 0) {
      return Bad(op, absl::StrCat("the output would be empty along axis ", 2 + i));
    }
  }
  return out;
}

absl::Status Lower(LoweringContext& ctx, const Node& node) {
  const ConvTransposeAttrs& a = AttrsOr<ConvTransposeAttrs>(node);
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const Shape& w = ShapeOf(ctx, node.inputs[1]);
  const Shape& y = ShapeOf(ctx, node.outputs[0]);
  const bool has_bias = node.inputs.size() > 2 && node.inputs[2] != kNoValue;
  if (Product(y, 0, 4) >= (int64_t{1} << 31) || Product(x, 0, 4) >= (int64_t{1} << 31)) {
    return Unsupported(node, "tensors of 2^31 elements or more");
  }
  Dispatch d = MakeDispatch(ctx, "conv_transpose.cl", "conv_transpose_2d", {1},
                            {has_bias ? "-DHAS_BIAS=1" : "-DHAS_BIAS=0"});
  d.work_dim = 3;
  const std::array<size_t, 3> global = {size_t(y[3]), size_t(y[2]), size_t(y[0] * y[1])};
  SetRange(d, global,
           ctx.device().GpuKernels() ? std::array<size_t, 3>{16, 8, 1} : WorkGroupFor(global, 64));
  Dispatch& e = ctx.Emit(std::move(d));
  e.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]),
            has_bias ? ctx.Arg(node.inputs[2]) : DispatchArg::Null(), ctx.Arg(node.outputs[0])};
  AddInts(e, {x[1], x[2], x[3], y[1], y[2], y[3], y[0] * y[1], w[1], w[2], w[3], a.strides[0],
              a.strides[1], a.dilations[0], a.dilations[1], a.pads[0], a.pads[1]});
  AddFusedActivation(ctx, e, node);
  return absl::OkStatus();
}

absl::Status Import(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"auto_pad", "dilations", "group", "kernel_shape",
                                     "output_padding", "output_shape", "pads", "strides"}));
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  // A 1-D ConvTranspose (N, C, L) runs as the 2-D one on (N, C, 1, L): its
  // attributes get the H entries of a 1-wide window.
  const bool one_d = n.desc(x).shape.size() == 3;
  ValueId w = kNoValue;
  if (one_d) {
    RECQ_ASSIGN_OR_RETURN(x, ViewAs2D(n, x));
    RECQ_ASSIGN_OR_RETURN(w, WeightsAs2D(n, 1));
  } else {
    RECQ_ASSIGN_OR_RETURN(w, n.Input(1));
  }
  RECQ_ASSIGN_OR_RETURN(ValueId b, n.Input(2, true));
  const Shape& xs = n.desc(x).shape;
  const Shape& ws = n.desc(w).shape;
  if (xs.size() != 4 || ws.size() != 4) {
    return n.Unsupported(
        absl::StrCat("a ", xs.size() - 2, "-D ConvTranspose (only 1-D and 2-D inputs are)"));
  }
  ConvTransposeAttrs a;
  const size_t spatial = one_d ? 1 : 2;
  // Reads a per-axis attribute; `h` is the H entry of a 1-D one.
  auto ints = [&n, one_d, spatial](const char* name, size_t per_axis,
                                   int64_t h) -> absl::StatusOr<std::vector<int64_t>> {
    RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> v, n.Ints(name));
    if (v.empty()) return v;
    if (v.size() != spatial * per_axis) {
      return n.Invalid(absl::StrCat(name, " must have ", spatial * per_axis, " entries"));
    }
    if (one_d) {
      v.insert(v.begin(), h);
      if (per_axis == 2) v.insert(v.begin() + 2, h);
    }
    return v;
  };
  auto pair = [&ints](const char* name, std::array<int64_t, 2>& out, int64_t h) -> absl::Status {
    RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> v, ints(name, 1, h));
    if (!v.empty()) out = {v[0], v[1]};
    return absl::OkStatus();
  };
  RECQ_RETURN_IF_ERROR(pair("strides", a.strides, 1));
  RECQ_RETURN_IF_ERROR(pair("dilations", a.dilations, 1));
  RECQ_RETURN_IF_ERROR(pair("output_padding", a.output_padding, 0));
  RECQ_ASSIGN_OR_RETURN(a.groups, n.Int("group", 1));
  RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, ints("kernel_shape", 1, 1));
  if (!kernel.empty() && (kernel.size() != 2 || kernel[0] != ws[2] || kernel[1] != ws[3])) {
    return n.Invalid(absl::StrCat("kernel_shape does not match the weights ", S(ws)));
  }
  RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ints("pads", 2, 0));
  if (!pads.empty()) {
    // [begin..., end...]: a 1-D [b, e] became [0, b, 0, e].
    a.pads = {pads[0], pads[1], pads[2], pads[3]};
  }
  RECQ_ASSIGN_OR_RETURN(std::string auto_pad, n.String("auto_pad", "NOTSET"));
  RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> output_shape, n.Ints("output_shape"));
  if (output_shape.size() > spatial) {
    // [N, C, spatial...] given.
    output_shape.erase(output_shape.begin(), output_shape.end() - spatial);
  }
  if (one_d && output_shape.size() == 1) output_shape.insert(output_shape.begin(), 1);
  if (!output_shape.empty() && output_shape.size() != 2) {
    return n.Invalid(absl::StrCat("output_shape must have ", spatial, " entries"));
  }
  if (auto_pad == "VALID") {
    a.pads = {0, 0, 0, 0};
  } else if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") {
    return n.Invalid(absl::StrCat("auto_pad '", auto_pad, "' is not supported"));
  }
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (same && output_shape.empty()) output_shape = {xs[2] * a.strides[0], xs[3] * a.strides[1]};
  if (!output_shape.empty()) {
    for (int i = 0; i < 2; ++i) {
      const int64_t total = a.strides[i] * (xs[2 + i] - 1) + a.output_padding[i] +
                            (ws[2 + i] - 1) * a.dilations[i] + 1 - output_shape[i];
      // The odd element is cut at the end, except for SAME_LOWER (as
      // onnxruntime does; NOTSET with output_shape behaves as SAME_UPPER).
      if (auto_pad == "SAME_LOWER") {
        a.pads[i] = total - total / 2;
        a.pads[2 + i] = total / 2;
      } else {
        a.pads[i] = total / 2;
        a.pads[2 + i] = total - total / 2;
      }
    }
  }
  std::vector<ValueId> inputs = {x, w};
  if (b != kNoValue) inputs.push_back(b);
  if (one_d) return EmitFrom2D(n, kConvTranspose, std::move(inputs), a);
  return n.Emit(kConvTranspose, std::move(inputs), a);
}

}  // namespace

RECQ_REGISTER_OPS(ConvTranspose) {
  OpDef def;
  def.type = kConvTranspose;
  def.onnx = {{"", "ConvTranspose", 1, kOnnxOpsetMax, Import}};
  def.infer = Infer;
  def.variants = {{"gather", nullptr, Lower}};
  def.absorbs_activation = true;
  return table.Add(std::move(def));
}

}  // namespace recq::internal
