// Element-wise activations: Relu, Clip, LeakyRelu, Sigmoid, HardSigmoid,
// HardSwish and Silu (ActivationAttrs). Each is also an epilogue that FuseActivations
// moves into the op before it (RECQ_ACT_* in kernels/common/common.cl).
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/fusion/elementwise_expr.h"
#include "engine/ops/onnx_emitter.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/ops/typed.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

struct ActivationOp {
  OpType type;
  ActivationKind kind;
  bool uses_alpha;
  bool uses_beta;
};

// ActivationOf returns the activation `node` applies, with its parameters.
Activation ActivationOf(const ActivationOp& op, const Node& node) {
  const auto* a = node.attrs.get_if<ActivationAttrs>();
  const ActivationAttrs attrs = a ? *a : ActivationAttrs{};
  return {op.kind, op.uses_alpha ? attrs.alpha : 0.0f, op.uses_beta ? attrs.beta : 0.0f};
}

absl::StatusOr<ValueId> OnlyInput(OnnxNodeContext& n, std::initializer_list<const char*> attrs) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs(attrs));
  return n.Input(0);
}

absl::Status ImportPlain(OnnxNodeContext& n, OpType op) {
  RECQ_ASSIGN_OR_RETURN(ValueId x, OnlyInput(n, {}));
  return n.Emit(op, {x}, ActivationAttrs{});
}

absl::Status ImportLeakyRelu(OnnxNodeContext& n) {
  RECQ_ASSIGN_OR_RETURN(ValueId x, OnlyInput(n, {"alpha"}));
  RECQ_ASSIGN_OR_RETURN(float alpha, n.Float("alpha", 0.01f));
  return n.Emit(OpType::kLeakyRelu, {x}, ActivationAttrs{alpha, 0.0f});
}

absl::Status ImportHardSigmoid(OnnxNodeContext& n) {
  RECQ_ASSIGN_OR_RETURN(ValueId x, OnlyInput(n, {"alpha", "beta"}));
  RECQ_ASSIGN_OR_RETURN(float alpha, n.Float("alpha", 0.2f));
  RECQ_ASSIGN_OR_RETURN(float beta, n.Float("beta", 0.5f));
  return n.Emit(OpType::kHardSigmoid, {x}, ActivationAttrs{alpha, beta});
}

// Clip of integers, or with a bound computed from the model's inputs:
// y = Min(Max(x, min), max) with the element-wise ops of x's type (the
// integer twins for integers), each bound broadcast.
absl::Status ImportClipAsMinMax(OnnxNodeContext& n, ValueId x) {
  const bool ints = IsIntegral(n.desc(x).dtype);
  std::vector<std::pair<OpType, ValueId>> steps;
  RECQ_ASSIGN_OR_RETURN(ValueId lo, n.Input(1, /*optional=*/true));
  RECQ_ASSIGN_OR_RETURN(ValueId hi, n.Input(2, /*optional=*/true));
  if (lo != kNoValue) steps.push_back({ints ? kIntMax : OpType("Max"), lo});
  if (hi != kNoValue) steps.push_back({ints ? kIntMin : OpType("Min"), hi});
  if (steps.empty()) return n.Emit(OpType::kIdentity, {x}, {});
  if (steps.size() == 2) {
    OnnxNodeEmitter* e = EmitterOf(n);
    if (e == nullptr) return n.Unsupported("a Clip of integers or of computed bounds");
    RECQ_ASSIGN_OR_RETURN(x, e->EmitValue(steps[0].first, {x, steps[0].second}, {}, "min"));
  }
  return n.Emit(steps.back().first, {x, steps.back().second}, {});
}

// Clip: bounds are attributes before opset 11 and constant inputs after
// (or computed ones, and integers, as Max and Min).
absl::Status ImportClip(OnnxNodeContext& n) {
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  if (n.opset() >= 11) {
    bool as_min_max = IsIntegral(n.desc(x).dtype);
    for (int i = 1; i < 3 && !as_min_max; ++i) {
      absl::StatusOr<const OnnxConstant*> c = n.ConstantInput(i);
      as_min_max = !c.ok();  // a computed bound
    }
    if (as_min_max) {
      RECQ_RETURN_IF_ERROR(n.CheckAttrs({}));
      return ImportClipAsMinMax(n, x);
    }
  }
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();
  if (n.opset() < 11) {
    RECQ_RETURN_IF_ERROR(n.CheckAttrs({"min", "max"}));
    RECQ_ASSIGN_OR_RETURN(lo, n.Float("min", std::numeric_limits<float>::lowest()));
    RECQ_ASSIGN_OR_RETURN(hi, n.Float("max", std::numeric_limits<float>::max()));
  } else {
    RECQ_RETURN_IF_ERROR(n.CheckAttrs({}));
    for (int i = 1; i < 3; ++i) {
      RECQ_ASSIGN_OR_RETURN(const OnnxConstant* c, n.ConstantInput(i));
      if (c == nullptr) continue;
      if (!c->is_float || c->floats.size() != 1) {
        return n.Unsupported(
            absl::StrCat(i == 1 ? "min" : "max", " '", c->name, "' must be a float32 scalar"));
      }
      (i == 1 ? lo : hi) = c->floats[0];
    }
  }
  return n.Emit(OpType::kClip, {x}, ActivationAttrs{lo, hi});
}

