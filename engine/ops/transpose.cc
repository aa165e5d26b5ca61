// Transpose (TransposeAttrs): y.shape[i] = x.shape[perm[i]], rank <= 8; an
// empty perm reverses the dimensions.
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/ops/strided_copy.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

constexpr OpType kOp = OpType::kTranspose;

absl::StatusOr<TensorDesc> Infer(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kOp, in, 1, 1));
  RECQ_ASSIGN_OR_RETURN(const TransposeAttrs* a, AttrsOf<TransposeAttrs>(kOp, attrs));
  const Shape& x = in[0]->shape;
  const std::vector<int64_t> perm = TransposePerm(*a, x.size());
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted.size() != x.size() || sorted[i] != static_cast<int64_t>(i)) {
      return Bad(kOp, absl::StrCat("perm ", S(perm), " is not a permutation of rank ", x.size()));
    }
  }
  Shape out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = x[perm[i]];
  return TensorDesc{out};
}

absl::Status Import(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"perm"}));
  RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> perm, n.Ints("perm"));
  TransposeAttrs attrs{std::move(perm)};
  absl::StatusOr<const OnnxConstant*> c = n.ConstantInput(0);
  if (c.ok() && *c != nullptr) {
    // A constant of any element type (Swin's mask indices) folds.
    const OnnxConstant& data = **c;
    const TensorDesc in{data.dims, DataType::kFloat32};
    const TensorDesc* inputs[] = {&in};
    absl::StatusOr<TensorDesc> out = Infer(OpAttrs(attrs), inputs);
    if (!out.ok()) return n.Invalid(out.status().message());
    const std::vector<int64_t> p = TransposePerm(attrs, data.dims.size());
    const size_t rank = data.dims.size();
    std::vector<int64_t> strides(rank, 1);
    for (size_t i = rank; i-- > 1;) strides[i - 1] = strides[i] * data.dims[i];
    RECQ_RETURN_IF_ERROR(n.ReserveFolded(data.size()));
    OnnxConstant folded = data;
    folded.dims = out->shape;
    std::vector<int64_t> idx(rank, 0);
    for (int64_t flat = 0; flat < data.size(); ++flat) {
      int64_t from = 0;
      for (size_t i = 0; i < rank; ++i) from += idx[i] * strides[p[i]];
      if (data.is_float) {
        folded.floats[flat] = data.floats[from];
      } else {
        folded.ints[flat] = data.ints[from];
      }
      for (size_t i = rank; i-- > 0;) {
        if (++idx[i] < folded.dims[i]) break;
        idx[i] = 0;
      }
    }
    return n.DefineConstant(std::move(folded));
  }
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  return n.Emit(kOp, {x}, std::move(attrs));
}

// A strided gather: output element i reads x at the permuted strides (dimensions that stay
// contiguous merged).
absl::Status Lower(LoweringContext& ctx, const Node& node) {
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  if (x.size() > 8) return Unsupported(node, "rank above 8");
  const std::vector<int64_t> perm = TransposePerm(AttrsOr<TransposeAttrs>(node), x.size());
  const Shape in_strides = RowMajor(x);
  Shape permuted(x.size());
  for (size_t i = 0; i < x.size(); ++i) permuted[i] = in_strides[perm[i]];
  return EmitStridedCopy(ctx, node, 0, out, permuted, out);
}

}  // namespace

RECQ_REGISTER_OPS(Transpose) {
  OpDef def;
  def.type = kOp;
  def.onnx = {{"", "Transpose", 1, kOnnxOpsetMax, Import}};
  def.infer = Infer;
  def.export_onnx = [](const Node& node, const Graph&, OnnxNodeWriter& out) {
    out.SetOpType("Transpose");
    const auto& a = AttrsOr<TransposeAttrs>(node);
    if (!a.perm.empty()) out.SetInts("perm", a.perm);
    return absl::OkStatus();
  };
  def.variants = {{"gather_strided", nullptr, Lower}};
  return table.Add(std::move(def));
}

}  // namespace recq::internal
