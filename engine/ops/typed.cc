// Ops of any element type that the rest of recq's kernels (float32) meet at
// the edges of a model: Cast (ONNX Cast of computed data; Cast of constants
// folds at import, engine/ops/shape_folding.cc) and Where (a bool mask
// selecting between two tensors, with broadcasting).
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/ops/typed.h"
#include "recq/status_macros.h"

namespace recq::internal {

int TypedKind(DataType t) {
  switch (t) {
    case DataType::kFloat32:
      return 0;
    case DataType::kFloat16:
      return 1;
    case DataType::kInt64:
      return 2;
    case DataType::kInt32:
      return 3;
    case DataType::kInt8:
      return 4;
    case DataType::kUInt8:
      return 5;
    case DataType::kBool:
      return 6;
    case DataType::kFloat64:
      return 7;
    case DataType::kUInt16:
      return 8;
    case DataType::kInt16:
      return 9;
    case DataType::kUInt32:
      return 10;
    case DataType::kUInt64:
      return 11;
  }
  return 0;
}

const char* TypedStorage(DataType t) {
  static constexpr const char* kStorage[] = {"float", "ushort", "long",   "int",   "char", "uchar",
                                             "uchar", "double", "ushort", "short", "uint", "ulong"};
  return kStorage[TypedKind(t)];
}

const char* TypedBits(DataType t) {
  switch (DataTypeSize(t)) {
    case 1:
      return "uchar";
    case 2:
      return "ushort";
    case 4:
      return "uint";
    default:
      return "ulong";
  }
}

namespace {

absl::StatusOr<TensorDesc> InferCast(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kCast, in, 1, 1));
  RECQ_ASSIGN_OR_RETURN(const CastAttrs* a, AttrsOf<CastAttrs>(kCast, attrs));
  return TensorDesc{in[0]->shape, a->to};
}

absl::Status LowerCast(LoweringContext& ctx, const Node& node) {
  const TensorDesc& x = ctx.graph().value(node.inputs[0]).desc;
  const TensorDesc& y = ctx.graph().value(node.outputs[0]).desc;
  if (x.dtype == y.dtype) {
    EmitCopyOf(ctx, ctx.Arg(node.inputs[0]), ctx.Arg(node.outputs[0]), y);
    return absl::OkStatus();
  }
  Dispatch& d = ctx.Emit(MakeDispatch(ctx, "typed.cl", "cast", {size_t(y.NumElements())},
                                      {"-DCAST", absl::StrCat("-DSRC_KIND=", TypedKind(x.dtype)),
                                       absl::StrCat("-DDST_KIND=", TypedKind(y.dtype)),
                                       absl::StrCat("-DSRC_T=", TypedStorage(x.dtype)),
                                       absl::StrCat("-DDST_T=", TypedStorage(y.dtype))}));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.outputs[0])};
  return absl::OkStatus();
}

absl::StatusOr<TensorDesc> InferWhere(const OpAttrs&, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kWhere, in, 3, 3));
  if (in[0]->dtype != DataType::kBool) {
    return absl::InvalidArgumentError(
        absl::StrCat("Where: the condition is ", in[0]->ToString(), "; expected bool"));
  }
  if (in[1]->dtype != in[2]->dtype) {
    return absl::InvalidArgumentError(absl::StrCat("Where: the values are ", in[1]->ToString(),
                                                   " and ", in[2]->ToString(),
                                                   "; expected one element type"));
  }
  RECQ_ASSIGN_OR_RETURN(Shape ab, Broadcast(kWhere, in[1]->shape, in[2]->shape));
  RECQ_ASSIGN_OR_RETURN(Shape out, Broadcast(kWhere, in[0]->shape, ab));
  return TensorDesc{out, in[1]->dtype};
}

absl::Status LowerWhere(LoweringContext& ctx, const Node& node) {
  const TensorDesc& y = ctx.graph().value(node.outputs[0]).desc;
  if (y.shape.size() > 8) return Unsupported(node, "Where beyond rank 8");
  Dispatch& d = ctx.Emit(MakeDispatch(ctx, "typed.cl", "where", {size_t(y.NumElements())},
                                      {"-DWHERE", absl::StrCat("-DVAL_T=", TypedBits(y.dtype))}));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]), ctx.Arg(node.inputs[2]),
            ctx.Arg(node.outputs[0])};
  d.args.push_back(DispatchArg::Scalar(Pad8(y.shape, 1)));
  for (int i = 0; i < 3; ++i) {
    d.args.push_back(DispatchArg::Scalar(BroadcastStrides(ShapeOf(ctx, node.inputs[i]), y.shape)));
  }
  return absl::OkStatus();
}

}  // namespace

RECQ_REGISTER_OPS(Typed) {
  OpDef cast;
  cast.type = kCast;
  cast.typed = true;
  cast.infer = InferCast;
  cast.variants = {{"cast", nullptr, LowerCast}};
  RECQ_RETURN_IF_ERROR(table.Add(std::move(cast)));

  OpDef where;
  where.type = kWhere;
  where.typed = true;
  where.infer = InferWhere;
  where.variants = {{"where", nullptr, LowerWhere}};
  return table.Add(std::move(where));
}

}  // namespace recq::internal
