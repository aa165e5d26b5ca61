// NegativeLogLikelihoodLoss (engine/ops/loss.h) and the imports of ONNX
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opsets 12 on):
// reductions none, sum and mean, the optional weight per class,
// ignore_index, and scores of any rank >= 2 ([N, C, d1, ..., dk]).
// SoftmaxCrossEntropyLoss is LogSoftmax over axis 1 followed by this op;
// its optional second output (log_prob) is the LogSoftmax's.
#include "engine/ops/loss.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/onnx_emitter.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/ops/typed.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

constexpr OpType kLogSoftmax("LogSoftmax");

absl::StatusOr<TensorDesc> Infer(const OpAttrs& attrs, InferInputs in) {
  const OpType op = kNegativeLogLikelihoodLoss;
  RECQ_RETURN_IF_ERROR(CheckInputCount(op, in, 2, 3));
  RECQ_ASSIGN_OR_RETURN(const NllLossAttrs* a, AttrsOf<NllLossAttrs>(op, attrs));
  if (a->reduction != LossReduction::kNone && a->reduction != LossReduction::kSum &&
      a->reduction != LossReduction::kMean) {
    return Bad(op, "reduction must be none, sum or mean");
  }
  const TensorDesc& x = *in[0];
  const TensorDesc& t = *in[1];
  if (!IsFloatingPoint(x.dtype) || x.shape.size() < 2 || x.shape[1] < 1) {
    return Bad(op, absl::StrCat("scores are ", x.ToString(),
                                "; expected float32, float16 or float64 [N, C, d1, ..., dk]"));
  }
  Shape expected = x.shape;
  expected.erase(expected.begin() + 1);
  if ((t.dtype != DataType::kInt64 && t.dtype != DataType::kInt32) || t.shape != expected) {
    return Bad(op, absl::StrCat("target is ", t.ToString(), "; expected int64 or int32 ",
                                S(expected), " for scores ", x.ToString()));
  }
  if (in.size() == 3 && in[2] != nullptr) {
    const TensorDesc& w = *in[2];
    if (w.dtype != x.dtype || w.shape != Shape{x.shape[1]}) {
      return Bad(op, absl::StrCat("weight is ", w.ToString(), "; expected ", DataTypeName(x.dtype),
                                  " [", x.shape[1], "]"));
    }
  }
  return TensorDesc{a->reduction == LossReduction::kNone ? t.shape : Shape{}, x.dtype};
}

absl::Status Lower(LoweringContext& ctx, const Node& node) {
  const NllLossAttrs& a = AttrsOr<NllLossAttrs>(node);
  const TensorDesc& x = ctx.graph().value(node.inputs[0]).desc;
  const TensorDesc& t = ctx.graph().value(node.inputs[1]).desc;
  const bool weighted = node.inputs.size() == 3 && node.inputs[2] != kNoValue;
  const int64_t classes = x.shape[1];
  const int64_t inner = Product(x.shape, 2, x.shape.size());
  const int64_t total = t.NumElements();
  if (x.NumElements() >= (int64_t{1} << 31)) {
    return Unsupported(node, "scores of 2^31 elements or more");
  }
  std::vector<std::string> options = {absl::StrCat("-DKIND=", TypedKind(x.dtype)),
                                      absl::StrCat("-DT=", TypedStorage(x.dtype)),
                                      absl::StrCat("-DIDX_T=", TypedStorage(t.dtype)),
                                      absl::StrCat("-DHAS_WEIGHT=", weighted ? 1 : 0),
                                      absl::StrCat("-DHAS_II=", a.has_ignore_index ? 1 : 0)};
  const bool reduce = a.reduction != LossReduction::kNone;
  size_t group = 1;
  if (reduce) {
    group = GroupForRow(ctx.device(), total, 1, 256);
    options.push_back(absl::StrCat("-DNLL_GROUP=", group));
    options.push_back(absl::StrCat("-DNLL_MEAN=", a.reduction == LossReduction::kMean ? 1 : 0));
  }
  Dispatch& d =
      ctx.Emit(MakeDispatch(ctx, "loss.cl", reduce ? "nll_loss_reduce" : "nll_loss_none",
                            {reduce ? group : static_cast<size_t>(total)}, std::move(options)));
  if (reduce) d.local = {group, 1, 1};
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]),
            // Without a weight the kernel never reads this argument.
            ctx.Arg(node.inputs[weighted ? 2 : 0]), ctx.Arg(node.outputs[0])};
  d.args.push_back(DispatchArg::Scalar(static_cast<cl_int>(classes)));
  d.args.push_back(DispatchArg::Scalar(static_cast<cl_int>(inner)));
  d.args.push_back(DispatchArg::Scalar(static_cast<cl_long>(a.ignore_index)));
  if (reduce) d.args.push_back(DispatchArg::Scalar(static_cast<cl_int>(total)));
  return absl::OkStatus();
}

