// Element-wise ops of two or more inputs with numpy broadcasting: Add, Sub,
// Mul, Div, Pow, PRelu (the slope broadcast to x), and the variadic Min, Max,
// Sum and Mean. Their kernels apply a fused activation; Add is the residual a
// pointwise conv can take over.
#include <algorithm>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/fusion/elementwise_expr.h"
#include "engine/ops/constant_eval.h"
#include "engine/ops/onnx_emitter.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/ops/typed.h"
#include "engine/ops/unary.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

const OpType kMin("Min");
const OpType kMax("Max");
const OpType kSum("Sum");
const OpType kMean("Mean");
const OpType kPRelu("PRelu");
const OpType kPow("Pow");

// One op of the family: its kernel code (recq_binary in binary.cl), the
// first ONNX opset with today's (multidirectional broadcasting) semantics,
// and whether it takes any number of inputs.
struct BinaryOp {
  OpType type;
  int code;
  int64_t min_opset;
  bool variadic;
};

const BinaryOp kOps[] = {
    {OpType::kAdd, 0, 1, false}, {OpType::kSub, 1, 1, false}, {OpType::kMul, 2, 1, false},
    {OpType::kDiv, 3, 1, false}, {kMin, 4, 8, true},          {kMax, 5, 8, true},
    {kSum, 0, 8, true},          {kMean, 0, 8, true},         {kPRelu, 6, 7, false},
    {kPow, 7, 7, false},
};

int CodeOf(OpType op) {
  for (const BinaryOp& b : kOps) {
    if (b.type == op) return b.code;
  }
  return 0;
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
  d.args.push_back(DispatchArg::Scalar(node.op == kMean ? 0.5f : 1.0f));
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
  d.args.push_back(DispatchArg::Scalar(node.op == kMean ? 0.5f : 1.0f));
  AddFusedActivation(ctx, d, node);
  return absl::OkStatus();
}

// The "outer, mid, inner" broadcast of a per-channel or per-feature operand:
// one operand has the output's shape, the other's dimensions other than 1
// are one contiguous run equal to the output's there (a bias [C] on
// [N, L, C], a scale [C, 1, 1] on [N, C, H, W], a scalar). Its element for
// output i is (i / inner) % mid.
struct MidBroadcast {
  int small = -1;  // the index of the broadcast operand, or -1: no such form
  int64_t mid = 1, inner = 1;
};

MidBroadcast MidBroadcastOf(const Node& node, const LoweringContext& ctx) {
  MidBroadcast m;
  if (node.inputs.size() != 2) return m;
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  for (int side = 0; side < 2; ++side) {
    if (ShapeOf(ctx, node.inputs[1 - side]) != out) continue;
    const Shape& s = ShapeOf(ctx, node.inputs[side]);
    if (s.size() > out.size()) continue;
    const size_t pad = out.size() - s.size();
    size_t first = out.size(), last = 0;  // the run of dims other than 1
    bool ok = true;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == 1) continue;
      if (s[i] != out[pad + i]) ok = false;
      first = std::min(first, pad + i);
      last = pad + i + 1;
    }
    if (!ok) continue;
    if (first == out.size()) first = last = out.size();  // a scalar
    for (size_t i = first; i < last; ++i) {
      if (s[i - pad] == 1 && out[i] != 1) ok = false;  // a gap in the run
    }
    if (!ok) continue;
    m.small = side;
    m.mid = Product(out, first, last);
    m.inner = Product(out, last, out.size());
    return m;
  }
  return m;
}

absl::Status LowerMid(LoweringContext& ctx, const Node& node) {
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  const MidBroadcast m = MidBroadcastOf(node, ctx);
  const size_t rows = m.inner > 0 ? size_t(Product(out, 0, out.size()) / m.inner) : 0;
  Dispatch& d = ctx.Emit(
      MakeDispatch(ctx, "binary.cl", "binary_mid_rows", {size_t((m.inner + 15) / 16), rows}));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]), ctx.Arg(node.outputs[0])};
  AddInts(d, {CodeOf(node.op), m.small, m.mid, m.inner});
  d.args.push_back(DispatchArg::Scalar(node.op == kMean ? 0.5f : 1.0f));
  AddFusedActivation(ctx, d, node);
  return absl::OkStatus();
}

