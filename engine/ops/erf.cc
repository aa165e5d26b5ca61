// Erf: y = erf(x) element-wise (ONNX Erf, opset 9 on), the error function
// that GELU is built from.
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

const OpType kErf("Erf");

absl::StatusOr<TensorDesc> Infer(const OpAttrs&, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kErf, in, 1, 1));
  return *in[0];
}

absl::Status Import(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({}));
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  return n.Emit(kErf, {x}, {});
}

absl::Status Lower(LoweringContext& ctx, const Node& node) {
  const TensorDesc& y = ctx.graph().value(node.outputs[0]).desc;
  Dispatch& d = ctx.Emit(MakeDispatch(ctx, "erf.cl", "erf_kernel", {size_t(y.NumElements())}));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.outputs[0])};
  return absl::OkStatus();
}

}  // namespace

RECQ_REGISTER_OPS(Erf) {
  OpDef def;
  def.type = kErf;
  def.onnx = {{"", "Erf", 9, kOnnxOpsetMax, Import}};
  def.infer = Infer;
  def.elementwise = [](const Node&, const std::vector<std::string>& x) -> std::string {
    return x.size() == 1 ? "erf(" + x[0] + ")" : "";
  };
  def.export_onnx = [](const Node&, const Graph&, OnnxNodeWriter& out) {
    out.SetOpType("Erf");
    return absl::OkStatus();
  };
  def.variants = {{"erf", nullptr, Lower}};
  return table.Add(std::move(def));
}

}  // namespace recq::internal
