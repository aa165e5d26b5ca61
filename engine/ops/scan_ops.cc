// Ops that walk one axis or the last two axes of a tensor of any element
// type: CumSum (position ids from an attention mask), Trilu (causal
// masks), ArgMax and ArgMin (int64 indices), TopK (k constant), Hardmax. One work-item per line
// along the axis (scan_ops.cl); the axis, k and the flags are read at import and must be constants.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/ops/typed.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

// A constant integer scalar input, or `def` when the input is absent.
absl::StatusOr<int64_t> ScalarInput(OnnxNodeContext& n, int i, const char* what, int64_t def) {
  if (i >= n.num_inputs()) return def;
  absl::StatusOr<const OnnxConstant*> c = n.ConstantInput(i);
  if (!c.ok()) {
    return n.Unsupported(absl::StrCat(what, " (input ", i,
                                      ") depends on the model's input data; it must be a "
                                      "constant known when the model is loaded"));
  }
  if (*c == nullptr) return def;
  if ((*c)->is_float || (*c)->size() != 1) {
    return n.Invalid(absl::StrCat(what, " must be one integer"));
  }
  return (*c)->ints[0];
}

// Outer, axis and inner extents of `shape` around `axis`.
struct Lines {
  int64_t outer = 1, len = 1, inner = 1;
};
Lines LinesOf(const Shape& shape, int64_t axis) {
  return {Product(shape, 0, axis), shape[axis], Product(shape, axis + 1, shape.size())};
}

absl::Status CheckSize(const Node& node, const Shape& s) {
  if (Product(s, 0, s.size()) >= (int64_t{1} << 31)) {
    return Unsupported(node, "2^31 or more elements");
  }
  return absl::OkStatus();
}

// --- CumSum ---

absl::StatusOr<TensorDesc> InferCumSum(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kCumSum, in, 1, 1));
  RECQ_ASSIGN_OR_RETURN(const CumSumAttrs* a, AttrsOf<CumSumAttrs>(kCumSum, attrs));
  const DataType t = in[0]->dtype;
  if (t == DataType::kBool || t == DataType::kInt8 || t == DataType::kUInt8) {
    return Bad(kCumSum,
               absl::StrCat("input is ", in[0]->ToString(),
                            "; expected a float type or an integer type of 16 bits or more"));
  }
  RECQ_RETURN_IF_ERROR(
      NormalizeAxis(kCumSum, a->axis, static_cast<int64_t>(in[0]->shape.size()), false).status());
  return *in[0];
}

absl::Status LowerCumSum(LoweringContext& ctx, const Node& node) {
  const TensorDesc& x = ctx.graph().value(node.inputs[0]).desc;
  RECQ_RETURN_IF_ERROR(CheckSize(node, x.shape));
  const CumSumAttrs& a = AttrsOr<CumSumAttrs>(node);
  const int64_t axis = a.axis < 0 ? a.axis + static_cast<int64_t>(x.shape.size()) : a.axis;
  const Lines l = LinesOf(x.shape, axis);
  Dispatch& d = ctx.Emit(MakeDispatch(ctx, "scan_ops.cl", "cumsum", {size_t(l.outer * l.inner)},
                                      {"-DCUMSUM", absl::StrCat("-DKIND=", TypedKind(x.dtype)),
                                       absl::StrCat("-DT=", TypedStorage(x.dtype))}));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.outputs[0])};
  AddInts(d, {l.len, l.inner, a.exclusive ? 1 : 0, a.reverse ? 1 : 0});
  return absl::OkStatus();
}

absl::Status ImportCumSum(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"exclusive", "reverse"}));
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  if (n.num_inputs() < 2) return n.Invalid("needs the axis (input 1)");
  RECQ_ASSIGN_OR_RETURN(int64_t axis, ScalarInput(n, 1, "axis", 0));
  RECQ_ASSIGN_OR_RETURN(int64_t exclusive, n.Int("exclusive", 0));
  RECQ_ASSIGN_OR_RETURN(int64_t reverse, n.Int("reverse", 0));
  return n.Emit(kCumSum, {x}, CumSumAttrs{axis, exclusive != 0, reverse != 0});
}

