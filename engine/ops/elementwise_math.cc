// Element-wise float math without a fused-activation role: the
// trigonometric and hyperbolic functions (Sin, Cos, Tan, Asin, Acos, Atan,
// Sinh, Cosh, Asinh, Acosh, Atanh), Round, Softsign, and the activations
// with parameters Elu, Selu, Celu, ThresholdedRelu and Shrink
// (MathAttrs, elementwise_math.h). One kernel
// (elementwise_math.cl) built per function; float32 or float16 storage.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/elementwise_math.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

// One function: its code (FN in elementwise_math.cl), its ONNX attributes
// and their defaults (alpha first), and its first ONNX opset.
struct MathOp {
  const char* name;
  int code;
  const char* alpha_name;  // nullptr: none
  float alpha_default;
  const char* beta_name;
  float beta_default;
  int64_t min_opset;
};

const MathOp kOps[] = {
    {"Sin", 0, nullptr, 0, nullptr, 0, 7},
    {"Cos", 1, nullptr, 0, nullptr, 0, 7},
    {"Tan", 2, nullptr, 0, nullptr, 0, 7},
    {"Asin", 3, nullptr, 0, nullptr, 0, 7},
    {"Acos", 4, nullptr, 0, nullptr, 0, 7},
    {"Atan", 5, nullptr, 0, nullptr, 0, 7},
    {"Sinh", 6, nullptr, 0, nullptr, 0, 9},
    {"Cosh", 7, nullptr, 0, nullptr, 0, 9},
    {"Asinh", 8, nullptr, 0, nullptr, 0, 9},
    {"Acosh", 9, nullptr, 0, nullptr, 0, 9},
    {"Atanh", 10, nullptr, 0, nullptr, 0, 9},
    {"Round", 11, nullptr, 0, nullptr, 0, 11},
    {"Softsign", 12, nullptr, 0, nullptr, 0, 1},
    {"Elu", 13, "alpha", 1.0f, nullptr, 0, 6},
    // Selu: gamma * (x > 0 ? x : alpha * (exp(x) - 1)); beta holds gamma.
    {"Selu", 14, "alpha", 1.67326319217681884765625f, "gamma", 1.05070102214813232421875f, 6},
    {"Celu", 15, "alpha", 1.0f, nullptr, 0, 12},
    {"ThresholdedRelu", 16, "alpha", 1.0f, nullptr, 0, 10},
    // Shrink: alpha holds lambd, beta bias.
    {"Shrink", 17, "lambd", 0.5f, "bias", 0.0f, 9},
};

absl::Status Import(const MathOp& op, OnnxNodeContext& n) {
  std::vector<const char*> known;
  if (op.alpha_name != nullptr) known.push_back(op.alpha_name);
  if (op.beta_name != nullptr) known.push_back(op.beta_name);
  absl::Status attrs_ok = known.empty() ? n.CheckAttrs({})
                                        : (known.size() == 1 ? n.CheckAttrs({known[0]})
                                                             : n.CheckAttrs({known[0], known[1]}));
  RECQ_RETURN_IF_ERROR(attrs_ok);
  MathAttrs a;
  if (op.alpha_name != nullptr) {
    RECQ_ASSIGN_OR_RETURN(a.alpha, n.Float(op.alpha_name, op.alpha_default));
  }
  if (op.beta_name != nullptr) {
    RECQ_ASSIGN_OR_RETURN(a.beta, n.Float(op.beta_name, op.beta_default));
  }
  if (op.code == 15 && a.alpha == 0.0f) return n.Invalid("alpha is 0");
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  return n.Emit(OpType(op.name), {x}, a);
}

absl::Status Lower(const MathOp& op, LoweringContext& ctx, const Node& node) {
  const MathAttrs& a = AttrsOr<MathAttrs>(node);
  const int64_t n = ctx.graph().value(node.outputs[0]).desc.NumElements();
  Dispatch& d = ctx.Emit(MakeDispatch(ctx, "elementwise_math.cl", "math_unary", {size_t(n)},
                                      {absl::StrCat("-DFN=", op.code)}));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.outputs[0])};
  d.args.push_back(DispatchArg::Scalar(a.alpha));
  d.args.push_back(DispatchArg::Scalar(a.beta));
  return absl::OkStatus();
}

}  // namespace

RECQ_REGISTER_OPS(ElementwiseMath) {
  for (const MathOp& op : kOps) {
    const OpType type(op.name);
    OpDef def;
    def.type = type;
    def.onnx = {{"", op.name, op.min_opset, kOnnxOpsetMax,
                 [op](OnnxNodeContext& n) { return Import(op, n); }}};
    def.infer = [type](const OpAttrs& attrs, InferInputs in) -> absl::StatusOr<TensorDesc> {
      RECQ_RETURN_IF_ERROR(CheckInputCount(type, in, 1, 1));
      RECQ_RETURN_IF_ERROR(AttrsOf<MathAttrs>(type, attrs).status());
      return *in[0];
    };
    def.variants = {{"math_unary", nullptr, [op](LoweringContext& ctx, const Node& node) {
                       return Lower(op, ctx, node);
                     }}};
    RECQ_RETURN_IF_ERROR(table.Add(std::move(def)));
  }
  return absl::OkStatus();
}

}  // namespace recq::internal
