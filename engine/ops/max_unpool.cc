// MaxUnpool (ONNX opsets 9 on): scatters x into zeros at the flat indices
// MaxPool reported (max_unpool.h), for inputs of any spatial rank up to 6,
// float16 or float32 data (copied bit for bit) and int64 or int32 indices.
// output_shape must be a constant no smaller than the inferred shape.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/max_unpool.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/ops/typed.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

absl::StatusOr<TensorDesc> Infer(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kMaxUnpool, in, 2, 2));
  RECQ_ASSIGN_OR_RETURN(const MaxUnpoolAttrs* a, AttrsOf<MaxUnpoolAttrs>(kMaxUnpool, attrs));
  const TensorDesc& x = *in[0];
  const TensorDesc& idx = *in[1];
  if (x.dtype != DataType::kFloat32 && x.dtype != DataType::kFloat16) {
    return Bad(kMaxUnpool, absl::StrCat("x is ", x.ToString(), "; expected float32 or float16"));
  }
  if ((idx.dtype != DataType::kInt64 && idx.dtype != DataType::kInt32) || idx.shape != x.shape) {
    return Bad(kMaxUnpool, absl::StrCat("indices are ", idx.ToString(),
                                        "; expected int64 or int32 ", S(x.shape)));
  }
  const size_t rank = x.shape.size();
  if (rank < 3 || rank > 8 || a->inferred_shape.size() != rank || a->out_shape.size() != rank) {
    return Bad(kMaxUnpool,
               absl::StrCat("x ", S(x.shape), ", inferred shape ", S(a->inferred_shape),
                            " and output shape ", S(a->out_shape), " need one rank from 3 to 8"));
  }
  for (size_t i = 0; i < rank; ++i) {
    if (a->inferred_shape[i] < 1 || a->out_shape[i] < a->inferred_shape[i] ||
        (i < 2 && (a->inferred_shape[i] != x.shape[i] || a->out_shape[i] != x.shape[i]))) {
      return Bad(kMaxUnpool,
                 absl::StrCat("output shape ", S(a->out_shape), " must keep N and C of x ",
                              S(x.shape), " and cover the inferred shape ", S(a->inferred_shape)));
    }
  }
  return TensorDesc{a->out_shape, x.dtype};
}

absl::Status Lower(LoweringContext& ctx, const Node& node) {
  const MaxUnpoolAttrs& a = AttrsOr<MaxUnpoolAttrs>(node);
  const TensorDesc& y = ctx.graph().value(node.outputs[0]).desc;
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const DataType idx_type = ctx.graph().value(node.inputs[1]).desc.dtype;
  if (y.NumElements() >= (int64_t{1} << 31)) return Unsupported(node, "2^31 output elements");
  const std::vector<std::string> options = {absl::StrCat("-DVAL_T=", TypedBits(y.dtype)),
                                            absl::StrCat("-DIDX_T=", TypedStorage(idx_type))};
  Dispatch& zero = ctx.Emit(MakeDispatch(ctx, "max_unpool.cl", "max_unpool_zero",
                                         {static_cast<size_t>(y.NumElements())}, options));
  zero.args = {ctx.Arg(node.outputs[0])};
  const int64_t rank = static_cast<int64_t>(y.shape.size());
  cl_int8 strides{};
  int64_t stride = 1;
  for (int64_t i = 7; i >= 0; --i) {
    const int64_t d = i - (8 - rank);
    strides.s[i] = d >= 0 ? static_cast<cl_int>(stride) : 0;
    if (d >= 0) stride *= y.shape[d];
  }
  Dispatch& scatter =
      ctx.Emit(MakeDispatch(ctx, "max_unpool.cl", "max_unpool_scatter",
                            {static_cast<size_t>(Product(x, 0, x.size()))}, options));
  scatter.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]), ctx.Arg(node.outputs[0])};
  scatter.args.push_back(DispatchArg::Scalar(Pad8(a.inferred_shape, 1)));
  scatter.args.push_back(DispatchArg::Scalar(strides));
  scatter.args.push_back(DispatchArg::Scalar(
      static_cast<cl_long>(Product(a.inferred_shape, 0, a.inferred_shape.size()))));
  return absl::OkStatus();
}

absl::Status Import(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"kernel_shape", "pads", "strides"}));
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  RECQ_ASSIGN_OR_RETURN(ValueId indices, n.Input(1));
  const Shape& xs = n.desc(x).shape;
  const int64_t spatial = static_cast<int64_t>(xs.size()) - 2;
  RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, n.Ints("kernel_shape"));
  RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> strides, n.Ints("strides"));
  RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> pads, n.Ints("pads"));
  if (strides.empty()) strides.assign(spatial, 1);
  if (pads.empty()) pads.assign(2 * spatial, 0);
  if (spatial < 1 || static_cast<int64_t>(kernel.size()) != spatial ||
      static_cast<int64_t>(strides.size()) != spatial ||
      static_cast<int64_t>(pads.size()) != 2 * spatial) {
    return n.Invalid(absl::StrCat("x is ", n.desc(x).ToString(), "; kernel_shape and strides need ",
                                  spatial, " values and pads ", 2 * spatial));
  }
  MaxUnpoolAttrs a;
  a.inferred_shape = {xs[0], xs[1]};
  for (int64_t i = 0; i < spatial; ++i) {
    a.inferred_shape.push_back((xs[2 + i] - 1) * strides[i] - (pads[i] + pads[spatial + i]) +
                               kernel[i]);
  }
  a.out_shape = a.inferred_shape;
  if (n.num_inputs() > 2) {
    RECQ_ASSIGN_OR_RETURN(const OnnxConstant* shape, n.ConstantInput(2));
    if (shape != nullptr) {
      if (shape->is_float || shape->size() != static_cast<int64_t>(xs.size())) {
        return n.Invalid(absl::StrCat("output_shape must be ", xs.size(), " integers"));
      }
      a.out_shape = shape->ints;
    }
  }
  return n.Emit(kMaxUnpool, {x, indices}, a);
}

}  // namespace

RECQ_REGISTER_OPS(MaxUnpool) {
  OpDef def;
  def.type = kMaxUnpool;
  def.typed = true;
  def.onnx = {{"", "MaxUnpool", 9, kOnnxOpsetMax, Import}};
  def.infer = Infer;
  def.variants = {{"max_unpool", nullptr, Lower}};
  return table.Add(std::move(def));
}

}  // namespace recq::internal
