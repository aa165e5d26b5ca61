// Binary element-wise ops with numpy broadcasting: Add, Sub, Mul, Div. Their
// kernels apply a fused activation; Add is the residual a pointwise conv can
// take over.
#include <vector>

#include "engine/ops/constant_eval.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/status_macros.h"

namespace recq::internal {
namespace {

// The kernels' op codes (binary.cl).
int CodeOf(OpType op) {
  return op == OpType::kAdd ? 0 : op == OpType::kSub ? 1 : op == OpType::kMul ? 2 : 3;
}

bool SameShapes(const Node& node, const LoweringContext& ctx) {
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  return ShapeOf(ctx, node.inputs[0]) == out && ShapeOf(ctx, node.inputs[1]) == out;
}

absl::Status LowerSame(LoweringContext& ctx, const Node& node) {
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  Dispatch& d = ctx.Emit(
      MakeDispatch(ctx, "binary.cl", "binary_same", {size_t(Product(out, 0, out.size()))}));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]), ctx.Arg(node.outputs[0])};
  AddInts(d, {CodeOf(node.op)});
  AddFusedActivation(ctx, d, node);
  return absl::OkStatus();
}

absl::Status LowerBroadcast(LoweringContext& ctx, const Node& node) {
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  if (out.size() > 8) return Unsupported(node, "broadcasting beyond rank 8");
  Dispatch& d = ctx.Emit(
      MakeDispatch(ctx, "binary.cl", "binary_broadcast", {size_t(Product(out, 0, out.size()))}));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]), ctx.Arg(node.outputs[0])};
  AddInts(d, {CodeOf(node.op)});
  d.args.push_back(DispatchArg::Scalar(Pad8(out, 1)));
  d.args.push_back(DispatchArg::Scalar(BroadcastStrides(ShapeOf(ctx, node.inputs[0]), out)));
  d.args.push_back(DispatchArg::Scalar(BroadcastStrides(ShapeOf(ctx, node.inputs[1]), out)));
  AddFusedActivation(ctx, d, node);
  return absl::OkStatus();
}

// Shape arithmetic on int64 constants, folded at import (integer division
// truncates toward zero, as ONNX's does).
absl::Status FoldIntegers(OnnxNodeContext& n, OpType op,
                          const std::vector<const OnnxConstant*>& in) {
  const int code = CodeOf(op);
  const bool ints = !in[0]->is_float && !in[1]->is_float;
  absl::StatusOr<OnnxConstant> out =
      BroadcastConstants(in, ints, [code](absl::Span<const double> v) {
        switch (code) {
          case 0:
            return v[0] + v[1];
          case 1:
            return v[0] - v[1];
          case 2:
            return v[0] * v[1];
          default:
            return v[1] == 0 ? 0.0 : v[0] / v[1];
        }
      });
  if (!out.ok()) return n.Invalid(out.status().message());
  if (code == 3 && ints) {
    for (int64_t i = 0; i < in[1]->size(); ++i) {
      if (in[1]->ints[i] == 0) return n.Invalid("integer division by zero");
    }
  }
  return n.DefineConstant(*std::move(out));
}

}  // namespace

RECQ_REGISTER_OPS(Binary) {
  for (OpType op : {OpType::kAdd, OpType::kSub, OpType::kMul, OpType::kDiv}) {
    OpDef def;
    def.type = op;
    def.onnx = {{"", op.name(), 1, kOnnxOpsetMax, [op](OnnxNodeContext& n) -> absl::Status {
                   RECQ_RETURN_IF_ERROR(n.CheckAttrs({}));
                   std::vector<const OnnxConstant*> constants;
                   if (AllConstantInputs(n, &constants) && constants.size() == 2 && constants[0] &&
                       constants[1] && (!constants[0]->is_float || !constants[1]->is_float)) {
                     return FoldIntegers(n, op, constants);
                   }
                   RECQ_ASSIGN_OR_RETURN(ValueId a, n.Input(0));
                   RECQ_ASSIGN_OR_RETURN(ValueId b, n.Input(1));
                   return n.Emit(op, {a, b}, {});
                 }}};
    def.infer = [op](const OpAttrs&, InferInputs in) -> absl::StatusOr<TensorDesc> {
      RECQ_RETURN_IF_ERROR(CheckInputCount(op, in, 2, 2));
      RECQ_ASSIGN_OR_RETURN(Shape out, Broadcast(op, in[0]->shape, in[1]->shape));
      return TensorDesc{out};
    };
    def.export_onnx = [op](const Node&, const Graph&, OnnxNodeWriter& out) {
      out.SetOpType(op.name());
      return absl::OkStatus();
    };
    def.variants = {{"binary_same", SameShapes, LowerSame},
                    {"binary_broadcast", nullptr, LowerBroadcast}};
    def.absorbs_activation = true;
    def.is_residual_add = op == OpType::kAdd;
    RECQ_RETURN_IF_ERROR(table.Add(std::move(def)));
  }
  return absl::OkStatus();
}

}  // namespace recq::internal
