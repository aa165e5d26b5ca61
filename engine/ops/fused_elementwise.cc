// FusedElementwise (fused_elementwise.h): one generated kernel for a chain
// of element-wise ops. The op has no ONNX form; FuseElementwise makes it.
#include "engine/ops/fused_elementwise.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

// How the kernel reads one input (RECQ_INk in fused_elementwise.cl).
struct InputRead {
  int mode = 0;  // 0 same shape, 1 scalar, 2 [mid] over [outer, mid, inner], 3 general
  int64_t mid = 1, inner = 1;
};

InputRead ReadOf(const Shape& in, const Shape& out) {
  InputRead r;
  if (in == out) return r;
  if (Product(in, 0, in.size()) == 1) {
    r.mode = 1;
    return r;
  }
  // The dimensions of `in` other than 1 are one contiguous run equal to
  // the output's there.
  const size_t pad = out.size() - in.size();
  size_t first = out.size(), last = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == 1) continue;
    if (in[i] != out[pad + i]) {
      r.mode = 3;
      return r;
    }
    first = std::min(first, pad + i);
    last = pad + i + 1;
  }
  for (size_t i = first; i < last; ++i) {
    if (in[i - pad] == 1 && out[i] != 1) {
      r.mode = 3;
      return r;
    }
  }
  r.mode = 2;
  r.mid = Product(out, first, last);
  r.inner = Product(out, last, out.size());
  return r;
}

// ReadOfInput: input k's read, through its Transpose if it has one (a
// general strided read).
InputRead ReadOfInput(const FusedElementwiseAttrs& a, size_t k, const Shape& in, const Shape& out) {
  if (PermOfInput(a, k).empty()) return ReadOf(in, out);
  InputRead r;
  r.mode = 3;
  return r;
}

// TransposedStrides: the element strides over the output's dimensions
// (BroadcastStrides' layout) of `in` read through `perm`.
cl_int8 TransposedStrides(const Shape& in, const std::vector<int64_t>& perm, const Shape& out) {
  return BroadcastStrides(Permuted(in, perm), Permuted(RowMajor(in), perm), out);
}

// Whether every input can be read four elements at a time (float4).
bool Vec4Fits(const Node& node, const LoweringContext& ctx) {
  const auto& a = AttrsOr<FusedElementwiseAttrs>(node);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  if (Product(out, 0, out.size()) % 4 != 0) return false;
  for (size_t k = 0; k < node.inputs.size(); ++k) {
    const InputRead r = ReadOfInput(a, k, ShapeOf(ctx, node.inputs[k]), out);
    if (r.mode == 3 || (r.mode == 2 && r.inner % 4 != 0)) return false;
  }
  return true;
}

absl::StatusOr<TensorDesc> Infer(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kFusedElementwise, in, 1, kFusedElementwiseMaxInputs));
  RECQ_ASSIGN_OR_RETURN(const FusedElementwiseAttrs* a,
                        AttrsOf<FusedElementwiseAttrs>(kFusedElementwise, attrs));
  if (a->body.empty() || a->result.empty()) return Bad(kFusedElementwise, "has no expression");
  if (a->out_shape.size() > 8) {
    return Bad(kFusedElementwise, absl::StrCat("output of rank ", a->out_shape.size(),
                                               "; broadcasting goes to rank 8"));
  }
  if (a->input_perms.size() > in.size()) {
    return Bad(kFusedElementwise, absl::StrCat(a->input_perms.size(), " input permutations for ",
                                               in.size(), " inputs"));
  }
  for (size_t k = 0; k < in.size(); ++k) {
    const std::vector<int64_t>& perm = PermOfInput(*a, k);
    if (!perm.empty()) {
      std::vector<int64_t> sorted = perm;
      std::sort(sorted.begin(), sorted.end());
      for (size_t i = 0; i < sorted.size(); ++i) {
        if (sorted.size() != in[k]->shape.size() || sorted[i] != static_cast<int64_t>(i)) {
          return Bad(kFusedElementwise,
                     absl::StrCat("input ", k, "'s permutation ", S(perm),
                                  " is not one of its rank, ", in[k]->shape.size()));
        }
      }
    }
    const Shape shape = Permuted(in[k]->shape, perm);
    RECQ_ASSIGN_OR_RETURN(Shape s, Broadcast(kFusedElementwise, shape, a->out_shape));
    if (s != a->out_shape) {
      return Bad(kFusedElementwise,
                 absl::StrCat("input of shape ", S(shape), " does not broadcast to the output's ",
                              S(a->out_shape)));
    }
  }
  TensorDesc out = *in[0];
  out.shape = a->out_shape;
  return out;
}

// Lower emits the kernel reading `vec` elements per work-item (4: float4
// loads and stores; Vec4Fits).
absl::Status Lower(LoweringContext& ctx, const Node& node, int64_t vec) {
  const auto& a = AttrsOr<FusedElementwiseAttrs>(node);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  const int64_t n = Product(out, 0, out.size());
  std::vector<std::string> options = {absl::StrCat("-DRECQ_FUSED_BODY=", a.body),
                                      absl::StrCat("-DRECQ_FUSED_OUT=", a.result),
                                      absl::StrCat("-DRECQ_FUSED_VEC=", vec)};
  std::vector<InputRead> reads;
  for (size_t k = 0; k < node.inputs.size(); ++k) {
    reads.push_back(ReadOfInput(a, k, ShapeOf(ctx, node.inputs[k]), out));
    options.push_back(absl::StrCat("-DRECQ_IN", k, "=", reads.back().mode));
  }
  Dispatch& d = ctx.Emit(MakeDispatch(ctx, "fused_elementwise.cl", "fused_elementwise",
                                      {size_t(n / vec)}, std::move(options)));
  d.args = {ctx.Arg(node.outputs[0]), DispatchArg::Scalar(Pad8(out, 1))};
  for (size_t k = 0; k < node.inputs.size(); ++k) {
    d.args.push_back(ctx.Arg(node.inputs[k]));
    AddInts(d, {reads[k].mid, reads[k].inner});
    const std::vector<int64_t>& perm = PermOfInput(a, k);
    const Shape& in = ShapeOf(ctx, node.inputs[k]);
    d.args.push_back(DispatchArg::Scalar(perm.empty() ? BroadcastStrides(in, out)
                                                      : TransposedStrides(in, perm, out)));
  }
  return absl::OkStatus();
}

}  // namespace

RECQ_REGISTER_OPS(FusedElementwise) {
  OpDef def;
  def.type = kFusedElementwise;
  def.infer = Infer;
  // Four elements per work-item where every input allows it (the tuner
  // times both: a key of two candidates).
  def.variants = {{"fused_elementwise_vec4", Vec4Fits,
                   [](LoweringContext& ctx, const Node& node) { return Lower(ctx, node, 4); }},
                  {"fused_elementwise", nullptr,
                   [](LoweringContext& ctx, const Node& node) { return Lower(ctx, node, 1); }}};
  def.tuning_attrs = [](const Node& node) {
    const auto& a = AttrsOr<FusedElementwiseAttrs>(node);
    std::string key = absl::StrCat("body=", a.body, " out=", a.result);
    for (size_t k = 0; k < a.input_perms.size(); ++k) {
      if (!a.input_perms[k].empty()) absl::StrAppend(&key, " perm", k, "=", S(a.input_perms[k]));
    }
    return key;
  };
  return table.Add(std::move(def));
}

}  // namespace recq::internal
