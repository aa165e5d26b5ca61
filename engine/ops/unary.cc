// Element-wise unary math from one table: Sqrt, Exp, Log, Tanh, Neg, Abs,
// Reciprocal, Floor, Ceil, Softplus, Mish and Gelu (GeluAttrs). They share
// one kernel (unary.cl) built once per op with the op's code as a build
// option, so each program is a plain loop of one function.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/fusion/elementwise_expr.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/ops/unary.h"
#include "recq/math_op_attrs.h"
#include "recq/status_macros.h"

namespace recq::internal {

void EmitUnary(LoweringContext& ctx, ValueId x, ValueId y, UnaryCode code) {
  const int64_t n = ctx.graph().value(y).desc.NumElements();
  Dispatch& d = ctx.Emit(MakeDispatch(ctx, "unary.cl", "unary", {size_t(n)},
                                      {absl::StrCat("-DRECQ_UNARY=", static_cast<int>(code))}));
  d.args = {ctx.Arg(x), ctx.Arg(y)};
}

namespace {

const OpType kGelu("Gelu");

struct UnaryOp {
  const char* name;  // the op type and its ONNX name
  UnaryCode code;
  int64_t min_opset;
  int64_t max_opset;
};

UnaryCode CodeOf(const UnaryOp& op, const Node& node) {
  if (op.code == UnaryCode::kGelu && AttrsOr<GeluAttrs>(node).tanh_approximation) {
    return UnaryCode::kGeluTanh;
  }
  return op.code;
}

// UnaryExpr is unary.cl's function `code` of the operand `x` (an
// identifier) as an OpenCL expression of float or floatN.
std::string UnaryExpr(UnaryCode code, const std::string& x) {
  const std::string softplus = absl::StrCat("(fmax(", x, ",0.0f)+log1p(exp(-fabs(", x, "))))");
  switch (code) {
    case UnaryCode::kSqrt:
      return absl::StrCat("sqrt(", x, ")");
    case UnaryCode::kExp:
      return absl::StrCat("exp(", x, ")");
    case UnaryCode::kLog:
      return absl::StrCat("log(", x, ")");
    case UnaryCode::kTanh:
      return absl::StrCat("tanh(", x, ")");
    case UnaryCode::kNeg:
      return absl::StrCat("(-", x, ")");
    case UnaryCode::kAbs:
      return absl::StrCat("fabs(", x, ")");
    case UnaryCode::kReciprocal:
      return absl::StrCat("(1.0f/", x, ")");
    case UnaryCode::kFloor:
      return absl::StrCat("floor(", x, ")");
    case UnaryCode::kCeil:
      return absl::StrCat("ceil(", x, ")");
    case UnaryCode::kSoftplus:
      return softplus;
    case UnaryCode::kMish:
      return absl::StrCat("(", x, "*tanh(", softplus, "))");
    case UnaryCode::kGelu:
      // recq_fused_erfc: common.cl's recq_act_erfc for float and float4.
      return absl::StrCat("(0.5f*", x, "*recq_fused_erfc(", x, "*-0.70710678118654752f))");
    case UnaryCode::kGeluTanh:
      return absl::StrCat("(0.5f*", x, "*(1.0f+tanh(0.79788456080286536f*(", x, "+0.044715f*", x,
                          "*", x, "*", x, "))))");
    case UnaryCode::kSquare:
      return absl::StrCat("(", x, "*", x, ")");
  }
  return "";
}

absl::Status ImportGelu(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"approximate"}));
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  RECQ_ASSIGN_OR_RETURN(std::string approximate, n.String("approximate", "none"));
  if (approximate != "none" && approximate != "tanh") {
    return n.Invalid(absl::StrCat("approximate is '", approximate, "'; expected none or tanh"));
  }
  return n.Emit(kGelu, {x}, GeluAttrs{approximate == "tanh"});
}

// Neg and Abs of an integer constant (shape arithmetic in exported
// LayerNorms) fold at import; whether it did.
absl::StatusOr<bool> FoldIntegerNegAbs(OnnxNodeContext& n, bool abs) {
  absl::StatusOr<const OnnxConstant*> c = n.ConstantInput(0);
  if (!c.ok() || *c == nullptr || (*c)->is_float) return false;
  OnnxConstant out = **c;
  for (int64_t& v : out.ints) v = abs && v >= 0 ? v : -v;
  RECQ_RETURN_IF_ERROR(n.DefineConstant(std::move(out)));
  return true;
}

}  // namespace