// The ONNX writer of each activation (Silu has no ONNX op before opset 22's
// HardSwish-like family, so none).
decltype(OpDef::export_onnx) ExportOf(const ActivationOp& op) {
  if (op.kind == ActivationKind::kSilu) return nullptr;
  return [op](const Node& node, const Graph&, OnnxNodeWriter& out) {
    const Activation act = ActivationOf(op, node);
    out.SetOpType(op.type.name());
    if (op.kind == ActivationKind::kLeakyRelu) out.SetFloat("alpha", act.alpha);
    if (op.kind == ActivationKind::kHardSigmoid) {
      out.SetFloat("alpha", act.alpha);
      out.SetFloat("beta", act.beta);
    }
    if (op.kind == ActivationKind::kClip) {
      // Opset 11 on: the bounds are scalar inputs.
      out.AddConstantInput(node.name + ".min", {}, {act.alpha});
      out.AddConstantInput(node.name + ".max", {}, {act.beta});
    }
    return absl::OkStatus();
  };
}

}  // namespace

RECQ_REGISTER_OPS(Activation) {
  const ActivationOp ops[] = {
      {OpType::kRelu, ActivationKind::kRelu, false, false},
      {OpType::kClip, ActivationKind::kClip, true, true},
      {OpType::kLeakyRelu, ActivationKind::kLeakyRelu, true, false},
      {OpType::kSigmoid, ActivationKind::kSigmoid, false, false},
      {OpType::kHardSigmoid, ActivationKind::kHardSigmoid, true, true},
      {OpType::kHardSwish, ActivationKind::kHardSwish, false, false},
      // No ONNX op: engine/patterns/silu.cc makes it from Mul(x, Sigmoid(x)).
      {OpType("Silu"), ActivationKind::kSilu, false, false},
  };
  for (const ActivationOp& op : ops) {
    OpDef def;
    def.type = op.type;
    def.infer = [type = op.type](const OpAttrs& attrs,
                                 InferInputs in) -> absl::StatusOr<TensorDesc> {
      RECQ_RETURN_IF_ERROR(CheckInputCount(type, in, 1, 1));
      RECQ_RETURN_IF_ERROR(AttrsOf<ActivationAttrs>(type, attrs).status());
      return *in[0];
    };
    def.as_activation = [op](const Node& node) { return ActivationOf(op, node); };
    def.elementwise = [op](const Node& node, const std::vector<std::string>& x) -> std::string {
      return x.size() == 1 ? ActivationExpr(ActivationOf(op, node), x[0]) : "";
    };
    def.variants = {{"activation", nullptr, [op](LoweringContext& ctx, const Node& node) {
                       EmitActivation(ctx, node.inputs[0], node.outputs[0], ActivationOf(op, node));
                       return absl::OkStatus();
                     }}};
    const OpType type = op.type;
    def.export_onnx = ExportOf(op);
    switch (op.kind) {
      case ActivationKind::kRelu:
      case ActivationKind::kSigmoid:
      case ActivationKind::kHardSwish:
        def.onnx = {{"", type.name(), 1, kOnnxOpsetMax,
                     [type](OnnxNodeContext& n) { return ImportPlain(n, type); }}};
        break;
      case ActivationKind::kLeakyRelu:
        def.onnx = {{"", "LeakyRelu", 1, kOnnxOpsetMax, ImportLeakyRelu}};
        break;
      case ActivationKind::kHardSigmoid:
        def.onnx = {{"", "HardSigmoid", 1, kOnnxOpsetMax, ImportHardSigmoid}};
        break;
      case ActivationKind::kClip:
        def.onnx = {{"", "Clip", 1, kOnnxOpsetMax, ImportClip}};
        break;
      case ActivationKind::kSilu:
      case ActivationKind::kGelu:
      case ActivationKind::kGeluTanh:
      case ActivationKind::kNone:
        break;
    }
    RECQ_RETURN_IF_ERROR(table.Add(std::move(def)));
  }
  return absl::OkStatus();
}

}  // namespace recq::internal
