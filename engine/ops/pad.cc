// Pad (PadAttrs): constant, reflect, edge and wrap padding of any rank up to
// 8; negative pads crop; reflect pads beyond the size reflect again (as numpy.pad). ONNX Pad opsets
// 2-10 (pads and value attributes), 11-17 (pads and constant_value inputs) and 18-21 (an axes
// input; wrap from 19).
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/ops/layout_attrs.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

const OpType kPad("Pad");

absl::StatusOr<TensorDesc> Infer(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kPad, in, 1, 1));
  RECQ_ASSIGN_OR_RETURN(const PadAttrs* a, AttrsOf<PadAttrs>(kPad, attrs));
  const Shape& x = in[0]->shape;
  const size_t rank = x.size();
  if (a->pads.size() != 2 * rank) {
    return Bad(kPad, absl::StrCat("pads ", S(a->pads), " must have 2 entries per axis of ", S(x)));
  }
  TensorDesc out = *in[0];
  for (size_t i = 0; i < rank; ++i) {
    out.shape[i] = x[i] + a->pads[i] + a->pads[rank + i];
    if (out.shape[i] <= 0) {
      return Bad(kPad, absl::StrCat("pads ", S(a->pads), " leave nothing of ", S(x)));
    }
  }
  return out;
}

absl::Status Import(OnnxNodeContext& n) {
  PadAttrs a;
  std::string mode;
  std::vector<int64_t> axes;
  if (n.opset() < 11) {
    RECQ_RETURN_IF_ERROR(n.CheckAttrs({"mode", "pads", "value", "paddings"}));
    RECQ_ASSIGN_OR_RETURN(a.pads, n.Ints(n.HasAttr("paddings") ? "paddings" : "pads"));
    RECQ_ASSIGN_OR_RETURN(a.value, n.Float("value", 0.0f));
  } else {
    RECQ_RETURN_IF_ERROR(n.CheckAttrs({"mode"}));
    absl::StatusOr<const OnnxConstant*> pads = n.ConstantInput(1);
    if (!pads.ok() || *pads == nullptr || (*pads)->is_float) {
      return n.Unsupported(
          "pads (input 1) must be an int64 constant known when the model is loaded");
    }
    a.pads = (*pads)->ints;
    if (n.num_inputs() > 2) {
      absl::StatusOr<const OnnxConstant*> value = n.ConstantInput(2);
      if (!value.ok()) return n.Unsupported("constant_value (input 2) must be a constant");
      if (*value != nullptr) {
        if ((*value)->size() != 1 || !(*value)->is_float) {
          return n.Invalid("constant_value must be one float");
        }
        a.value = (*value)->floats[0];
      }
    }
    if (n.num_inputs() > 3) {
      absl::StatusOr<const OnnxConstant*> c = n.ConstantInput(3);
      if (!c.ok()) return n.Unsupported("axes (input 3) must be a constant");
      if (*c != nullptr) {
        if ((*c)->is_float) return n.Invalid("axes must be an integer tensor");
        axes = (*c)->ints;
      }
    }
  }
  RECQ_ASSIGN_OR_RETURN(mode, n.String("mode", "constant"));
  if (mode == "constant") {
    a.mode = PadMode::kConstant;
  } else if (mode == "reflect") {
    a.mode = PadMode::kReflect;
  } else if (mode == "edge") {
    a.mode = PadMode::kEdge;
  } else if (mode == "wrap" && n.opset() >= 19) {
    a.mode = PadMode::kWrap;
  } else {
    return n.Invalid(absl::StrCat("mode '", mode, "' is not a Pad mode of opset ", n.opset()));
  }
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  const int64_t rank = static_cast<int64_t>(n.desc(x).shape.size());
  if (!axes.empty()) {
    // Pads are given for `axes` only: spread them over every axis.
    if (a.pads.size() != 2 * axes.size()) {
      return n.Invalid(absl::StrCat("pads has ", a.pads.size(), " entries for ", axes.size(),
                                    " axes; expected 2 per axis"));
    }
    std::vector<int64_t> full(2 * rank, 0);
    for (size_t k = 0; k < axes.size(); ++k) {
      int64_t axis = axes[k] < 0 ? axes[k] + rank : axes[k];
      if (axis < 0 || axis >= rank) {
        return n.Invalid(absl::StrCat("axis ", axes[k], " is out of range for rank ", rank));
      }
      full[axis] = a.pads[k];
      full[rank + axis] = a.pads[axes.size() + k];
    }
    a.pads = std::move(full);
  }
  // No padding at all (Swin pads its maps to a multiple of the window, by
  // zero at 224x224): an Identity, which the optimizer removes.
  if (std::all_of(a.pads.begin(), a.pads.end(), [](int64_t p) { return p == 0; })) {
    return n.Emit(OpType::kIdentity, {x}, {});
  }
  return n.Emit(kPad, {x}, std::move(a));
}

absl::Status Lower(LoweringContext& ctx, const Node& node) {
  const PadAttrs& a = AttrsOr<PadAttrs>(node);
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const Shape& y = ShapeOf(ctx, node.outputs[0]);
  if (x.size() > 8) return Unsupported(node, "rank above 8");
  const int64_t total = Product(y, 0, y.size());
  if (total >= (int64_t{1} << 31)) return Unsupported(node, "2^31 or more output elements");
  Shape begin(a.pads.begin(), a.pads.begin() + x.size());
  Dispatch& d = ctx.Emit(MakeDispatch(ctx, "pad.cl", "pad", {size_t(total)}));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.outputs[0])};
  d.args.push_back(DispatchArg::Scalar(Pad8(y, 1)));
  d.args.push_back(DispatchArg::Scalar(Pad8(x, 1)));
  d.args.push_back(DispatchArg::Scalar(Pad8(begin, 0)));
  d.args.push_back(DispatchArg::Scalar(static_cast<cl_int>(a.mode)));
  d.args.push_back(DispatchArg::Scalar(a.value));
  return absl::OkStatus();
}

}  // namespace

RECQ_REGISTER_OPS(Pad) {
  OpDef def;
  def.type = kPad;
  def.onnx = {{"", "Pad", 2, 10, Import}, {"", "Pad", 11, 17, Import}, {"", "Pad", 18, 21, Import}};
  def.infer = Infer;
  def.variants = {{"pad", nullptr, Lower}};
  return table.Add(std::move(def));
}

}  // namespace recq::internal