bool MidFits(const Node& node, const LoweringContext& ctx) {
  return MidBroadcastOf(node, ctx).small >= 0;
}

// A variadic op of one input or more than two: y = in0 (broadcast) or
// y = in0 op in1, then y = y op in_k for each further input; the last step
// applies Mean's 1/n and the fused activation.
absl::Status LowerVariadic(LoweringContext& ctx, const Node& node) {
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  if (out.size() > 8) return Unsupported(node, "broadcasting beyond rank 8");
  const size_t n = node.inputs.size();
  const size_t elements = size_t(Product(out, 0, out.size()));
  const int code = CodeOf(node.op);
  for (size_t k = 0; k < n; ++k) {
    const bool last = k + 1 == n;
    const float scale = last && node.op == kMean ? 1.0f / static_cast<float>(n) : 1.0f;
    Dispatch& d = ctx.Emit(MakeDispatch(ctx, "binary.cl", "binary_accumulate", {elements}));
    // Step 0 copies in0 (code -1); step k > 0 folds in_k into y.
    d.args = {ctx.Arg(node.inputs[k]), ctx.Arg(node.outputs[0])};
    AddInts(d, {k == 0 ? -1 : code});
    d.args.push_back(DispatchArg::Scalar(Pad8(out, 1)));
    d.args.push_back(DispatchArg::Scalar(BroadcastStrides(ShapeOf(ctx, node.inputs[k]), out)));
    d.args.push_back(DispatchArg::Scalar(scale));
    if (last) {
      AddFusedActivation(ctx, d, node);
    } else {
      AddActivation(d, Activation{});
    }
  }
  return absl::OkStatus();
}

bool TwoInputs(const Node& node, const LoweringContext&) { return node.inputs.size() == 2; }

// The constant scalar exponent of a Pow node, if it has one.
std::optional<float> ScalarExponent(const Node& node, const LoweringContext& ctx) {
  const Value& e = ctx.graph().value(node.inputs[1]);
  if (e.kind != Value::Kind::kConstant || e.floats().size() != 1) return std::nullopt;
  if (ShapeOf(ctx, node.inputs[0]) != ShapeOf(ctx, node.outputs[0])) return std::nullopt;
  return e.floats()[0];
}

// Pow with a constant exponent 2 or 0.5 (the variance and the norm of an
// exported LayerNorm): x * x or sqrt(x), without pow's log and exp.
absl::Status LowerPowFast(LoweringContext& ctx, const Node& node) {
  const float e = *ScalarExponent(node, ctx);
  EmitUnary(ctx, node.inputs[0], node.outputs[0],
            e == 2.0f ? UnaryCode::kSquare : UnaryCode::kSqrt);
  return absl::OkStatus();
}

bool PowFastFits(const Node& node, const LoweringContext& ctx) {
  const std::optional<float> e = ScalarExponent(node, ctx);
  return e.has_value() && (*e == 2.0f || *e == 0.5f);
}

// BinaryExpr is recq_binary of binary.cl over `x` (identifiers), the
// variadic ops folded left to right and Mean's 1/n applied.
std::string BinaryExpr(const BinaryOp& b, const std::vector<std::string>& x) {
  if (x.empty() || (!b.variadic && x.size() != 2)) return "";
  static const char* const kFold[] = {"+", "-", "*", "/", "fmin", "fmax"};
  if (b.code < 6) {
    std::string e = FoldOperands(kFold[b.code], x);
    if (b.type == kMean) {
      e = absl::StrCat("(", e, "*", FloatLiteral(1.0f / static_cast<float>(x.size())), ")");
    }
    return e;
  }
  if (b.code == 6) return absl::StrCat("select(", x[0], ",", x[0], "*", x[1], ",", x[0], "<0.0f)");
  return absl::StrCat("pow(", x[0], ",", x[1], ")");
}

