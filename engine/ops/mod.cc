// Mod (ONNX opset 10 on): y = a mod b element-wise with numpy broadcasting,
// for float, half and every integer type. fmod = 1 is C's fmod (the result
// has the dividend's sign); fmod = 0 is Python's % (the result has the
// divisor's sign), for floats too. An integer divisor of 0 gives 0 on the
// device (ONNX leaves it undefined) and is InvalidArgument when folded.
// On constants (shape arithmetic such as Swin's padding to a multiple of
// the window) Mod folds at import like Add and Mul.
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/constant_eval.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/ops/typed.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

// The ONNX definition on doubles (the folding and the kernels agree).
double ModOf(double a, double b, bool fmod, bool integral) {
  if (integral && b == 0) return 0;
  double r = std::fmod(a, b);
  if (!fmod && r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

absl::Status Import(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"fmod"}));
  RECQ_ASSIGN_OR_RETURN(int64_t fmod, n.Int("fmod", 0));
  if (fmod != 0 && fmod != 1) return n.Invalid(absl::StrCat("fmod is ", fmod, "; expected 0 or 1"));
  std::vector<const OnnxConstant*> c;
  if (AllConstantInputs(n, &c) && c.size() == 2 && c[0] && c[1]) {
    if (c[0]->is_float != c[1]->is_float) {
      return n.Invalid("the inputs have different element types");
    }
    const bool ints = !c[0]->is_float;
    if (ints) {
      for (int64_t v : c[1]->ints) {
        if (v == 0) return n.Invalid("integer modulo by zero");
      }
    }
    absl::StatusOr<OnnxConstant> out = BroadcastConstants(
        n, c, ints,
        [fmod, ints](absl::Span<const double> v) { return ModOf(v[0], v[1], fmod != 0, ints); });
    if (!out.ok()) return out.status();
    out->dtype = c[0]->type();
    return n.DefineConstant(*std::move(out));
  }
  RECQ_ASSIGN_OR_RETURN(ValueId a, n.Input(0));
  RECQ_ASSIGN_OR_RETURN(ValueId b, n.Input(1));
  return n.Emit(kMod, {a, b}, ModAttrs{fmod != 0});
}

absl::StatusOr<TensorDesc> Infer(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kMod, in, 2, 2));
  RECQ_RETURN_IF_ERROR(AttrsOf<ModAttrs>(kMod, attrs).status());
  if (in[0]->dtype != in[1]->dtype || in[0]->dtype == DataType::kBool) {
    return Bad(kMod, absl::StrCat("inputs are ", in[0]->ToString(), " and ", in[1]->ToString(),
                                  "; expected one numeric element type"));
  }
  RECQ_ASSIGN_OR_RETURN(Shape out, Broadcast(kMod, in[0]->shape, in[1]->shape));
  return TensorDesc{std::move(out), in[0]->dtype};
}

absl::Status Lower(LoweringContext& ctx, const Node& node) {
  const TensorDesc& y = ctx.graph().value(node.outputs[0]).desc;
  if (y.shape.size() > 8) return Unsupported(node, "Mod beyond rank 8");
  const ModAttrs& a = AttrsOr<ModAttrs>(node);
  Dispatch& d = ctx.Emit(MakeDispatch(
      ctx, "mod.cl", "mod_kernel", {size_t(y.NumElements())},
      {absl::StrCat("-DKIND=", TypedKind(y.dtype)), absl::StrCat("-DT=", TypedStorage(y.dtype)),
       absl::StrCat("-DFMOD=", a.fmod ? 1 : 0)}));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]), ctx.Arg(node.outputs[0])};
  d.args.push_back(DispatchArg::Scalar(Pad8(y.shape, 1)));
  for (int i = 0; i < 2; ++i) {
    d.args.push_back(DispatchArg::Scalar(BroadcastStrides(ShapeOf(ctx, node.inputs[i]), y.shape)));
  }
  return absl::OkStatus();
}

}  // namespace

RECQ_REGISTER_OPS(Mod) {
  OpDef def;
  def.type = kMod;
  def.typed = true;
  def.onnx = {{"", "Mod", 10, kOnnxOpsetMax, Import}};
  def.infer = Infer;
  def.variants = {{"mod", nullptr, Lower}};
  return table.Add(std::move(def));
}

}  // namespace recq::internal