// --- Trilu ---

absl::StatusOr<TensorDesc> InferTrilu(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kTrilu, in, 1, 1));
  RECQ_RETURN_IF_ERROR(AttrsOf<TriluAttrs>(kTrilu, attrs).status());
  if (in[0]->shape.size() < 2) {
    return Bad(kTrilu, absl::StrCat("input is ", in[0]->ToString(), "; expected rank >= 2"));
  }
  return *in[0];
}

absl::Status LowerTrilu(LoweringContext& ctx, const Node& node) {
  const TensorDesc& x = ctx.graph().value(node.inputs[0]).desc;
  RECQ_RETURN_IF_ERROR(CheckSize(node, x.shape));
  const TriluAttrs& a = AttrsOr<TriluAttrs>(node);
  const size_t r = x.shape.size();
  // k beyond the matrix keeps everything or nothing: clamp it into int.
  const int64_t limit = x.shape[r - 1] + x.shape[r - 2] + 1;
  const int64_t k = a.k < -limit ? -limit : (a.k > limit ? limit : a.k);
  Dispatch& d = ctx.Emit(MakeDispatch(ctx, "scan_ops.cl", "trilu", {size_t(x.NumElements())},
                                      {"-DTRILU", absl::StrCat("-DT=", TypedBits(x.dtype))}));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.outputs[0])};
  AddInts(d, {x.shape[r - 2], x.shape[r - 1], k, a.upper ? 1 : 0});
  return absl::OkStatus();
}

absl::Status ImportTrilu(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"upper"}));
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  RECQ_ASSIGN_OR_RETURN(int64_t k, ScalarInput(n, 1, "k", 0));
  RECQ_ASSIGN_OR_RETURN(int64_t upper, n.Int("upper", 1));
  return n.Emit(kTrilu, {x}, TriluAttrs{upper != 0, k});
}

// --- ArgMax / ArgMin ---

absl::StatusOr<TensorDesc> InferArg(OpType op, const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(op, in, 1, 1));
  RECQ_ASSIGN_OR_RETURN(const ArgReduceAttrs* a, AttrsOf<ArgReduceAttrs>(op, attrs));
  if (in[0]->dtype == DataType::kBool) {
    return Bad(op, absl::StrCat("input is ", in[0]->ToString(), "; expected numeric"));
  }
  const int64_t rank = static_cast<int64_t>(in[0]->shape.size());
  RECQ_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(op, a->axis, rank, false));
  if (in[0]->shape[axis] == 0) return Bad(op, "the axis is empty");
  Shape out;
  for (int64_t i = 0; i < rank; ++i) {
    if (i != axis) {
      out.push_back(in[0]->shape[i]);
    } else if (a->keepdims) {
      out.push_back(1);
    }
  }
  return TensorDesc{std::move(out), DataType::kInt64};
}

absl::Status LowerArg(LoweringContext& ctx, const Node& node) {
  const TensorDesc& x = ctx.graph().value(node.inputs[0]).desc;
  RECQ_RETURN_IF_ERROR(CheckSize(node, x.shape));
  const ArgReduceAttrs& a = AttrsOr<ArgReduceAttrs>(node);
  const int64_t axis = a.axis < 0 ? a.axis + static_cast<int64_t>(x.shape.size()) : a.axis;
  const Lines l = LinesOf(x.shape, axis);
  Dispatch& d = ctx.Emit(MakeDispatch(ctx, "scan_ops.cl", "arg_reduce", {size_t(l.outer * l.inner)},
                                      {"-DARG_REDUCE", absl::StrCat("-DKIND=", TypedKind(x.dtype)),
                                       absl::StrCat("-DT=", TypedStorage(x.dtype)),
                                       absl::StrCat("-DARG_MAX=", node.op == kArgMax ? 1 : 0)}));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.outputs[0])};
  AddInts(d, {l.len, l.inner, a.select_last_index ? 1 : 0});
  return absl::OkStatus();
}