// Arithmetic on two constants, folded at import: integers when both are
// integer tensors (shape arithmetic; integer division truncates toward
// zero, as ONNX's does), else float32 computed in double.
absl::Status FoldIntegers(OnnxNodeContext& n, OpType op,
                          const std::vector<const OnnxConstant*>& in) {
  const int code = CodeOf(op);
  const bool ints = !in[0]->is_float && !in[1]->is_float;
  absl::StatusOr<OnnxConstant> out =
      BroadcastConstants(n, in, ints, [code, ints](absl::Span<const double> v) {
        switch (code) {
          case 0:
            return v[0] + v[1];
          case 1:
            return v[0] - v[1];
          case 2:
            return v[0] * v[1];
          default:
            return v[1] == 0 && ints ? 0.0 : v[0] / v[1];
        }
      });
  if (!out.ok()) return out.status();
  if (code == 3 && ints) {
    for (int64_t i = 0; i < in[1]->size(); ++i) {
      if (in[1]->ints[i] == 0) return n.Invalid("integer division by zero");
    }
  }
  return n.DefineConstant(*std::move(out));
}

// Integer tensors (index and mask arithmetic) and float64 ones (which the
// float32 kernels here do not take) run the typed twins of
// typed_elementwise.cc; a variadic Min or Max becomes a chain of them.
bool TypedArithmetic(DataType t) { return IsIntegral(t) || t == DataType::kFloat64; }

absl::Status EmitInteger(OnnxNodeContext& n, OpType op, const std::vector<ValueId>& inputs) {
  const OpType twin = IntegerOpFor(op);
  if (twin == op) {
    return n.Unsupported(absl::StrCat(op.name(), " of ", n.desc(inputs[0]).ToString(), " (integer ",
                                      op.name(), " is not implemented)"));
  }
  if (inputs.size() == 1) return n.Emit(OpType::kIdentity, inputs, {});
  ValueId acc = inputs[0];
  for (size_t i = 1; i + 1 < inputs.size(); ++i) {
    OnnxNodeEmitter* e = EmitterOf(n);
    if (e == nullptr) return n.Unsupported("an integer op of more than two inputs");
    RECQ_ASSIGN_OR_RETURN(acc, e->EmitValue(twin, {acc, inputs[i]}, {}, absl::StrCat("step", i)));
  }
  return n.Emit(twin, {acc, inputs.back()}, {});
}

// ONNX Pow's base and exponent may have different element types; y has
// the base's. A float base takes an integer exponent converted to its
// type; an integer base with an integer exponent runs IntPow (exact, in the
// base's type); an integer base with a float exponent is computed in
// float32 and truncated back to the base's type (onnxruntime's
// static_cast of std::pow).
absl::Status ImportPow(OnnxNodeContext& n, ValueId x, ValueId e) {
  const DataType xt = n.desc(x).dtype;
  const DataType et = n.desc(e).dtype;
  if (xt == DataType::kBool || et == DataType::kBool) {
    return n.Invalid(absl::StrCat("Pow of ", n.desc(x).ToString(), " and ", n.desc(e).ToString(),
                                  "; expected numeric inputs"));
  }
  if (xt == et && !IsIntegral(xt)) return n.Emit(kPow, {x, e}, {});
  OnnxNodeEmitter* em = EmitterOf(n);
  if (em == nullptr) return n.Unsupported("a Pow whose inputs need converting");
  auto cast = [&](ValueId v, DataType to, absl::string_view suffix) -> absl::StatusOr<ValueId> {
    if (n.desc(v).dtype == to) return v;
    return em->EmitValue(kCast, {v}, CastAttrs{to}, suffix);
  };
  if (!IsIntegral(xt)) {
    RECQ_ASSIGN_OR_RETURN(ValueId ex, cast(e, xt, "exponent"));
    return n.Emit(kPow, {x, ex}, {});
  }
  if (IsIntegral(et)) {
    RECQ_ASSIGN_OR_RETURN(ValueId ex, cast(e, xt, "exponent"));
    return n.Emit(kIntPow, {x, ex}, {});
  }
  RECQ_ASSIGN_OR_RETURN(ValueId xf, cast(x, DataType::kFloat32, "base"));
  RECQ_ASSIGN_OR_RETURN(ValueId ef, cast(e, DataType::kFloat32, "exponent"));
  RECQ_ASSIGN_OR_RETURN(ValueId yf, em->EmitValue(kPow, {xf, ef}, {}, "float"));
  return n.Emit(kCast, {yf}, CastAttrs{xt});
}

}  // namespace

