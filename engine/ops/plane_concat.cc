// PlaneConcat (engine/ops/plane_concat.h) in one dispatch of
// plane_concat.cl, where the exported form takes a Concat and a Gather copy
// per gathered input.
#include <array>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/ops/plane_concat.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

const OpType kOp("PlaneConcat");

absl::StatusOr<TensorDesc> Infer(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kOp, in, 1, kPlaneConcatMaxSources));
  RECQ_ASSIGN_OR_RETURN(const PlaneConcatAttrs* a, AttrsOf<PlaneConcatAttrs>(kOp, attrs));
  Shape out = in[0]->shape;
  if (a->axis < 0 || a->axis >= static_cast<int64_t>(out.size())) {
    return Bad(kOp, absl::StrCat("axis ", a->axis, " outside [0, ", out.size(), ")"));
  }
  for (size_t i = 1; i < in.size(); ++i) {
    const Shape& s = in[i]->shape;
    bool ok = s.size() == out.size();
    for (size_t d = 0; ok && d < s.size(); ++d) ok = int64_t(d) == a->axis || s[d] == out[d];
    if (!ok) {
      return Bad(kOp, absl::StrCat("input ", i, " ", S(s), " does not match ", S(out),
                                   " outside axis ", a->axis));
    }
  }
  if (a->source.empty() || a->source.size() != a->plane.size()) {
    return Bad(kOp, "needs one (source, plane) pair per output slice");
  }
  for (size_t k = 0; k < a->source.size(); ++k) {
    const int32_t s = a->source[k];
    if (s < 0 || size_t(s) >= in.size() || a->plane[k] < 0 ||
        a->plane[k] >= in[size_t(s)]->shape[size_t(a->axis)]) {
      return Bad(kOp, absl::StrCat("slice ", k, " reads plane ", a->plane[k], " of input ", s,
                                   ", which does not exist"));
    }
  }
  out[size_t(a->axis)] = static_cast<int64_t>(a->source.size());
  return TensorDesc{out, in[0]->dtype};
}

absl::Status Lower(LoweringContext& ctx, const Node& node) {
  const auto& a = AttrsOr<PlaneConcatAttrs>(node);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  const int64_t outer = Product(out, 0, a.axis);
  const int64_t inner = Product(out, a.axis + 1, out.size());
  const int64_t count = out[a.axis];
  std::vector<int32_t> table;
  table.reserve(2 * a.source.size());
  for (size_t k = 0; k < a.source.size(); ++k) {
    table.push_back(a.source[k]);
    table.push_back(a.plane[k]);
  }
  cl_int8 dims{};
  std::vector<DispatchArg> args = {ctx.Arg(node.outputs[0])};
  for (size_t s = 0; s < kPlaneConcatMaxSources; ++s) {
    const bool used = s < node.inputs.size();
    dims.s[s] = used ? static_cast<cl_int>(ShapeOf(ctx, node.inputs[s])[a.axis]) : 0;
    args.push_back(used ? ctx.Arg(node.inputs[s]) : DispatchArg::Null());
  }
  Dispatch d = MakeDispatch(ctx, "plane_concat.cl", "plane_concat", {});
  const std::array<size_t, 3> global = {CeilDiv(inner, 16), size_t(count), size_t(outer)};
  SetRange(d, global, WorkGroupFor(global, 64));
  d.args = std::move(args);
  d.args.push_back(ctx.AddConstant(std::make_shared<const HostData>(std::move(table))));
  d.args.push_back(DispatchArg::Scalar(dims));
  AddInts(d, {count, inner, outer});
  ctx.Emit(std::move(d));
  return absl::OkStatus();
}

}  // namespace

RECQ_REGISTER_OPS(PlaneConcat) {
  OpDef def;
  def.type = kOp;
  def.infer = Infer;
  def.variants = {{"plane_concat", nullptr, Lower}};
  return table.Add(std::move(def));
}

}  // namespace recq::internal