absl::Status ImportArg(OpType op, OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"axis", "keepdims", "select_last_index"}));
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  RECQ_ASSIGN_OR_RETURN(int64_t axis, n.Int("axis", 0));
  RECQ_ASSIGN_OR_RETURN(int64_t keepdims, n.Int("keepdims", 1));
  RECQ_ASSIGN_OR_RETURN(int64_t last, n.Int("select_last_index", 0));
  return n.Emit(op, {x}, ArgReduceAttrs{axis, keepdims != 0, last != 0});
}

// --- TopK ---

absl::StatusOr<TensorDesc> InferTopK(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kTopK, in, 1, 1));
  RECQ_ASSIGN_OR_RETURN(const TopKAttrs* a, AttrsOf<TopKAttrs>(kTopK, attrs));
  if (in[0]->dtype == DataType::kBool) {
    return Bad(kTopK, absl::StrCat("input is ", in[0]->ToString(), "; expected numeric"));
  }
  const int64_t rank = static_cast<int64_t>(in[0]->shape.size());
  RECQ_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(kTopK, a->axis, rank, false));
  if (a->k < 1 || a->k > in[0]->shape[axis]) {
    return Bad(kTopK, absl::StrCat("k is ", a->k, "; expected 1 to ", in[0]->shape[axis]));
  }
  TensorDesc out = *in[0];
  out.shape[axis] = a->k;
  if (a->indices) out.dtype = DataType::kInt64;
  return out;
}

absl::Status LowerTopK(LoweringContext& ctx, const Node& node) {
  const TensorDesc& x = ctx.graph().value(node.inputs[0]).desc;
  RECQ_RETURN_IF_ERROR(CheckSize(node, x.shape));
  const TopKAttrs& a = AttrsOr<TopKAttrs>(node);
  const int64_t axis = a.axis < 0 ? a.axis + static_cast<int64_t>(x.shape.size()) : a.axis;
  const Lines l = LinesOf(x.shape, axis);
  Dispatch& d = ctx.Emit(MakeDispatch(
      ctx, "scan_ops.cl", "topk", {size_t(l.outer * l.inner)},
      {"-DTOPK", absl::StrCat("-DKIND=", TypedKind(x.dtype)),
       absl::StrCat("-DT=", TypedStorage(x.dtype)), absl::StrCat("-DLARGEST=", a.largest ? 1 : 0),
       absl::StrCat("-DINDICES=", a.indices ? 1 : 0)}));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.outputs[0])};
  AddInts(d, {l.len, l.inner, a.k});
  return absl::OkStatus();
}

absl::Status ImportTopK(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"axis", "largest", "sorted", "k"}));
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  RECQ_ASSIGN_OR_RETURN(int64_t axis, n.Int("axis", -1));
  RECQ_ASSIGN_OR_RETURN(int64_t largest, n.Int("largest", 1));
  int64_t k = 0;
  if (n.opset() < 10) {
    RECQ_ASSIGN_OR_RETURN(k, n.Int("k", 0));
  } else {
    absl::StatusOr<const OnnxConstant*> c = n.ConstantInput(1);
    if (!c.ok() || *c == nullptr) {
      return n.Unsupported(
          "k (input 1) depends on the values of its inputs; its output shape would too, and "
          "recq compiles static shapes: k must be a constant");
    }
    if ((*c)->is_float || (*c)->size() != 1) return n.Invalid("k must be one integer");
    k = (*c)->ints[0];
  }
  for (int i = 0; i < 2 && i < n.num_outputs(); ++i) {
    if (n.output_name(i).empty()) continue;
    RECQ_RETURN_IF_ERROR(n.EmitOutput(i, kTopK, {x}, TopKAttrs{axis, k, largest != 0, i == 1}));
  }
  return absl::OkStatus();
}

// --- Hardmax ---

