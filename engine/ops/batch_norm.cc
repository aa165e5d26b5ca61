// BatchNorm (inference): y = (x - mean) / sqrt(var + epsilon) * scale + bias
// per channel of dimension 1; ONNX BatchNormalization. Folded into the conv
// or Gemm before it when its parameters are constants (FoldBatchNorm).
// training_mode=1 (batch statistics) folds at import on constant inputs.
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

constexpr OpType kOp = OpType::kBatchNorm;

absl::StatusOr<TensorDesc> Infer(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kOp, in, 5, 5));
  RECQ_RETURN_IF_ERROR(AttrsOf<BatchNormAttrs>(kOp, attrs).status());
  const Shape& x = in[0]->shape;
  if (x.size() < 2) return Bad(kOp, absl::StrCat("input must have rank >= 2, got ", S(x)));
  for (int i = 1; i < 5; ++i) {
    if (in[i]->shape != Shape{x[1]}) {
      return Bad(kOp,
                 absl::StrCat("parameter ", i, " must be [", x[1], "], got ", S(in[i]->shape)));
    }
  }
  return *in[0];
}

// training_mode=1 normalizes with the batch's own statistics. On constant
// inputs (weight standardization: a BatchNormalization of a conv's
// weights) it folds at import; on computed data it would need a reduction
// per run and is not supported.
absl::Status FoldTrainingMode(OnnxNodeContext& n) {
  for (int i = 1; i < n.num_outputs(); ++i) {
    if (n.OutputUsed(i)) {
      return n.Unsupported(absl::StrCat("training_mode=1 with output ", i, " ('", n.output_name(i),
                                        "', updated running statistics) read is not supported"));
    }
  }
  // Inputs 3 and 4 (the running mean and variance) feed only outputs 1
  // and 2, which are unused: they may be computed values.
  std::vector<const OnnxConstant*> c(3, nullptr);
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<const OnnxConstant*> ci = n.ConstantInput(i);
    if (!ci.ok() || *ci == nullptr || !(*ci)->is_float) {
      return n.Unsupported(absl::StrCat(
          "training_mode=1 (normalizing with batch statistics) is supported only when x, scale "
          "and B are float constants known when the model is loaded; input ",
          i, " is not"));
    }
    c[i] = *ci;
  }
  RECQ_ASSIGN_OR_RETURN(float eps, n.Float("epsilon", 1e-5f));
  const OnnxConstant& x = *c[0];
  if (x.dims.size() < 2) return n.Invalid("input must have rank >= 2");
  const int64_t channels = x.dims[1];
  int64_t inner = 1;
  for (size_t d = 2; d < x.dims.size(); ++d) inner *= x.dims[d];
  const int64_t batch = x.dims[0];
  for (int i = 1; i < 3; ++i) {
    if (c[i]->size() != channels) {
      return n.Invalid(absl::StrCat("input ", i, " has ", c[i]->size(), " elements for ", channels,
                                    " channels"));
    }
  }
  OnnxConstant y = x;
  for (int64_t ch = 0; ch < channels; ++ch) {
    double sum = 0, sq = 0;
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t k = 0; k < inner; ++k) {
        const double v = x.floats[(b * channels + ch) * inner + k];
        sum += v;
        sq += v * v;
      }
    }
    const double count = static_cast<double>(batch * inner);
    const double mean = sum / count;
    const double var = std::max(0.0, sq / count - mean * mean);
    const double scale = c[1]->floats[ch] / std::sqrt(var + eps);
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t k = 0; k < inner; ++k) {
        float& v = y.floats[(b * channels + ch) * inner + k];
        v = static_cast<float>((v - mean) * scale + c[2]->floats[ch]);
      }
    }
  }
  return n.DefineConstant(std::move(y));
}

absl::Status Import(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(
      n.CheckAttrs({"epsilon", "momentum", "spatial", "training_mode", "is_test"}));
  RECQ_ASSIGN_OR_RETURN(int64_t training, n.Int("training_mode", 0));
  RECQ_ASSIGN_OR_RETURN(int64_t spatial, n.Int("spatial", 1));
  if (spatial != 1) return n.Unsupported("spatial=0 is not supported");
  if (training != 0) return FoldTrainingMode(n);
  for (int i = 1; i < n.num_outputs(); ++i) {
    if (!n.output_name(i).empty()) {
      return n.Unsupported(absl::StrCat("output ", i, " ('", n.output_name(i),
                                        "', training statistics) is not supported"));
    }
  }
  RECQ_ASSIGN_OR_RETURN(float eps, n.Float("epsilon", 1e-5f));
  std::vector<ValueId> in;
  for (int i = 0; i < 5; ++i) {
    RECQ_ASSIGN_OR_RETURN(ValueId id, n.Input(i));
    in.push_back(id);
  }
  return n.Emit(kOp, std::move(in), BatchNormAttrs{eps});
}

absl::Status Lower(LoweringContext& ctx, const Node& node) {
  const auto& a = AttrsOr<BatchNormAttrs>(node);
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const int64_t inner = Product(x, 2, x.size());
  Dispatch& d = ctx.Emit(MakeDispatch(ctx, "batchnorm.cl", "batchnorm_rows",
                                      {size_t((inner + 15) / 16), size_t(x[0] * x[1])}));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]), ctx.Arg(node.inputs[2]),
            ctx.Arg(node.inputs[3]), ctx.Arg(node.inputs[4]), ctx.Arg(node.outputs[0])};
  AddInts(d, {x[1], inner});
  d.args.push_back(DispatchArg::Scalar(a.epsilon));
  AddFusedActivation(ctx, d, node);
  return absl::OkStatus();
}

// The per-channel scale and shift, when every parameter is a constant.
std::optional<std::pair<std::vector<float>, std::vector<float>>> AsChannelAffine(
    const Node& node, const std::function<const std::vector<float>*(ValueId)>& constant) {
  const std::vector<float>* scale = constant(node.inputs[1]);
  const std::vector<float>* shift = constant(node.inputs[2]);
  const std::vector<float>* mean = constant(node.inputs[3]);
  const std::vector<float>* var = constant(node.inputs[4]);
  if (!scale || !shift || !mean || !var) return std::nullopt;
  const float eps = AttrsOr<BatchNormAttrs>(node).epsilon;
  const size_t channels = scale->size();
  std::vector<float> s(channels), t(channels);
  for (size_t c = 0; c < channels; ++c) {
    s[c] = (*scale)[c] / std::sqrt((*var)[c] + eps);
    t[c] = (*shift)[c] - (*mean)[c] * s[c];
  }
  return std::make_pair(std::move(s), std::move(t));
}

}  // namespace

RECQ_REGISTER_OPS(BatchNorm) {
  OpDef def;
  def.type = kOp;
  def.onnx = {{"", "BatchNormalization", 1, kOnnxOpsetMax, Import}};
  def.infer = Infer;
  def.export_onnx = [](const Node& node, const Graph&, OnnxNodeWriter& out) {
    out.SetOpType("BatchNormalization");
    out.SetFloat("epsilon", AttrsOr<BatchNormAttrs>(node).epsilon);
    return absl::OkStatus();
  };
  def.variants = {{"batchnorm_rows", nullptr, Lower}};
  def.absorbs_activation = true;
  def.as_channel_affine = AsChannelAffine;
  return table.Add(std::move(def));
}

}  // namespace recq::internal
