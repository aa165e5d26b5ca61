// GatherND (ONNX opset 11 on; batch_dims from 12) for data of every element
// type and int64 indices, constant or computed: with b = batch_dims and
// indices [B..., R..., k], y[B..., R..., S...] = data[B..., indices[B...,
// R...], S...] where S are data's dims after b + k. Negative indices wrap
// once; indices still out of range are clamped on the device.
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/ops/typed.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

absl::Status Import(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"batch_dims"}));
  RECQ_ASSIGN_OR_RETURN(int64_t batch_dims, n.Int("batch_dims", 0));
  RECQ_ASSIGN_OR_RETURN(ValueId data, n.Input(0));
  RECQ_ASSIGN_OR_RETURN(ValueId indices, n.Input(1));
  return n.Emit(kGatherND, {data, indices}, GatherNDAttrs{batch_dims});
}

absl::StatusOr<TensorDesc> Infer(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kGatherND, in, 2, 2));
  RECQ_ASSIGN_OR_RETURN(const GatherNDAttrs* a, AttrsOf<GatherNDAttrs>(kGatherND, attrs));
  const Shape& x = in[0]->shape;
  const Shape& idx = in[1]->shape;
  if (in[1]->dtype != DataType::kInt64) {
    return Bad(kGatherND, absl::StrCat("indices are ", in[1]->ToString(), "; expected int64"));
  }
  const int64_t b = a->batch_dims;
  if (idx.empty() || b < 0 || b >= static_cast<int64_t>(std::min(x.size(), idx.size()))) {
    return Bad(kGatherND, absl::StrCat("batch_dims ", b, " does not fit data ", S(x),
                                       " and indices ", S(idx)));
  }
  const int64_t k = idx.back();
  if (k < 1 || k > 8 || b + k > static_cast<int64_t>(x.size())) {
    return Bad(kGatherND, absl::StrCat("index rows of length ", k, " do not fit data ", S(x),
                                       " after ", b, " batch dims (1 to 8 expected)"));
  }
  for (int64_t i = 0; i < b; ++i) {
    if (x[i] != idx[i]) {
      return Bad(kGatherND,
                 absl::StrCat("batch dims of data ", S(x), " and indices ", S(idx), " differ"));
    }
  }
  Shape out(idx.begin(), idx.end() - 1);
  out.insert(out.end(), x.begin() + b + k, x.end());
  return TensorDesc{out, in[0]->dtype};
}

absl::Status Lower(LoweringContext& ctx, const Node& node) {
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const Shape& idx = ShapeOf(ctx, node.inputs[1]);
  const TensorDesc& y = ctx.graph().value(node.outputs[0]).desc;
  const int64_t b = AttrsOr<GatherNDAttrs>(node).batch_dims;
  const int64_t k = idx.back();
  const int64_t rows = Product(idx, b, idx.size() - 1);  // per batch
  const int64_t slice = Product(x, b + k, x.size());
  const int64_t batch_stride = Product(x, b, x.size());
  if (Product(x, 0, x.size()) >= (int64_t{1} << 31) || y.NumElements() >= (int64_t{1} << 31)) {
    return Unsupported(node, "2^31 elements or more");
  }
  cl_int8 dims{};
  for (int j = 0; j < 8; ++j) dims.s[j] = j < k ? static_cast<cl_int>(x[b + j]) : 1;
  Dispatch& d = ctx.Emit(MakeDispatch(ctx, "gather_nd.cl", "gather_nd", {size_t(y.NumElements())},
                                      {absl::StrCat("-DVAL_T=", TypedBits(y.dtype))}));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]), ctx.Arg(node.outputs[0])};
  d.args.push_back(DispatchArg::Scalar(dims));
  AddInts(d, {k, rows, slice, batch_stride});
  return absl::OkStatus();
}

}  // namespace

RECQ_REGISTER_OPS(GatherND) {
  OpDef def;
  def.type = kGatherND;
  def.typed = true;
  def.onnx = {{"", "GatherND", 11, kOnnxOpsetMax, Import}};
  def.infer = Infer;
  def.variants = {{"gather_nd", nullptr, Lower}};
  return table.Add(std::move(def));
}

}  // namespace recq::internal