absl::StatusOr<TensorDesc> InferHardmax(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kHardmax, in, 1, 1));
  RECQ_ASSIGN_OR_RETURN(const HardmaxAttrs* a, AttrsOf<HardmaxAttrs>(kHardmax, attrs));
  if (!IsFloatingPoint(in[0]->dtype)) {
    return Bad(kHardmax, absl::StrCat("input is ", in[0]->ToString(), "; expected a float"));
  }
  RECQ_RETURN_IF_ERROR(
      NormalizeAxis(kHardmax, a->axis, static_cast<int64_t>(in[0]->shape.size()), false).status());
  return *in[0];
}

absl::Status LowerHardmax(LoweringContext& ctx, const Node& node) {
  const TensorDesc& x = ctx.graph().value(node.inputs[0]).desc;
  RECQ_RETURN_IF_ERROR(CheckSize(node, x.shape));
  const HardmaxAttrs& a = AttrsOr<HardmaxAttrs>(node);
  const int64_t axis = a.axis < 0 ? a.axis + static_cast<int64_t>(x.shape.size()) : a.axis;
  Lines l = LinesOf(x.shape, axis);
  if (a.coerce) l = {l.outer, l.len * l.inner, 1};
  Dispatch& d = ctx.Emit(MakeDispatch(ctx, "scan_ops.cl", "hardmax", {size_t(l.outer * l.inner)},
                                      {"-DHARDMAX", absl::StrCat("-DKIND=", TypedKind(x.dtype)),
                                       absl::StrCat("-DT=", TypedStorage(x.dtype))}));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.outputs[0])};
  AddInts(d, {l.len, l.inner});
  return absl::OkStatus();
}

absl::Status ImportHardmax(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"axis"}));
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  const bool coerce = n.opset() < 13;
  RECQ_ASSIGN_OR_RETURN(int64_t axis, n.Int("axis", coerce ? 1 : -1));
  return n.Emit(kHardmax, {x}, HardmaxAttrs{axis, coerce});
}

}  // namespace

RECQ_REGISTER_OPS(ScanOps) {
  OpDef hardmax;
  hardmax.type = kHardmax;
  hardmax.typed = true;
  hardmax.onnx = {{"", "Hardmax", 1, kOnnxOpsetMax, ImportHardmax}};
  hardmax.infer = InferHardmax;
  hardmax.variants = {{"hardmax", nullptr, LowerHardmax}};
  RECQ_RETURN_IF_ERROR(table.Add(std::move(hardmax)));

  OpDef topk;
  topk.type = kTopK;
  topk.typed = true;
  topk.onnx = {{"", "TopK", 1, kOnnxOpsetMax, ImportTopK}};
  topk.infer = InferTopK;
  topk.variants = {{"topk", nullptr, LowerTopK}};
  RECQ_RETURN_IF_ERROR(table.Add(std::move(topk)));

  OpDef cumsum;
  cumsum.type = kCumSum;
  cumsum.typed = true;
  cumsum.onnx = {{"", "CumSum", 11, kOnnxOpsetMax, ImportCumSum}};
  cumsum.infer = InferCumSum;
  cumsum.variants = {{"cumsum", nullptr, LowerCumSum}};
  RECQ_RETURN_IF_ERROR(table.Add(std::move(cumsum)));

  OpDef trilu;
  trilu.type = kTrilu;
  trilu.typed = true;
  trilu.onnx = {{"", "Trilu", 14, kOnnxOpsetMax, ImportTrilu}};
  trilu.infer = InferTrilu;
  trilu.variants = {{"trilu", nullptr, LowerTrilu}};
  RECQ_RETURN_IF_ERROR(table.Add(std::move(trilu)));

  for (OpType op : {kArgMax, kArgMin}) {
    OpDef def;
    def.type = op;
    def.typed = true;
    def.onnx = {
        {"", op.name(), 1, kOnnxOpsetMax, [op](OnnxNodeContext& n) { return ImportArg(op, n); }}};
    def.infer = [op](const OpAttrs& attrs, InferInputs in) { return InferArg(op, attrs, in); };
    def.variants = {{"arg_reduce", nullptr, LowerArg}};
    RECQ_RETURN_IF_ERROR(table.Add(std::move(def)));
  }
  return absl::OkStatus();
}

}  // namespace recq::internal
