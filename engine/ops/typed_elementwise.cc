// Element-wise ops on integer and bool tensors, and comparisons of any
// element type: what attention masks, position buckets and index
// arithmetic of exported transformers compute. Comparisons (Equal, Less,
// LessOrEqual, Greater, GreaterOrEqual), logic (And, Or, Xor, Not), IsNaN,
// IsInf and Sign import from ONNX here; integer Add/Sub/Mul/Div/Min/Max are
// emitted by binary.cc's import when its inputs are integers. On constants
// the ONNX ops fold at import (so shape arithmetic stays constant); on
// values computed from the model's inputs they run on the device, one
// kernel (typed_elementwise.cl) built per op and element type. An integer
// tensor is computed in its own type (int64 as OpenCL long).
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/constant_eval.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/ops/typed.h"
#include "recq/status_macros.h"

namespace recq::internal {

OpType IntegerOpFor(OpType op) {
  if (op == OpType::kAdd) return kIntAdd;
  if (op == OpType::kSub) return kIntSub;
  if (op == OpType::kMul) return kIntMul;
  if (op == OpType::kDiv) return kIntDiv;
  if (op == OpType("Min")) return kIntMin;
  if (op == OpType("Max")) return kIntMax;
  return op;
}

absl::Status EmitBroadcastCopy(LoweringContext& ctx, const Node& node) {
  const TensorDesc& y = ctx.graph().value(node.outputs[0]).desc;
  if (y.shape.size() > 8) return Unsupported(node, "a broadcast beyond rank 8");
  if (y.NumElements() >= (int64_t{1} << 31)) {
    return Unsupported(node, "2^31 or more output elements");
  }
  Dispatch& d = ctx.Emit(
      MakeDispatch(ctx, "typed_elementwise.cl", "broadcast_copy", {size_t(y.NumElements())},
                   {"-DBROADCAST_COPY", absl::StrCat("-DT=", TypedBits(y.dtype))}));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.outputs[0])};
  d.args.push_back(DispatchArg::Scalar(Pad8(y.shape, 1)));
  d.args.push_back(DispatchArg::Scalar(BroadcastStrides(ShapeOf(ctx, node.inputs[0]), y.shape)));
  return absl::OkStatus();
}

