// Ops whose output is their input under another shape: Flatten, Reshape
// (ReshapeAttrs) and Identity (also ONNX Dropout in inference). Lowering
// aliases their memory; where it cannot (both ends bound per run, or a
// fused activation), they copy.
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/onnx_emitter.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

absl::StatusOr<TensorDesc> InferFlatten(const OpAttrs& attrs, InferInputs in) {
  constexpr OpType op = OpType::kFlatten;
  RECQ_RETURN_IF_ERROR(CheckInputCount(op, in, 1, 1));
  RECQ_ASSIGN_OR_RETURN(const FlattenAttrs* a, AttrsOf<FlattenAttrs>(op, attrs));
  const Shape& x = in[0]->shape;
  RECQ_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(op, a->axis, x.size(), true));
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i) (i < axis ? outer : inner) *= x[i];
  return TensorDesc{{outer, inner}, in[0]->dtype};
}

absl::StatusOr<TensorDesc> InferReshape(const OpAttrs& attrs, InferInputs in) {
  constexpr OpType op = OpType::kReshape;
  RECQ_RETURN_IF_ERROR(CheckInputCount(op, in, 1, 1));
  RECQ_ASSIGN_OR_RETURN(const ReshapeAttrs* a, AttrsOf<ReshapeAttrs>(op, attrs));
  const Shape& x = in[0]->shape;
  Shape out = a->shape;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 0 && !a->allow_zero) {
      if (i >= x.size())
        return Bad(op, absl::StrCat("0 at position ", i, " has no input dimension"));
      out[i] = x[i];
    }
    if (out[i] == -1) {
      if (infer >= 0) return Bad(op, "more than one -1 in the target shape");
      infer = static_cast<int>(i);
      continue;
    }
    if (out[i] <= 0 || out[i] > (int64_t{1} << 40) || known > (int64_t{1} << 40)) {
      return Bad(op, absl::StrCat("target shape ", S(a->shape), " is invalid"));
    }
    known *= out[i];
  }
  int64_t total = in[0]->NumElements();
  if (infer >= 0) {
    if (known == 0 || total % known != 0) {
      return Bad(op, absl::StrCat("cannot reshape ", S(x), " to ", S(a->shape)));
    }
    out[infer] = total / known;
  } else if (known != total) {
    return Bad(op, absl::StrCat("cannot reshape ", S(x), " (", total, " elements) to ", S(a->shape),
                                " (", known, " elements)"));
  }
  return TensorDesc{out, in[0]->dtype};
}

absl::StatusOr<TensorDesc> InferIdentity(const OpAttrs&, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(OpType::kIdentity, in, 1, 1));
  return *in[0];
}

absl::Status ImportFlatten(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"axis"}));
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  RECQ_ASSIGN_OR_RETURN(int64_t axis, n.Int("axis", 1));
  return n.Emit(OpType::kFlatten, {x}, FlattenAttrs{axis});
}

absl::Status ImportReshape(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"allowzero"}));
  RECQ_ASSIGN_OR_RETURN(const OnnxConstant* shape, n.ConstantInput(1));
  if (shape == nullptr) return n.Invalid("input 1 (shape) is required");
  if (shape->is_float || shape->dims.size() != 1) {
    return n.Invalid(absl::StrCat("shape '", shape->name, "' must be a 1-D int64 tensor"));
  }
  RECQ_ASSIGN_OR_RETURN(int64_t allowzero, n.Int("allowzero", 0));
  ReshapeAttrs attrs{shape->ints, allowzero != 0};
  absl::StatusOr<const OnnxConstant*> data = n.ConstantInput(0);
  if (data.ok() && *data != nullptr) {
    // A constant (shape arithmetic, Swin's attention mask) folds to a
    // constant under the new shape.
    const TensorDesc in{(*data)->dims, (*data)->type()};
    const TensorDesc* inputs[] = {&in};
    absl::StatusOr<TensorDesc> out = InferReshape(OpAttrs(attrs), inputs);
    if (!out.ok()) return n.Invalid(out.status().message());
    OnnxConstant folded = **data;
    folded.dims = out->shape;
    return n.DefineConstant(std::move(folded));
  }
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  return n.Emit(OpType::kReshape, {x}, std::move(attrs));
}