RECQ_REGISTER_OPS(Unary) {
  const UnaryOp ops[] = {
      {"Sqrt", UnaryCode::kSqrt, 6, kOnnxOpsetMax},
      {"Exp", UnaryCode::kExp, 6, kOnnxOpsetMax},
      {"Log", UnaryCode::kLog, 6, kOnnxOpsetMax},
      {"Tanh", UnaryCode::kTanh, 6, kOnnxOpsetMax},
      {"Neg", UnaryCode::kNeg, 6, kOnnxOpsetMax},
      {"Abs", UnaryCode::kAbs, 6, kOnnxOpsetMax},
      {"Reciprocal", UnaryCode::kReciprocal, 6, kOnnxOpsetMax},
      {"Floor", UnaryCode::kFloor, 6, kOnnxOpsetMax},
      {"Ceil", UnaryCode::kCeil, 6, kOnnxOpsetMax},
      {"Softplus", UnaryCode::kSoftplus, 1, kOnnxOpsetMax},
      // Mish and Gelu are ONNX ops from opsets 18 and 20 on.
      {"Mish", UnaryCode::kMish, 18, 21},
      {"Gelu", UnaryCode::kGelu, 20, 21},
  };
  for (const UnaryOp& op : ops) {
    const OpType type(op.name);
    OpDef def;
    def.type = type;
    if (op.code == UnaryCode::kGelu) {
      def.onnx = {{"", op.name, op.min_opset, op.max_opset, ImportGelu}};
      def.infer = [type](const OpAttrs& attrs, InferInputs in) -> absl::StatusOr<TensorDesc> {
        RECQ_RETURN_IF_ERROR(CheckInputCount(type, in, 1, 1));
        RECQ_RETURN_IF_ERROR(AttrsOf<GeluAttrs>(type, attrs).status());
        return *in[0];
      };
    } else {
      def.onnx = {
          {"", op.name, op.min_opset, op.max_opset, [type](OnnxNodeContext& n) -> absl::Status {
             RECQ_RETURN_IF_ERROR(n.CheckAttrs({}));
             if (type == OpType("Neg") || type == OpType("Abs")) {
               RECQ_ASSIGN_OR_RETURN(bool folded, FoldIntegerNegAbs(n, type == OpType("Abs")));
               if (folded) return absl::OkStatus();
             }
             RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
             return n.Emit(type, {x}, {});
           }}};
      def.infer = [type](const OpAttrs& attrs, InferInputs in) -> absl::StatusOr<TensorDesc> {
        RECQ_RETURN_IF_ERROR(CheckInputCount(type, in, 1, 1));
        if (!attrs.empty()) return Bad(type, "takes no attributes");
        return *in[0];
      };
      // Opset 13 has every one of them but Mish.
      if (op.min_opset <= 13) {
        def.export_onnx = [name = std::string(op.name)](const Node&, const Graph&,
                                                        OnnxNodeWriter& out) {
          out.SetOpType(name);
          return absl::OkStatus();
        };
      }
    }
    // Gelu is also an epilogue (ActivationKind::kGelu, kGeluTanh) that
    // FuseActivations moves into the op before it (a MatMul's bias Add).
    if (op.code == UnaryCode::kGelu) {
      def.as_activation = [op](const Node& node) {
        return Activation{CodeOf(op, node) == UnaryCode::kGeluTanh ? ActivationKind::kGeluTanh
                                                                   : ActivationKind::kGelu};
      };
    }
    def.elementwise = [op](const Node& node, const std::vector<std::string>& x) -> std::string {
      return x.size() == 1 ? UnaryExpr(CodeOf(op, node), x[0]) : "";
    };
    def.variants = {{"unary", nullptr, [op](LoweringContext& ctx, const Node& node) {
                       EmitUnary(ctx, node.inputs[0], node.outputs[0], CodeOf(op, node));
                       return absl::OkStatus();
                     }}};
    RECQ_RETURN_IF_ERROR(table.Add(std::move(def)));
  }
  return absl::OkStatus();
}

}  // namespace recq::internal