namespace {

// What an op's inputs must be and what it makes.
enum class Family {
  kCompare,  // any one element type -> bool
  kLogic,    // bool -> bool
  kInteger,  // one integer type -> that type
  kIsFloat,  // float -> bool (IsNaN, IsInf)
  kSame,     // any numeric type -> that type (Sign)
  kShift,    // one unsigned integer type -> that type (BitShift)
};

// One op: its kernel code (OP in typed_elementwise.cl), arity, family and
// ONNX import (none for the integer twins).
struct ElementOp {
  OpType type;
  int code;
  int arity;
  Family family;
  const char* onnx;  // nullptr: not imported under its own name
  int64_t min_opset;
};

const ElementOp kOps[] = {
    {kEqual, 0, 2, Family::kCompare, "Equal", 7},
    {kLess, 1, 2, Family::kCompare, "Less", 7},
    {kLessOrEqual, 2, 2, Family::kCompare, "LessOrEqual", 12},
    {kGreater, 3, 2, Family::kCompare, "Greater", 7},
    {kGreaterOrEqual, 4, 2, Family::kCompare, "GreaterOrEqual", 12},
    {kAnd, 5, 2, Family::kLogic, "And", 7},
    {kOr, 6, 2, Family::kLogic, "Or", 7},
    {kXor, 7, 2, Family::kLogic, "Xor", 7},
    {kIntAdd, 10, 2, Family::kInteger, nullptr, 0},
    {kIntSub, 11, 2, Family::kInteger, nullptr, 0},
    {kIntMul, 12, 2, Family::kInteger, nullptr, 0},
    {kIntDiv, 13, 2, Family::kInteger, nullptr, 0},
    {kIntMin, 14, 2, Family::kInteger, nullptr, 0},
    {kIntMax, 15, 2, Family::kInteger, nullptr, 0},
    {kIntPow, 16, 2, Family::kInteger, nullptr, 0},
    {kBitShiftLeft, 17, 2, Family::kShift, nullptr, 0},
    {kBitShiftRight, 18, 2, Family::kShift, nullptr, 0},
    {kNot, 20, 1, Family::kLogic, "Not", 1},
    {kIsNaN, 21, 1, Family::kIsFloat, "IsNaN", 9},
    {kIsInf, 22, 1, Family::kIsFloat, "IsInf", 10},
    {kSign, 23, 1, Family::kSame, "Sign", 9},
};

// The function of each code on doubles, for folding at import (integers
// are exact below 2^53, which shape arithmetic stays within).
double Apply(int code, double a, double b, const IsInfAttrs& inf) {
  switch (code) {
    case 0:
      return a == b;
    case 1:
      return a < b;
    case 2:
      return a <= b;
    case 3:
      return a > b;
    case 4:
      return a >= b;
    case 5:
      return a != 0 && b != 0;
    case 6:
      return a != 0 || b != 0;
    case 7:
      return (a != 0) != (b != 0);
    case 20:
      return a == 0;
    case 21:
      return std::isnan(a);
    case 22:
      return std::isinf(a) && (a > 0 ? inf.detect_positive : inf.detect_negative);
    case 23:
      return a > 0 ? 1.0 : (a < 0 ? -1.0 : a);
  }
  return 0;
}

absl::StatusOr<TensorDesc> Infer(const ElementOp& op, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(op.type, in, op.arity, op.arity));
  const DataType t = in[0]->dtype;
  Shape shape = in[0]->shape;
  if (op.arity == 2) {
    if (in[1]->dtype != t) {
      return Bad(op.type, absl::StrCat("inputs are ", in[0]->ToString(), " and ", in[1]->ToString(),
                                       "; expected one element type"));
    }
    RECQ_ASSIGN_OR_RETURN(shape, Broadcast(op.type, in[0]->shape, in[1]->shape));
  }
  const bool is_bool = t == DataType::kBool;
  switch (op.family) {
    case Family::kCompare:
      if (is_bool && op.type != kEqual) {
        return Bad(op.type, absl::StrCat("input is ", in[0]->ToString(), "; expected numeric"));
      }
      return TensorDesc{std::move(shape), DataType::kBool};
    case Family::kLogic:
      if (!is_bool) {
        return Bad(op.type, absl::StrCat("input is ", in[0]->ToString(), "; expected bool"));
      }
      return TensorDesc{std::move(shape), DataType::kBool};
    case Family::kInteger:
      // float64 too, except for IntPow (integer exponents by squaring).
      if ((!IsIntegral(t) || is_bool) && (t != DataType::kFloat64 || op.type == kIntPow)) {
        return Bad(op.type, absl::StrCat("input is ", in[0]->ToString(),
                                         "; expected an integer or float64"));
      }
      return TensorDesc{std::move(shape), t};
    case Family::kIsFloat:
      if (!IsFloatingPoint(t)) {
        return Bad(op.type, absl::StrCat("input is ", in[0]->ToString(), "; expected a float"));
      }
      return TensorDesc{std::move(shape), DataType::kBool};
    case Family::kShift:
      if (t != DataType::kUInt8 && t != DataType::kUInt16 && t != DataType::kUInt32 &&
          t != DataType::kUInt64) {
        return Bad(op.type,
                   absl::StrCat("input is ", in[0]->ToString(), "; expected an unsigned integer"));
      }
      return TensorDesc{std::move(shape), t};
    case Family::kSame:
      if (is_bool) {
        return Bad(op.type, absl::StrCat("input is ", in[0]->ToString(), "; expected numeric"));
      }
      return TensorDesc{std::move(shape), t};
  }
  return Bad(op.type, "unknown family");
}

absl::Status Lower(const ElementOp& op, LoweringContext& ctx, const Node& node) {
  const TensorDesc& x = ctx.graph().value(node.inputs[0]).desc;
  const TensorDesc& y = ctx.graph().value(node.outputs[0]).desc;
  if (y.shape.size() > 8) return Unsupported(node, "broadcasting beyond rank 8");
  if (y.NumElements() >= (int64_t{1} << 31)) {
    return Unsupported(node, "2^31 or more output elements");
  }
  std::vector<std::string> options = {
      op.arity == 2 ? "-DBINARY" : "-DUNARY",
      absl::StrCat("-DOP=", op.code),
      absl::StrCat("-DKIND=", TypedKind(x.dtype)),
      absl::StrCat("-DT=", TypedStorage(x.dtype)),
      absl::StrCat("-DOUT_KIND=", TypedKind(y.dtype)),
      absl::StrCat("-DOUT_T=", TypedStorage(y.dtype)),
  };
  if (node.op == kIsInf) {
    const IsInfAttrs& a = AttrsOr<IsInfAttrs>(node);
    options.push_back(absl::StrCat("-DDETECT_POS=", a.detect_positive ? 1 : 0));
    options.push_back(absl::StrCat("-DDETECT_NEG=", a.detect_negative ? 1 : 0));
  }
  Dispatch& d = ctx.Emit(MakeDispatch(ctx, "typed_elementwise.cl",
                                      op.arity == 2 ? "typed_binary" : "typed_unary",
                                      {size_t(y.NumElements())}, std::move(options)));
  if (op.arity == 1) {
    d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.outputs[0])};
    return absl::OkStatus();
  }
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]), ctx.Arg(node.outputs[0])};
  d.args.push_back(DispatchArg::Scalar(Pad8(y.shape, 1)));
  for (int i = 0; i < 2; ++i) {
    d.args.push_back(DispatchArg::Scalar(BroadcastStrides(ShapeOf(ctx, node.inputs[i]), y.shape)));
  }
  return absl::OkStatus();
}