absl::StatusOr<NllLossAttrs> ReadAttrs(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"reduction", "ignore_index"}));
  RECQ_ASSIGN_OR_RETURN(std::string reduction, n.String("reduction", "mean"));
  NllLossAttrs a;
  if (reduction == "none") {
    a.reduction = LossReduction::kNone;
  } else if (reduction == "sum") {
    a.reduction = LossReduction::kSum;
  } else if (reduction == "mean") {
    a.reduction = LossReduction::kMean;
  } else {
    return n.Invalid(
        absl::StrCat("reduction is '", reduction, "'; expected 'none', 'sum' or 'mean'"));
  }
  a.has_ignore_index = n.HasAttr("ignore_index");
  if (a.has_ignore_index) {
    RECQ_ASSIGN_OR_RETURN(a.ignore_index, n.Int("ignore_index", 0));
  }
  return a;
}

// The labels and the optional weight (inputs 1 and 2), after `scores`.
absl::StatusOr<std::vector<ValueId>> LossInputs(OnnxNodeContext& n, ValueId scores) {
  std::vector<ValueId> inputs = {scores};
  RECQ_ASSIGN_OR_RETURN(ValueId target, n.Input(1));
  inputs.push_back(target);
  if (n.num_inputs() > 2) {
    RECQ_ASSIGN_OR_RETURN(ValueId weight, n.Input(2, /*optional=*/true));
    if (weight != kNoValue) inputs.push_back(weight);
  }
  return inputs;
}

absl::Status ImportNll(OnnxNodeContext& n) {
  RECQ_ASSIGN_OR_RETURN(NllLossAttrs a, ReadAttrs(n));
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  RECQ_ASSIGN_OR_RETURN(std::vector<ValueId> inputs, LossInputs(n, x));
  return n.Emit(kNegativeLogLikelihoodLoss, std::move(inputs), a);
}

absl::Status ImportSoftmaxCrossEntropy(OnnxNodeContext& n) {
  RECQ_ASSIGN_OR_RETURN(NllLossAttrs a, ReadAttrs(n));
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  const TensorDesc& scores = n.desc(x);
  if (scores.shape.size() < 2) {
    return n.Invalid(
        absl::StrCat("scores are ", scores.ToString(), "; expected [N, C, d1, ..., dk]"));
  }
  if (scores.dtype != DataType::kFloat32) {
    return n.Unsupported(
        absl::StrCat("scores of ", scores.ToString(), " (its LogSoftmax takes float32 only)"));
  }
  OnnxNodeEmitter* e = EmitterOf(n);
  if (e == nullptr) {
    return n.Unsupported("SoftmaxCrossEntropyLoss needs an importer that can emit several nodes");
  }
  RECQ_ASSIGN_OR_RETURN(ValueId log_prob,
                        e->EmitValue(kLogSoftmax, {x}, SoftmaxAttrs{1, false}, "log_prob"));
  RECQ_ASSIGN_OR_RETURN(std::vector<ValueId> inputs, LossInputs(n, log_prob));
  RECQ_RETURN_IF_ERROR(n.Emit(kNegativeLogLikelihoodLoss, std::move(inputs), a));
  if (n.num_outputs() > 1 && !n.output_name(1).empty()) {
    RECQ_RETURN_IF_ERROR(n.EmitOutput(1, OpType::kIdentity, {log_prob}, {}));
  }
  return absl::OkStatus();
}

}  // namespace

RECQ_REGISTER_OPS(Loss) {
  OpDef def;
  def.type = kNegativeLogLikelihoodLoss;
  def.typed = true;
  def.infer = Infer;
  def.onnx = {{"", "NegativeLogLikelihoodLoss", 12, kOnnxOpsetMax, ImportNll}};
  def.variants = {{"nll_loss", nullptr, Lower}};
  RECQ_RETURN_IF_ERROR(table.Add(std::move(def)));
  return table.AddOnnx(
      {"", "SoftmaxCrossEntropyLoss", 12, kOnnxOpsetMax, ImportSoftmaxCrossEntropy});
}

}  // namespace recq::internal