RECQ_REGISTER_OPS(Binary) {
  for (const BinaryOp& b : kOps) {
    const OpType op = b.type;
    OpDef def;
    def.type = op;
    def.onnx = {
        {"", op.name(), b.min_opset, kOnnxOpsetMax, [b](OnnxNodeContext& n) -> absl::Status {
           RECQ_RETURN_IF_ERROR(n.CheckAttrs({}));
           if (b.variadic) {
             if (n.num_inputs() < 1) return n.Invalid("needs at least one input");
             std::vector<ValueId> inputs;
             for (int i = 0; i < n.num_inputs(); ++i) {
               RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(i));
               inputs.push_back(x);
             }
             if (TypedArithmetic(n.desc(inputs[0]).dtype)) return EmitInteger(n, b.type, inputs);
             return n.Emit(b.type, std::move(inputs), {});
           }
           std::vector<const OnnxConstant*> constants;
           // Two constants (shape arithmetic, or float constants such as
           // Swin's attention mask) fold at import.
           if (b.code <= 3 && AllConstantInputs(n, &constants) && constants.size() == 2 &&
               constants[0] && constants[1]) {
             return FoldIntegers(n, b.type, constants);
           }
           RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
           RECQ_ASSIGN_OR_RETURN(ValueId y, n.Input(1));
           if (b.type == kPow) return ImportPow(n, x, y);
           if (TypedArithmetic(n.desc(x).dtype)) return EmitInteger(n, b.type, {x, y});
           return n.Emit(b.type, {x, y}, {});
         }}};
    def.infer = [b](const OpAttrs&, InferInputs in) -> absl::StatusOr<TensorDesc> {
      RECQ_RETURN_IF_ERROR(CheckInputCount(b.type, in, b.variadic ? 1 : 2, b.variadic ? 1024 : 2));
      Shape out = in[0]->shape;
      for (size_t i = 1; i < in.size(); ++i) {
        RECQ_ASSIGN_OR_RETURN(out, Broadcast(b.type, out, in[i]->shape));
      }
      // PRelu's slope broadcasts to x (unidirectionally).
      if (b.type == kPRelu && out != in[0]->shape) {
        return Bad(b.type, absl::StrCat("slope of shape ", S(in[1]->shape),
                                        " does not broadcast to x of shape ", S(in[0]->shape)));
      }
      TensorDesc desc = *in[0];
      desc.shape = std::move(out);
      return desc;
    };
    def.export_onnx = [op](const Node&, const Graph&, OnnxNodeWriter& out) {
      out.SetOpType(op.name());
      return absl::OkStatus();
    };
    if (b.variadic) {
      def.variants = {{"binary_same",
                       [](const Node& node, const LoweringContext& ctx) {
                         return TwoInputs(node, ctx) && SameShapes(node, ctx);
                       },
                       LowerSame},
                      {"binary_broadcast", TwoInputs, LowerBroadcast},
                      {"variadic", nullptr, LowerVariadic}};
    } else if (op == kPow) {
      def.variants = {{"pow_fast", PowFastFits, LowerPowFast},
                      {"binary_same", SameShapes, LowerSame},
                      {"binary_mid_rows", MidFits, LowerMid},
                      {"binary_broadcast", nullptr, LowerBroadcast}};
    } else {
      def.variants = {{"binary_same", SameShapes, LowerSame},
                      {"binary_mid_rows", MidFits, LowerMid},
                      {"binary_broadcast", nullptr, LowerBroadcast}};
    }
    def.elementwise = [b](const Node&, const std::vector<std::string>& x) {
      return BinaryExpr(b, x);
    };
    // Pow's fast path has no activation epilogue.
    def.absorbs_activation = op != kPow;
    def.is_residual_add = op == OpType::kAdd;
    RECQ_RETURN_IF_ERROR(table.Add(std::move(def)));
  }
  return absl::OkStatus();
}

}  // namespace recq::internal
