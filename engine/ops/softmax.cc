// Softmax and LogSoftmax (SoftmaxAttrs) over one axis, or (ONNX opset < 13,
// coerce_to_2d) over every dimension from the axis on. They share kernels:
// RECQ_LOG_SOFTMAX makes the log variant.
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

const OpType kLogSoftmax("LogSoftmax");

absl::StatusOr<TensorDesc> Infer(OpType op, const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(op, in, 1, 1));
  RECQ_ASSIGN_OR_RETURN(const SoftmaxAttrs* a, AttrsOf<SoftmaxAttrs>(op, attrs));
  RECQ_RETURN_IF_ERROR(NormalizeAxis(op, a->axis, in[0]->shape.size(), false).status());
  return *in[0];
}

absl::Status Import(OnnxNodeContext& n, OpType op) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"axis"}));
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  const bool legacy = n.opset() < 13;
  RECQ_ASSIGN_OR_RETURN(int64_t axis, n.Int("axis", legacy ? 1 : -1));
  return n.Emit(op, {x}, SoftmaxAttrs{axis, legacy});
}

std::vector<std::string> Options(const Node& node, std::vector<std::string> options = {}) {
  if (node.op == kLogSoftmax) options.push_back("-DRECQ_LOG_SOFTMAX=1");
  return options;
}

// The softmax as rows: `outer` rows of `dim` elements, `inner` apart.
struct Rows {
  int64_t outer, dim, inner;
};
Rows RowsOf(const Node& node, const LoweringContext& ctx) {
  const auto& a = AttrsOr<SoftmaxAttrs>(node);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  const int64_t axis = a.axis < 0 ? a.axis + static_cast<int64_t>(out.size()) : a.axis;
  return {Product(out, 0, axis), a.coerce_to_2d ? Product(out, axis, out.size()) : out[axis],
          a.coerce_to_2d ? 1 : Product(out, axis + 1, out.size())};
}

// GPU, contiguous rows: a work-group per row.
absl::Status LowerRows(LoweringContext& ctx, const Node& node) {
  const Rows r = RowsOf(node, ctx);
  const size_t local = GroupForRow(ctx.device(), r.dim, 32, 256);
  Dispatch& d = ctx.Emit(MakeDispatch(ctx, "softmax.cl", "softmax_rows", {size_t(r.outer) * local},
                                      Options(node, {absl::StrCat("-DRECQ_SM_LOCAL=", local)})));
  d.local = {local, 1, 1};
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.outputs[0])};
  AddInts(d, {r.dim});
  return absl::OkStatus();
}

// CPU, contiguous rows: an item per row, float16 vectors along it.
absl::Status LowerRowsVec(LoweringContext& ctx, const Node& node) {
  const Rows r = RowsOf(node, ctx);
  Dispatch d;
  d.label = "softmax_rows_vec";
  d.kernel = ctx.Kernel("softmax.cl", "softmax_rows_vec", Options(node));
  const std::array<size_t, 3> range = {size_t(r.outer), 1, 1};
  SetRange(d, range, WorkGroupFor(range, 16));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.outputs[0])};
  AddInts(d, {r.dim, r.outer});
  ctx.Emit(std::move(d));
  return absl::OkStatus();
}

absl::Status LowerPlain(LoweringContext& ctx, const Node& node) {
  const Rows r = RowsOf(node, ctx);
  Dispatch& d = ctx.Emit(
      MakeDispatch(ctx, "softmax.cl", "softmax", {size_t(r.outer * r.inner)}, Options(node)));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.outputs[0])};
  AddInts(d, {r.dim, r.inner});
  return absl::OkStatus();
}

}  // namespace

RECQ_REGISTER_OPS(Softmax) {
  for (OpType op : {OpType::kSoftmax, kLogSoftmax}) {
    OpDef def;
    def.type = op;
    def.onnx = {
        {"", op.name(), 1, kOnnxOpsetMax, [op](OnnxNodeContext& n) { return Import(n, op); }}};
    def.infer = [op](const OpAttrs& attrs, InferInputs in) { return Infer(op, attrs, in); };
    def.export_onnx = [op](const Node& node, const Graph&, OnnxNodeWriter& out) -> absl::Status {
      const auto& a = AttrsOr<SoftmaxAttrs>(node);
      if (a.coerce_to_2d) {
        return absl::UnimplementedError(
            absl::StrCat("node '", node.name, "': a ", op.name(),
                         " of opset < 13 semantics cannot be written at 13"));
      }
      out.SetOpType(op.name());
      out.SetInt("axis", a.axis);
      return absl::OkStatus();
    };
    def.variants = {{"softmax_rows",
                     [](const Node& node, const LoweringContext& ctx) {
                       return ctx.device().GpuKernels() && RowsOf(node, ctx).inner == 1;
                     },
                     LowerRows},
                    {"softmax_rows_vec",
                     [](const Node& node, const LoweringContext& ctx) {
                       return ctx.device().CpuKernels() && RowsOf(node, ctx).inner == 1;
                     },
                     LowerRowsVec},
                    {"softmax", nullptr, LowerPlain}};
    RECQ_RETURN_IF_ERROR(table.Add(std::move(def)));
  }
  return absl::OkStatus();
}

}  // namespace recq::internal
