// AffineConcat: a Concat along the channels (axis 1) followed by a
// per-channel affine map and an activation, y = act(concat(x...) * scale[c]
// + shift[c]), made by the affine_concat pattern
// (engine/patterns/affine_concat.cc) from a Concat read only by an inference
// BatchNorm: DenseNet's layers concatenate every earlier feature map and
// normalize the result. Inputs: x_0 ... x_{n-1}, then scale [C] and shift
// [C] (constants). One dispatch per eight inputs (concat.cl's
// concat_affine_chunks8) where the exported form adds a BatchNorm dispatch.
#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

const OpType kOp("AffineConcat");

absl::StatusOr<TensorDesc> Infer(const OpAttrs&, InferInputs in) {
  if (in.size() < 3) return Bad(kOp, "needs at least one input, a scale and a shift");
  RECQ_RETURN_IF_ERROR(CheckInputCount(kOp, in, in.size(), in.size()));
  const size_t n = in.size() - 2;
  Shape out = in[0]->shape;
  if (out.size() < 2) return Bad(kOp, absl::StrCat("input 0 ", S(out), " has no channel axis"));
  for (size_t i = 1; i < n; ++i) {
    const Shape& s = in[i]->shape;
    bool ok = s.size() == out.size();
    for (size_t d = 0; ok && d < s.size(); ++d) ok = d == 1 || s[d] == out[d];
    if (!ok) {
      return Bad(kOp, absl::StrCat("input ", i, " ", S(s), " does not match ", S(in[0]->shape),
                                   " outside axis 1"));
    }
    out[1] += s[1];
  }
  for (size_t i = n; i < in.size(); ++i) {
    if (in[i]->shape != Shape{out[1]}) {
      return Bad(kOp, absl::StrCat(i == n ? "scale " : "shift ", S(in[i]->shape), ", expected [",
                                   out[1], "]"));
    }
  }
  return TensorDesc{out};
}

absl::Status Lower(LoweringContext& ctx, const Node& node) {
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  const size_t n = node.inputs.size() - 2;
  const int64_t outer = out[0];
  const int64_t plane = Product(out, 2, out.size());
  int64_t offset = 0;
  for (size_t first = 0; first < n; first += 8) {
    const size_t count = std::min<size_t>(8, n - first);
    cl_int8 widths;
    int64_t total = 0;
    int64_t chunks = 0;  // 16 elements per work-item
    std::vector<DispatchArg> args = {ctx.Arg(node.outputs[0])};
    for (size_t k = 0; k < 8; ++k) {
      const int64_t w = k < count ? ShapeOf(ctx, node.inputs[first + k])[1] * plane : 0;
      widths.s[k] = static_cast<cl_int>(w);
      total += w;
      chunks += (w + 15) / 16;
      args.push_back(k < count ? ctx.Arg(node.inputs[first + k]) : DispatchArg::Null());
    }
    Dispatch& d = ctx.Emit(
        MakeDispatch(ctx, "concat.cl", "concat_affine_chunks8", {size_t(chunks), size_t(outer)}));
    d.args = std::move(args);
    d.args.push_back(DispatchArg::Scalar(widths));
    AddInts(d, {out[1] * plane, offset});
    d.args.push_back(ctx.Arg(node.inputs[n]));
    d.args.push_back(ctx.Arg(node.inputs[n + 1]));
    AddInts(d, {plane});
    AddFusedActivation(ctx, d, node);
    offset += total;
  }
  return absl::OkStatus();
}

}  // namespace

RECQ_REGISTER_OPS(AffineConcat) {
  OpDef def;
  def.type = kOp;
  def.infer = Infer;
  def.variants = {{"concat_affine", nullptr, Lower}};
  def.absorbs_activation = true;
  return table.Add(std::move(def));
}

}  // namespace recq::internal
