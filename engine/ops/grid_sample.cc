// GridSample (ONNX opset 16 on): x [N, C, H, W] sampled at grid
// [N, Ho, Wo, 2] gives [N, C, Ho, Wo]; modes nearest, bilinear and bicubic
// (opset 20's linear and cubic), padding zeros, border and reflection,
// align_corners, as ONNX's reference computes them (grid_sample.cl).
// Inputs of other ranks (opset 20's volumetric sampling) are Unimplemented.
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/ops/grid_sample.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

absl::StatusOr<TensorDesc> Infer(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kGridSample, in, 2, 2));
  RECQ_ASSIGN_OR_RETURN(const GridSampleAttrs* a, AttrsOf<GridSampleAttrs>(kGridSample, attrs));
  (void)a;
  const Shape& x = in[0]->shape;
  const Shape& g = in[1]->shape;
  if (x.size() != 4 || g.size() != 4 || g[0] != x[0] || g[3] != 2) {
    return Bad(kGridSample, absl::StrCat("x ", S(x), " and grid ", S(g),
                                         "; expected [N, C, H, W] and [N, Ho, Wo, 2]"));
  }
  TensorDesc out = *in[0];
  out.shape = {x[0], x[1], g[1], g[2]};
  return out;
}

absl::Status Lower(LoweringContext& ctx, const Node& node) {
  const GridSampleAttrs& a = AttrsOr<GridSampleAttrs>(node);
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const Shape& y = ShapeOf(ctx, node.outputs[0]);
  if (Product(x, 0, 4) >= (int64_t{1} << 31) || Product(y, 0, 4) >= (int64_t{1} << 31)) {
    return Unsupported(node, "tensors of 2^31 elements or more");
  }
  Dispatch& d = ctx.Emit(MakeDispatch(
      ctx, "grid_sample.cl", "grid_sample",
      {static_cast<size_t>(y[3]), static_cast<size_t>(y[2]), static_cast<size_t>(y[0])},
      {absl::StrCat("-DMODE=", static_cast<int>(a.mode)),
       absl::StrCat("-DPAD=", static_cast<int>(a.padding)),
       absl::StrCat("-DALIGN=", a.align_corners ? 1 : 0)}));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]), ctx.Arg(node.outputs[0])};
  const cl_int4 dims = {
      {static_cast<cl_int>(x[1]), static_cast<cl_int>(x[2]), static_cast<cl_int>(x[3]), 0}};
  const cl_int4 out = {
      {static_cast<cl_int>(y[2]), static_cast<cl_int>(y[3]), static_cast<cl_int>(y[0]), 0}};
  d.args.push_back(DispatchArg::Scalar(dims));
  d.args.push_back(DispatchArg::Scalar(out));
  return absl::OkStatus();
}

absl::Status Import(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"align_corners", "mode", "padding_mode"}));
  GridSampleAttrs a;
  RECQ_ASSIGN_OR_RETURN(std::string mode,
                        n.String("mode", n.opset() >= 20 ? "linear" : "bilinear"));
  if (mode == "bilinear" || mode == "linear") {
    a.mode = GridSampleMode::kLinear;
  } else if (mode == "nearest") {
    a.mode = GridSampleMode::kNearest;
  } else if (mode == "bicubic" || mode == "cubic") {
    a.mode = GridSampleMode::kCubic;
  } else {
    return n.Invalid(absl::StrCat("mode '", mode, "'; expected linear, nearest or cubic"));
  }
  RECQ_ASSIGN_OR_RETURN(std::string padding, n.String("padding_mode", "zeros"));
  if (padding == "zeros") {
    a.padding = GridSamplePadding::kZeros;
  } else if (padding == "border") {
    a.padding = GridSamplePadding::kBorder;
  } else if (padding == "reflection") {
    a.padding = GridSamplePadding::kReflection;
  } else {
    return n.Invalid(
        absl::StrCat("padding_mode '", padding, "'; expected zeros, border or reflection"));
  }
  RECQ_ASSIGN_OR_RETURN(int64_t align, n.Int("align_corners", 0));
  a.align_corners = align != 0;
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  RECQ_ASSIGN_OR_RETURN(ValueId grid, n.Input(1));
  if (n.desc(x).shape.size() != 4) {
    return n.Unsupported(absl::StrCat("input ", n.desc(x).ToString(),
                                      " (only 4-D [N, C, H, W] inputs are supported)"));
  }
  return n.Emit(kGridSample, {x, grid}, a);
}

}  // namespace

RECQ_REGISTER_OPS(GridSample) {
  OpDef def;
  def.type = kGridSample;
  def.onnx = {{"", "GridSample", 16, kOnnxOpsetMax, Import}};
  def.infer = Infer;
  def.variants = {{"grid_sample", nullptr, Lower}};
  return table.Add(std::move(def));
}

}  // namespace recq::internal
