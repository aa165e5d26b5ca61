// Gather (GatherAttrs) along one axis, for data of every element type, with
// indices either known at import (GatherAttrs::indices, checked and made
// non-negative by shape_folding.cc, which also folds Gather on constants)
// or from a second input of int64 or int32 computed at run time (BERT's
// embedding lookup of input_ids). Run-time indices wrap once when negative
// (ONNX) and are then clamped to [0, dim - 1] on the device: an index out
// of range reads the first or last slice instead of failing, since a
// recorded run cannot report an error (onnxruntime returns one).
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/layout_attrs.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/ops/strided_copy.h"
#include "engine/ops/typed.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

const OpType kGather("Gather");

absl::StatusOr<TensorDesc> Infer(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kGather, in, 1, 2));
  RECQ_ASSIGN_OR_RETURN(const GatherAttrs* a, AttrsOf<GatherAttrs>(kGather, attrs));
  const Shape& x = in[0]->shape;
  RECQ_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(kGather, a->axis, x.size(), false));
  Shape indices_shape = a->indices_shape;
  if (in.size() == 2) {
    if (in[1]->dtype != DataType::kInt64 && in[1]->dtype != DataType::kInt32) {
      return Bad(kGather,
                 absl::StrCat("indices are ", in[1]->ToString(), "; expected int64 or int32"));
    }
    if (!a->indices.empty()) return Bad(kGather, "indices both as an input and an attribute");
    indices_shape = in[1]->shape;
  } else {
    if (Product(a->indices_shape, 0, a->indices_shape.size()) !=
        static_cast<int64_t>(a->indices.size())) {
      return Bad(kGather, absl::StrCat(a->indices.size(), " indices do not fill shape ",
                                       S(a->indices_shape)));
    }
    for (int64_t idx : a->indices) {
      if (idx < 0 || idx >= x[axis]) {
        return Bad(kGather,
                   absl::StrCat("index ", idx, " is out of range for dimension ", x[axis]));
      }
    }
  }
  TensorDesc out = *in[0];
  out.shape.assign(x.begin(), x.begin() + axis);
  out.shape.insert(out.shape.end(), indices_shape.begin(), indices_shape.end());
  out.shape.insert(out.shape.end(), x.begin() + axis + 1, x.end());
  return out;
}

// The smallest planes (elements per index) that gather_planes copies.
constexpr int64_t kPlaneElements = 16;

// IsProgression: the indices step by one constant amount (any count of
// one included).
bool IsProgression(const std::vector<int64_t>& indices) {
  if (indices.empty()) return false;
  for (size_t k = 2; k < indices.size(); ++k) {
    if (indices[k] - indices[k - 1] != indices[1] - indices[0]) return false;
  }
  return true;
}

absl::Status Lower(LoweringContext& ctx, const Node& node) {
  const GatherAttrs& a = AttrsOr<GatherAttrs>(node);
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const TensorDesc& y = ctx.graph().value(node.outputs[0]).desc;
  const bool runtime = node.inputs.size() == 2;
  const int64_t axis = a.axis < 0 ? a.axis + static_cast<int64_t>(x.size()) : a.axis;
  const int64_t dim = x[axis];
  const int64_t inner = Product(x, axis + 1, x.size());
  const int64_t count = runtime ? ctx.graph().value(node.inputs[1]).desc.NumElements()
                                : static_cast<int64_t>(a.indices.size());
  const int64_t total = Product(x, 0, axis) * count * inner;
  if (dim >= (int64_t{1} << 31) || total >= (int64_t{1} << 31)) {
    return Unsupported(node, "a dimension of 2^31 or more, or 2^31 output elements or more,");
  }
  if (!runtime && y.dtype == DataType::kFloat32 && IsProgression(a.indices)) {
    // Indices i0, i0 + step, ...: a strided view (attention's Gather of q, k
    // or v from the stacked projections), copied by rows on CPUs.
    const int64_t step = count > 1 ? a.indices[1] - a.indices[0] : 1;
    return EmitStridedCopy(ctx, node, a.indices[0] * inner, {Product(x, 0, axis), count, inner},
                           {dim * inner, step * inner, 1}, {Product(x, 0, axis), count, inner});
  }
  if (!runtime && inner >= kPlaneElements) {
    // Whole planes per index (a channel gather), with no division per
    // element. GPUs: an item per element, over (inner, count, outer), in
    // groups along the plane (the kernel checks dimension 0 alone). CPUs:
    // an item per plane, over (count, outer).
    const bool rows = ctx.device().CpuKernels();
    Dispatch d;
    d.label = rows ? "gather_planes_rows" : "gather_planes";
    d.kernel = ctx.Kernel("gather.cl", rows ? "gather_planes_rows" : "gather_planes",
                          {absl::StrCat("-DVAL_T=", TypedBits(y.dtype)),
                           absl::StrCat("-DIDX_T=", TypedStorage(DataType::kInt32))});
    const size_t outer = size_t(Product(x, 0, axis));
    if (rows) {
      SetRange(d, {size_t(count), outer, 1}, {WorkGroupFor({size_t(count), 1, 1}, 16)[0], 1, 1});
    } else {
      SetRange(d, {size_t(inner), size_t(count), outer},
               {WorkGroupFor({size_t(inner), 1, 1}, 64)[0], 1, 1});
    }
    d.args = {ctx.Arg(node.inputs[0]),
              ctx.AddConstant(std::make_shared<const HostData>(
                  std::vector<int32_t>(a.indices.begin(), a.indices.end()))),
              ctx.Arg(node.outputs[0])};
    AddInts(d, {dim, count, inner});
    ctx.Emit(std::move(d));
    return absl::OkStatus();
  }
  DispatchArg idx;
  DataType idx_type = DataType::kInt32;
  if (runtime) {
    idx = ctx.Arg(node.inputs[1]);
    idx_type = ctx.graph().value(node.inputs[1]).desc.dtype;
  } else {
    idx = ctx.AddConstant(
        std::make_shared<const HostData>(std::vector<int32_t>(a.indices.begin(), a.indices.end())));
  }
  Dispatch& d = ctx.Emit(MakeDispatch(ctx, "gather.cl", "gather_axis", {size_t(total)},
                                      {absl::StrCat("-DVAL_T=", TypedBits(y.dtype)),
                                       absl::StrCat("-DIDX_T=", TypedStorage(idx_type))}));
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
  def.typed = true;
  def.infer = Infer;
  def.variants = {{"gather_axis", nullptr, Lower}};
  return table.Add(std::move(def));
}

}  // namespace recq::internal