// Import: folded when every input is a constant, else the device op.
absl::Status Import(const ElementOp& op, OnnxNodeContext& n) {
  IsInfAttrs inf;
  if (op.type == kIsInf) {
    RECQ_RETURN_IF_ERROR(n.CheckAttrs({"detect_positive", "detect_negative"}));
    RECQ_ASSIGN_OR_RETURN(int64_t pos, n.Int("detect_positive", 1));
    RECQ_ASSIGN_OR_RETURN(int64_t neg, n.Int("detect_negative", 1));
    inf = IsInfAttrs{pos != 0, neg != 0};
  } else {
    RECQ_RETURN_IF_ERROR(n.CheckAttrs({}));
  }
  if (n.num_inputs() != op.arity) {
    return n.Invalid(absl::StrCat("has ", n.num_inputs(), " inputs; expected ", op.arity));
  }
  std::vector<const OnnxConstant*> c;
  if (op.family != Family::kShift && AllConstantInputs(n, &c) &&
      static_cast<int>(c.size()) == op.arity && c[0] && (op.arity == 1 || c[1])) {
    const bool same = op.family == Family::kSame;
    const int code = op.code;
    absl::StatusOr<OnnxConstant> out =
        BroadcastConstants(n, c, !same || !c[0]->is_float, [code, inf](absl::Span<const double> v) {
          return Apply(code, v[0], v.size() > 1 ? v[1] : 0.0, inf);
        });
    if (!out.ok()) return out.status();
    out->dtype = same ? c[0]->type() : DataType::kBool;
    return n.DefineConstant(*std::move(out));
  }
  std::vector<ValueId> in;
  for (int i = 0; i < op.arity; ++i) {
    RECQ_ASSIGN_OR_RETURN(ValueId v, n.Input(i));
    in.push_back(v);
  }
  if (op.type == kIsInf) return n.Emit(op.type, std::move(in), inf);
  return n.Emit(op.type, std::move(in), {});
}

// ONNX BitShift: direction LEFT or RIGHT picks the op (run on the device
// even for constant inputs, which folding would have to wrap per type).
absl::Status ImportBitShift(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"direction"}));
  RECQ_ASSIGN_OR_RETURN(std::string direction, n.String("direction", ""));
  if (direction != "LEFT" && direction != "RIGHT") {
    return n.Invalid(absl::StrCat("direction is '", direction, "'; expected LEFT or RIGHT"));
  }
  if (n.num_inputs() != 2) {
    return n.Invalid(absl::StrCat("has ", n.num_inputs(), " inputs; expected 2"));
  }
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  RECQ_ASSIGN_OR_RETURN(ValueId y, n.Input(1));
  return n.Emit(direction == "LEFT" ? kBitShiftLeft : kBitShiftRight, {x, y}, {});
}

}  // namespace

RECQ_REGISTER_OPS(TypedElementwise) {
  RECQ_RETURN_IF_ERROR(table.AddOnnx({"", "BitShift", 11, kOnnxOpsetMax, ImportBitShift}));
  for (const ElementOp& op : kOps) {
    OpDef def;
    def.type = op.type;
    def.typed = true;
    if (op.onnx != nullptr) {
      def.onnx = {{"", op.onnx, op.min_opset, kOnnxOpsetMax,
                   [op](OnnxNodeContext& n) { return Import(op, n); }}};
    }
    def.infer = [op](const OpAttrs& attrs, InferInputs in) -> absl::StatusOr<TensorDesc> {
      if (op.type == kIsInf) {
        RECQ_RETURN_IF_ERROR(AttrsOf<IsInfAttrs>(op.type, attrs).status());
      }
      return Infer(op, in);
    };
    def.variants = {
        {std::string("typed_") + (op.arity == 2 ? "binary" : "unary"), nullptr,
         [op](LoweringContext& ctx, const Node& node) { return Lower(op, ctx, node); }}};
    RECQ_RETURN_IF_ERROR(table.Add(std::move(def)));
  }
  return absl::OkStatus();
}

}  // namespace recq::internal
