// GatherElements (ONNX opset 11 on): y has the shape of indices and
// y[i_0, ..., i_r] = data[i_0, ..., indices[i_0, ..., i_r], ..., i_r] (the
// index replaces the coordinate on `axis`), for data of every element type
// and int64 or int32 indices, constant or computed, rank <= 8. Negative
// indices wrap once; indices still out of range are clamped on the device
// (a recorded run cannot report an error; onnxruntime returns one).
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/ops/typed.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

absl::Status Import(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"axis"}));
  RECQ_ASSIGN_OR_RETURN(int64_t axis, n.Int("axis", 0));
  RECQ_ASSIGN_OR_RETURN(ValueId data, n.Input(0));
  RECQ_ASSIGN_OR_RETURN(ValueId indices, n.Input(1));
  return n.Emit(kGatherElements, {data, indices}, GatherElementsAttrs{axis});
}

absl::StatusOr<TensorDesc> Infer(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kGatherElements, in, 2, 2));
  RECQ_ASSIGN_OR_RETURN(const GatherElementsAttrs* a,
                        AttrsOf<GatherElementsAttrs>(kGatherElements, attrs));
  const Shape& x = in[0]->shape;
  const Shape& idx = in[1]->shape;
  if (in[1]->dtype != DataType::kInt64 && in[1]->dtype != DataType::kInt32) {
    return Bad(kGatherElements,
               absl::StrCat("indices are ", in[1]->ToString(), "; expected int64 or int32"));
  }
  if (x.empty() || x.size() > 8 || idx.size() != x.size()) {
    return Bad(kGatherElements,
               absl::StrCat("data ", S(x), " and indices ", S(idx), " need one rank from 1 to 8"));
  }
  RECQ_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(kGatherElements, a->axis, x.size(), false));
  for (size_t i = 0; i < x.size(); ++i) {
    if (static_cast<int64_t>(i) != axis && idx[i] > x[i]) {
      return Bad(kGatherElements,
                 absl::StrCat("indices ", S(idx), " exceed data ", S(x), " outside axis ", axis));
    }
  }
  return TensorDesc{idx, in[0]->dtype};
}

absl::Status Lower(LoweringContext& ctx, const Node& node) {
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const TensorDesc& y = ctx.graph().value(node.outputs[0]).desc;
  const DataType idx_type = ctx.graph().value(node.inputs[1]).desc.dtype;
  const int64_t rank = static_cast<int64_t>(x.size());
  const int64_t a = AttrsOr<GatherElementsAttrs>(node).axis;
  const int64_t axis = a < 0 ? a + rank : a;
  if (Product(x, 0, x.size()) >= (int64_t{1} << 31)) return Unsupported(node, "2^31 elements");
  // Data's element strides, padded in front to rank 8 like the output dims.
  cl_int8 strides{};
  int64_t stride = 1;
  for (int64_t i = 7; i >= 0; --i) {
    const int64_t d = i - (8 - rank);
    strides.s[i] = d >= 0 ? static_cast<cl_int>(stride) : 0;
    if (d >= 0) stride *= x[d];
  }
  Dispatch& d =
      ctx.Emit(MakeDispatch(ctx, "gather_elements.cl", "gather_elements", {size_t(y.NumElements())},
                            {absl::StrCat("-DVAL_T=", TypedBits(y.dtype)),
                             absl::StrCat("-DIDX_T=", TypedStorage(idx_type))}));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]), ctx.Arg(node.outputs[0])};
  d.args.push_back(DispatchArg::Scalar(Pad8(y.shape, 1)));
  d.args.push_back(DispatchArg::Scalar(strides));
  AddInts(d, {8 - rank + axis, x[axis]});
  return absl::OkStatus();
}

}  // namespace

RECQ_REGISTER_OPS(GatherElements) {
  OpDef def;
  def.type = kGatherElements;
  def.typed = true;
  def.onnx = {{"", "GatherElements", 11, kOnnxOpsetMax, Import}};
  def.infer = Infer;
  def.variants = {{"gather_elements", nullptr, Lower}};
  return table.Add(std::move(def));
}

}  // namespace recq::internal
