// LRN (local response normalization across channels, AlexNet and
// GoogLeNet v1) imported as the ops that compute it:
//   y = x / (bias + alpha / size * sum of x^2 over `size` neighbouring
//   channels)^beta,
// the channel window sum as an AveragePool (count_include_pad) of x^2 over
// a [N, 1, C, spatial] view with a (size, 1) kernel padded by
// floor((size - 1) / 2) channels before and ceil((size - 1) / 2) after, as
// ONNX defines the window. Float tensors of rank 3 or more.
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/onnx_emitter.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

absl::Status Import(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"alpha", "beta", "bias", "size"}));
  RECQ_ASSIGN_OR_RETURN(float alpha, n.Float("alpha", 1e-4f));
  RECQ_ASSIGN_OR_RETURN(float beta, n.Float("beta", 0.75f));
  RECQ_ASSIGN_OR_RETURN(float bias, n.Float("bias", 1.0f));
  RECQ_ASSIGN_OR_RETURN(int64_t size, n.Int("size", 0));
  if (size < 1) return n.Invalid(absl::StrCat("size is ", size, "; expected 1 or more"));
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  const TensorDesc desc = n.desc(x);
  if (desc.shape.size() < 3) {
    return n.Invalid(absl::StrCat("input is ", desc.ToString(), "; expected [N, C, D1, ...]"));
  }
  OnnxNodeEmitter* e = EmitterOf(n);
  if (e == nullptr) return n.Unsupported("LRN needs the importer's emitter");
  auto scalar = [&](float v, absl::string_view suffix) -> absl::StatusOr<ValueId> {
    OnnxConstant c;
    c.floats = {v};
    c.dtype = desc.dtype;
    return e->AddConstantValue(std::move(c), suffix);
  };
  int64_t spatial = 1;
  for (size_t i = 2; i < desc.shape.size(); ++i) spatial *= desc.shape[i];
  RECQ_ASSIGN_OR_RETURN(ValueId sq, e->EmitValue(OpType::kMul, {x, x}, {}, "square"));
  RECQ_ASSIGN_OR_RETURN(
      ValueId view,
      e->EmitValue(OpType::kReshape, {sq}, ReshapeAttrs{{desc.shape[0], 1, desc.shape[1], spatial}},
                   "channels"));
  PoolAttrs pool;
  pool.kernel = {size, 1};
  pool.pads = {(size - 1) / 2, 0, size / 2, 0};
  pool.count_include_pad = true;
  RECQ_ASSIGN_OR_RETURN(ValueId mean, e->EmitValue(OpType::kAveragePool, {view}, pool, "window"));
  RECQ_ASSIGN_OR_RETURN(ValueId back,
                        e->EmitValue(OpType::kReshape, {mean}, ReshapeAttrs{desc.shape}, "mean"));
  RECQ_ASSIGN_OR_RETURN(ValueId a, scalar(alpha, "alpha"));
  RECQ_ASSIGN_OR_RETURN(ValueId scaled, e->EmitValue(OpType::kMul, {back, a}, {}, "scaled"));
  RECQ_ASSIGN_OR_RETURN(ValueId b, scalar(bias, "bias"));
  RECQ_ASSIGN_OR_RETURN(ValueId base, e->EmitValue(OpType::kAdd, {scaled, b}, {}, "base"));
  RECQ_ASSIGN_OR_RETURN(ValueId p, scalar(beta, "beta"));
  RECQ_ASSIGN_OR_RETURN(ValueId denom, e->EmitValue(OpType("Pow"), {base, p}, {}, "denominator"));
  return n.Emit(OpType::kDiv, {x, denom}, {});
}

}  // namespace

RECQ_REGISTER_OPS(Lrn) { return table.AddOnnx({"", "LRN", 1, kOnnxOpsetMax, Import}); }

}  // namespace recq::internal
