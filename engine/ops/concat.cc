// Concat (ConcatAttrs) along one axis; every other dimension must match.
// One copy dispatch per eight inputs.
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/constant_eval.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

constexpr OpType kOp = OpType::kConcat;

absl::StatusOr<TensorDesc> Infer(const OpAttrs& attrs, InferInputs in) {
  if (in.empty()) return Bad(kOp, "needs at least one input");
  RECQ_RETURN_IF_ERROR(CheckInputCount(kOp, in, in.size(), in.size()));
  RECQ_ASSIGN_OR_RETURN(const ConcatAttrs* a, AttrsOf<ConcatAttrs>(kOp, attrs));
  Shape out = in[0]->shape;
  RECQ_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(kOp, a->axis, out.size(), false));
  for (size_t i = 1; i < in.size(); ++i) {
    const Shape& s = in[i]->shape;
    bool ok = s.size() == out.size();
    for (size_t d = 0; ok && d < s.size(); ++d) {
      ok = d == static_cast<size_t>(axis) || s[d] == out[d];
    }
    if (!ok) {
      return Bad(kOp, absl::StrCat("input ", i, " ", S(s), " does not match ", S(in[0]->shape),
                                   " outside axis ", axis));
    }
    out[axis] += s[axis];
  }
  return TensorDesc{out};
}

// Concat of int64 constants (shape vectors), folded at import.
absl::Status FoldConcat(OnnxNodeContext& n, const std::vector<const OnnxConstant*>& in,
                        int64_t axis) {
  const int64_t rank = static_cast<int64_t>(in[0]->dims.size());
  if (axis < -rank || axis >= rank) {
    return n.Invalid(absl::StrCat("axis ", axis, " is out of range for rank ", rank));
  }
  if (axis < 0) axis += rank;
  OnnxConstant out;
  out.is_float = false;
  out.dims = in[0]->dims;
  out.dims[axis] = 0;
  for (const OnnxConstant* c : in) {
    if (c->dims.size() != in[0]->dims.size()) return n.Invalid("inputs of different ranks");
    for (int64_t d = 0; d < rank; ++d) {
      if (d != axis && c->dims[d] != in[0]->dims[d]) {
        return n.Invalid("inputs differ outside the concatenation axis");
      }
    }
    out.dims[axis] += c->dims[axis];
  }
  RECQ_RETURN_IF_ERROR(n.ReserveFolded(Numel(out.dims)));
  // An empty result (a zero dim) is not looped over: its other dims may be
  // up to 2^40.
  const int64_t outer =
      Numel(out.dims) == 0 ? 0 : Numel({out.dims.begin(), out.dims.begin() + axis});
  for (int64_t o = 0; o < outer; ++o) {
    for (const OnnxConstant* c : in) {
      const int64_t block = Numel({c->dims.begin() + axis, c->dims.end()});
      for (int64_t i = 0; i < block; ++i) out.ints.push_back(ElementAsInt(*c, o * block + i));
    }
  }
  return n.DefineConstant(std::move(out));
}

absl::Status Import(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"axis"}));
  if (!n.HasAttr("axis")) return n.Invalid("attribute 'axis' is required");
  RECQ_ASSIGN_OR_RETURN(int64_t axis, n.Int("axis", 0));
  std::vector<const OnnxConstant*> constants;
  if (AllConstantInputs(n, &constants)) {
    bool any_int = false, all = true;
    for (const OnnxConstant* c : constants) {
      all &= c != nullptr;
      any_int |= c != nullptr && !c->is_float;
    }
    if (all && any_int) return FoldConcat(n, constants, axis);
  }
  std::vector<ValueId> in;
  for (int i = 0; i < n.num_inputs(); ++i) {
    RECQ_ASSIGN_OR_RETURN(ValueId id, n.Input(i));
    in.push_back(id);
  }
  return n.Emit(kOp, std::move(in), ConcatAttrs{axis});
}

absl::Status Lower(LoweringContext& ctx, const Node& node) {
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  const int64_t raw_axis = AttrsOr<ConcatAttrs>(node).axis;
  const int64_t axis = raw_axis < 0 ? raw_axis + static_cast<int64_t>(out.size()) : raw_axis;
  const int64_t outer = Product(out, 0, axis);
  const int64_t inner = Product(out, axis + 1, out.size());
  int64_t offset = 0;
  // Eight inputs per dispatch: a copy per input cost DenseNet-121 597
  // dispatches, about half of its time on the H100.
  for (size_t first = 0; first < node.inputs.size(); first += 8) {
    const size_t count = std::min<size_t>(8, node.inputs.size() - first);
    cl_int8 widths;
    int64_t total = 0;
    int64_t chunks = 0;  // concat_chunks8 copies 16 elements per work-item
    std::vector<DispatchArg> args = {ctx.Arg(node.outputs[0])};
    for (size_t k = 0; k < 8; ++k) {
      const int64_t w = k < count ? ShapeOf(ctx, node.inputs[first + k])[axis] * inner : 0;
      widths.s[k] = static_cast<cl_int>(w);
      total += w;
      chunks += (w + 15) / 16;
      args.push_back(k < count ? ctx.Arg(node.inputs[first + k]) : DispatchArg::Null());
    }
    Dispatch& d =
        ctx.Emit(MakeDispatch(ctx, "concat.cl", "concat_chunks8", {size_t(chunks), size_t(outer)}));
    d.args = std::move(args);
    d.args.push_back(DispatchArg::Scalar(widths));
    AddInts(d, {out[axis] * inner, offset});
    offset += total;
  }
  return absl::OkStatus();
}

}  // namespace

RECQ_REGISTER_OPS(Concat) {
  OpDef def;
  def.type = kOp;
  def.onnx = {{"", "Concat", 1, kOnnxOpsetMax, Import}};
  def.infer = Infer;
  def.export_onnx = [](const Node& node, const Graph&, OnnxNodeWriter& out) {
    out.SetOpType("Concat");
    out.SetInt("axis", AttrsOr<ConcatAttrs>(node).axis);
    return absl::OkStatus();
  };
  def.variants = {{"concat_copy", nullptr, Lower}};
  return table.Add(std::move(def));
}

}  // namespace recq::internal