absl::Status ImportIdentity(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({}));
  absl::StatusOr<const OnnxConstant*> c = n.ConstantInput(0);
  if (c.ok() && *c != nullptr) return n.DefineConstant(**c);
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  return n.Emit(OpType::kIdentity, {x}, {});
}

// Dropout in inference is the identity, and its mask (output 1, from
// opset 10 on a bool tensor) all true; a training-mode input must be a
// constant false.
absl::Status ImportDropout(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"ratio", "seed", "is_test"}));
  const bool mask = n.num_outputs() > 1 && n.OutputUsed(1);
  if (mask && n.opset() < 10) return n.Unsupported("the float mask of Dropout before opset 10");
  if (n.num_outputs() > 2 && n.OutputUsed(2)) return n.CheckOnlyFirstOutputUsed();
  if (n.num_inputs() > 2) {
    RECQ_ASSIGN_OR_RETURN(const OnnxConstant* training, n.ConstantInput(2));
    if (training != nullptr) {
      bool on = training->size() != 1 ||
                (training->is_float ? training->floats[0] != 0 : training->ints[0] != 0);
      if (on) return n.Unsupported("training_mode must be a constant false");
    }
  }
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  if (mask) {
    OnnxNodeEmitter* e = EmitterOf(n);
    if (e == nullptr) return n.Unsupported("Dropout's mask output");
    RECQ_RETURN_IF_ERROR(n.ReserveFolded(n.desc(x).NumElements()));
    OnnxConstant ones;
    ones.dims = n.desc(x).shape;
    ones.is_float = false;
    ones.dtype = DataType::kBool;
    ones.ints.assign(static_cast<size_t>(n.desc(x).NumElements()), 1);
    RECQ_ASSIGN_OR_RETURN(ValueId all_true, e->AddConstantValue(std::move(ones), "mask"));
    RECQ_RETURN_IF_ERROR(n.EmitOutput(1, OpType::kIdentity, {all_true}, {}));
  }
  return n.Emit(OpType::kIdentity, {x}, {});
}

// Reached only where the output cannot alias the input.
absl::Status LowerCopy(LoweringContext& ctx, const Node& node) {
  const ValueId y = node.outputs[0];
  if (node.fused.kind != ActivationKind::kNone) {
    EmitActivation(ctx, node.inputs[0], y, node.fused);
    ctx.MarkActivationApplied();
  } else {
    EmitCopyOf(ctx, ctx.Arg(node.inputs[0]), ctx.Arg(y), ctx.graph().value(y).desc);
  }
  return absl::OkStatus();
}

OpDef ViewOp(OpType type, decltype(OpDef::infer) infer, std::vector<OnnxMapping> onnx) {
  OpDef def;
  def.type = type;
  def.onnx = std::move(onnx);
  def.infer = std::move(infer);
  def.variants = {{"copy", nullptr, LowerCopy}};
  def.is_view = true;
  def.typed = true;  // any element type: the output is the input's bytes
  return def;
}

}  // namespace

RECQ_REGISTER_OPS(ShapeOps) {
  OpDef flatten =
      ViewOp(OpType::kFlatten, InferFlatten, {{"", "Flatten", 1, kOnnxOpsetMax, ImportFlatten}});
  flatten.export_onnx = [](const Node& node, const Graph&, OnnxNodeWriter& out) {
    out.SetOpType("Flatten");
    out.SetInt("axis", AttrsOr<FlattenAttrs>(node).axis);
    return absl::OkStatus();
  };
  RECQ_RETURN_IF_ERROR(table.Add(std::move(flatten)));
  RECQ_RETURN_IF_ERROR(table.Add(
      ViewOp(OpType::kReshape, InferReshape, {{"", "Reshape", 5, kOnnxOpsetMax, ImportReshape}})));
  OpDef identity = ViewOp(OpType::kIdentity, InferIdentity,
                          {{"", "Identity", 1, kOnnxOpsetMax, ImportIdentity},
                           {"", "Dropout", 1, kOnnxOpsetMax, ImportDropout}});
  identity.export_onnx = [](const Node&, const Graph&, OnnxNodeWriter& out) {
    out.SetOpType("Identity");
    return absl::OkStatus();
  };
  RECQ_RETURN_IF_ERROR(table.Add(std::move(identity)));
  return absl::OkStatus();
}

}  // namespace recq::internal
