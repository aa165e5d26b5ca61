// Gather (GatherAttrs) of computed float data along one axis with indices
// known at import (ONNX Gather is imported by shape_folding.cc, which folds
// it on constants and checks the indices). The indices are uploaded as a
// constant next to the kernel.
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/layout_attrs.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/status_macros.h"

namespace recq::internal {
namespace {

const OpType kGather("Gather");

absl::StatusOr<TensorDesc> Infer(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kGather, in, 1, 1));
  RECQ_ASSIGN_OR_RETURN(const GatherAttrs* a, AttrsOf<GatherAttrs>(kGather, attrs));
  const Shape& x = in[0]->shape;
  RECQ_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(kGather, a->axis, x.size(), false));
  if (Product(a->indices_shape, 0, a->indices_shape.size()) !=
      static_cast<int64_t>(a->indices.size())) {
    return Bad(kGather,
               absl::StrCat(a->indices.size(), " indices do not fill shape ", S(a->indices_shape)));
  }
  for (int64_t idx : a->indices) {
    if (idx < 0 || idx >= x[axis]) {
      return Bad(kGather, absl::StrCat("index ", idx, " is out of range for dimension ", x[axis]));
    }
  }
  TensorDesc out = *in[0];
  out.shape.assign(x.begin(), x.begin() + axis);
  out.shape.insert(out.shape.end(), a->indices_shape.begin(), a->indices_shape.end());
  out.shape.insert(out.shape.end(), x.begin() + axis + 1, x.end());
  return out;
}

absl::Status Lower(LoweringContext& ctx, const Node& node) {
  const GatherAttrs& a = AttrsOr<GatherAttrs>(node);
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const int64_t axis = a.axis < 0 ? a.axis + static_cast<int64_t>(x.size()) : a.axis;
  const int64_t dim = x[axis];
  const int64_t inner = Product(x, axis + 1, x.size());
  const int64_t count = static_cast<int64_t>(a.indices.size());
  const int64_t total = Product(x, 0, axis) * count * inner;
  if (dim >= (int64_t{1} << 24) || total >= (int64_t{1} << 31)) {
    return Unsupported(node, "a dimension of 2^24 or more, or 2^31 output elements or more,");
  }
  // Indices are stored as floats (exact below 2^24): constants are float data.
  auto indices = std::make_shared<std::vector<float>>(a.indices.begin(), a.indices.end());
  DispatchArg idx = ctx.AddConstant(std::move(indices));
  Dispatch& d = ctx.Emit(MakeDispatch(ctx, "gather.cl", "gather_axis", {size_t(total)}));
  d.args = {ctx.Arg(node.inputs[0]), std::move(idx), ctx.Arg(node.outputs[0])};
  d.args.push_back(DispatchArg::Scalar(static_cast<cl_int>(dim)));
  d.args.push_back(DispatchArg::Scalar(static_cast<cl_int>(count)));
  d.args.push_back(DispatchArg::Scalar(static_cast<cl_int>(inner)));
  return absl::OkStatus();
}

}  // namespace

RECQ_REGISTER_OPS(Gather) {
  OpDef def;
  def.type = kGather;
  def.infer = Infer;
  def.variants = {{"gather_axis", nullptr, Lower}};
  return table.Add(std::move(def));
}

}  // namespace recq::internal
