// ScatterElements (ONNX 11 on; Scatter, opsets 9-10, is the same without
// reduction), for data of every element type and int64 or int32 indices,
// rank <= 8. One work-item per output element scans the indices that can
// reach it (those at its coordinates off the axis), so duplicates combine
// in order without atomics. Negative indices wrap once; indices still out
// of range are clamped on the device (a recorded run cannot report an
// error). With reduction none, duplicate indices are undefined in ONNX;
// here the last one along the axis wins.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/ops/scatter_elements.h"
#include "engine/ops/typed.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

absl::Status Import(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"axis", "reduction"}));
  RECQ_ASSIGN_OR_RETURN(int64_t axis, n.Int("axis", 0));
  RECQ_ASSIGN_OR_RETURN(std::string reduction, n.String("reduction", "none"));
  const char* kNames[] = {"none", "add", "mul", "max", "min"};
  int code = -1;
  for (int i = 0; i < 5; ++i) {
    if (reduction == kNames[i]) code = i;
  }
  if (code < 0) return n.Invalid(absl::StrCat("reduction '", reduction, "' is not known"));
  RECQ_ASSIGN_OR_RETURN(ValueId data, n.Input(0));
  RECQ_ASSIGN_OR_RETURN(ValueId indices, n.Input(1));
  RECQ_ASSIGN_OR_RETURN(ValueId updates, n.Input(2));
  return n.Emit(kScatterElements, {data, indices, updates}, ScatterElementsAttrs{axis, code});
}

absl::StatusOr<TensorDesc> Infer(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kScatterElements, in, 3, 3));
  RECQ_ASSIGN_OR_RETURN(const ScatterElementsAttrs* a,
                        AttrsOf<ScatterElementsAttrs>(kScatterElements, attrs));
  const Shape& x = in[0]->shape;
  const Shape& idx = in[1]->shape;
  if (in[1]->dtype != DataType::kInt64 && in[1]->dtype != DataType::kInt32) {
    return Bad(kScatterElements,
               absl::StrCat("indices are ", in[1]->ToString(), "; expected int64 or int32"));
  }
  if (in[2]->shape != idx || in[2]->dtype != in[0]->dtype) {
    return Bad(kScatterElements, absl::StrCat("updates are ", in[2]->ToString(), "; expected ",
                                              S(idx), " of the data's element type"));
  }
  if (x.empty() || x.size() > 8 || idx.size() != x.size()) {
    return Bad(kScatterElements,
               absl::StrCat("data ", S(x), " and indices ", S(idx), " need one rank from 1 to 8"));
  }
  if (a->reduction < 0 || a->reduction > 4) return Bad(kScatterElements, "unknown reduction");
  if (a->reduction != 0 && in[0]->dtype == DataType::kBool) {
    return Bad(kScatterElements, "a reduction needs numeric data");
  }
  RECQ_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(kScatterElements, a->axis, x.size(), false));
  for (size_t i = 0; i < x.size(); ++i) {
    if (static_cast<int64_t>(i) != axis && idx[i] > x[i]) {
      return Bad(kScatterElements,
                 absl::StrCat("indices ", S(idx), " exceed data ", S(x), " outside axis ", axis));
    }
  }
  return *in[0];
}

absl::Status Lower(LoweringContext& ctx, const Node& node) {
  const TensorDesc& x = ctx.graph().value(node.inputs[0]).desc;
  const Shape& idx = ShapeOf(ctx, node.inputs[1]);
  const DataType idx_type = ctx.graph().value(node.inputs[1]).desc.dtype;
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  const ScatterElementsAttrs& a = AttrsOr<ScatterElementsAttrs>(node);
  const int64_t axis = a.axis < 0 ? a.axis + rank : a.axis;
  if (x.NumElements() >= (int64_t{1} << 31) || Product(idx, 0, idx.size()) >= (int64_t{1} << 31)) {
    return Unsupported(node, "2^31 or more elements");
  }
  Dispatch& d = ctx.Emit(MakeDispatch(
      ctx, "scatter_elements.cl", "scatter_elements", {size_t(x.NumElements())},
      {absl::StrCat("-DKIND=", TypedKind(x.dtype)), absl::StrCat("-DT=", TypedStorage(x.dtype)),
       absl::StrCat("-DIDX_T=", idx_type == DataType::kInt64 ? "long" : "int"),
       absl::StrCat("-DREDUCTION=", a.reduction)}));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]), ctx.Arg(node.inputs[2]),
            ctx.Arg(node.outputs[0])};
  d.args.push_back(DispatchArg::Scalar(Pad8(x.shape, 1)));
  d.args.push_back(DispatchArg::Scalar(Pad8(idx, 1)));
  AddInts(d, {axis + (8 - rank), x.shape[axis]});
  return absl::OkStatus();
}

}  // namespace

RECQ_REGISTER_OPS(ScatterElements) {
  OpDef def;
  def.type = kScatterElements;
  def.typed = true;
  def.onnx = {{"", "Scatter", 9, 10, Import}, {"", "ScatterElements", 11, kOnnxOpsetMax, Import}};
  def.infer = Infer;
  def.variants = {{"scatter_elements", nullptr, Lower}};
  return table.Add(std::move(def));
}

}  // namespace recq::internal
