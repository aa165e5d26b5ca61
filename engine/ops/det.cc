// Det (engine/ops/det.h) and the import of ONNX Det (opset 11 on).
#include "engine/ops/det.h"

#include "absl/strings/str_cat.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/ops/typed.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

absl::StatusOr<TensorDesc> Infer(const OpAttrs&, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kDet, in, 1, 1));
  const TensorDesc& x = *in[0];
  const size_t r = x.shape.size();
  if (!IsFloatingPoint(x.dtype) || r < 2 || x.shape[r - 1] != x.shape[r - 2]) {
    return Bad(kDet, absl::StrCat("input is ", x.ToString(),
                                  "; expected float32, float16 or float64 [..., M, M]"));
  }
  return TensorDesc{Shape(x.shape.begin(), x.shape.end() - 2), x.dtype};
}

size_t ElementBytes(DataType t) { return t == DataType::kFloat64 ? 8 : 4; }

absl::Status Lower(LoweringContext& ctx, const Node& node) {
  const TensorDesc& x = ctx.graph().value(node.inputs[0]).desc;
  const int64_t n = x.shape.back();
  const int64_t batch = x.NumElements() / (n * n);
  if (x.NumElements() >= (int64_t{1} << 31)) {
    return Unsupported(node, "an input of 2^31 elements or more");
  }
  Dispatch& d = ctx.Emit(MakeDispatch(
      ctx, "det.cl", "det_lu", {static_cast<size_t>(batch)},
      {absl::StrCat("-DKIND=", TypedKind(x.dtype)), absl::StrCat("-DT=", TypedStorage(x.dtype))}));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Scratch(), ctx.Arg(node.outputs[0]),
            DispatchArg::Scalar(static_cast<cl_int>(n))};
  return absl::OkStatus();
}

absl::Status Import(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({}));
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  return n.Emit(kDet, {x}, {});
}

}  // namespace

RECQ_REGISTER_OPS(Det) {
  OpDef def;
  def.type = kDet;
  def.typed = true;
  def.infer = Infer;
  def.onnx = {{"", "Det", 11, kOnnxOpsetMax, Import}};
  KernelVariant v{"det_lu", nullptr, Lower};
  // A copy of every matrix in the arithmetic type (float for float16).
  v.scratch_bytes = [](const Node& node, const LoweringContext& ctx) -> size_t {
    const TensorDesc& x = ctx.graph().value(node.inputs[0]).desc;
    return static_cast<size_t>(x.NumElements()) * ElementBytes(x.dtype);
  };
  def.variants = {std::move(v)};
  return table.Add(std::move(def));
}

}  // namespace recq::internal
