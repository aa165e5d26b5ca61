// Reductions over a set of axes (ReduceAttrs): ReduceSum, ReduceMean,
// ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare,
// ReduceLogSum and ReduceLogSumExp. The axes are an attribute up to ONNX
// opset 17 (ReduceSum: 12) and a constant int64 input from 18 (13) on.
//
// Lowering merges adjacent dimensions, so most reductions are one run of
// contiguous axes: the input is [outer, R, inner] and each output reads R
// elements `inner` apart (reduce_axis), or, on GPUs with inner == 1 (the
// last axes, a global average over a feature map), one work-group reduces a
// row (reduce_rows). Other axis sets take reduce_generic.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/constant_eval.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "recq/math_op_attrs.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

struct ReduceOp {
  const char* name;
  int code;  // RECQ_REDUCE in reduce.cl
  // The first opset whose axes are an input.
  int64_t axes_input_opset;
};

const ReduceOp kOps[] = {
    {"ReduceSum", 0, 13},       {"ReduceMean", 1, 18},      {"ReduceMax", 2, 18},
    {"ReduceMin", 3, 18},       {"ReduceProd", 4, 18},      {"ReduceL1", 5, 18},
    {"ReduceL2", 6, 18},        {"ReduceSumSquare", 7, 18}, {"ReduceLogSum", 8, 18},
    {"ReduceLogSumExp", 9, 18},
};

int CodeOf(OpType op) {
  for (const ReduceOp& r : kOps) {
    if (op == OpType(r.name)) return r.code;
  }
  return 0;
}

// ReducedAxes returns whether each dimension is reduced, or InvalidArgument
// for an axis out of range or repeated.
absl::StatusOr<std::vector<bool>> ReducedAxes(OpType op, const ReduceAttrs& a, int64_t rank) {
  std::vector<bool> reduced(rank, a.axes.empty() && !a.noop_with_empty_axes);
  for (int64_t axis : a.axes) {
    RECQ_ASSIGN_OR_RETURN(int64_t ax, NormalizeAxis(op, axis, rank, false));
    if (reduced[ax]) return Bad(op, absl::StrCat("axis ", axis, " is listed twice"));
    reduced[ax] = true;
  }
  return reduced;
}

absl::StatusOr<TensorDesc> Infer(OpType op, const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(op, in, 1, 1));
  RECQ_ASSIGN_OR_RETURN(const ReduceAttrs* a, AttrsOf<ReduceAttrs>(op, attrs));
  const Shape& x = in[0]->shape;
  RECQ_ASSIGN_OR_RETURN(std::vector<bool> reduced,
                        ReducedAxes(op, *a, static_cast<int64_t>(x.size())));
  TensorDesc desc = *in[0];
  desc.shape.clear();
  for (size_t i = 0; i < x.size(); ++i) {
    if (!reduced[i]) {
      desc.shape.push_back(x[i]);
    } else if (a->keepdims) {
      desc.shape.push_back(1);
    }
  }
  return desc;
}

// The reduction of constant `c`, computed in double as reduce.cl's codes
// define it. Integer constants (exact codes only: sum, max, min, prod) stay
// integers.
absl::StatusOr<OnnxConstant> Fold(OnnxNodeContext& n, const ReduceOp& op, const ReduceAttrs& a,
                                  const OnnxConstant& c) {
  const int64_t rank = static_cast<int64_t>(c.dims.size());
  absl::StatusOr<std::vector<bool>> reduced = ReducedAxes(OpType(op.name), a, rank);
  if (!reduced.ok()) return n.Invalid(reduced.status().message());
  OnnxConstant y;
  y.name = c.name;
  y.is_float = c.is_float;
  y.dtype = c.dtype;
  // Each input element's output index: the row-major index over the kept
  // dimensions.
  std::vector<int64_t> out_dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!(*reduced)[d]) {
      out_dims.push_back(c.dims[d]);
      y.dims.push_back(c.dims[d]);
    } else if (a.keepdims) {
      y.dims.push_back(1);
    }
  }
  // Reserved: with a zero dim reduced away, the kept dims may be up to 2^40.
  const int64_t outputs = Numel(out_dims);
  RECQ_RETURN_IF_ERROR(n.ReserveFolded(outputs));
  const int64_t total = c.size();
  const int64_t count = outputs > 0 ? total / outputs : 0;
  const bool noop = a.axes.empty() && a.noop_with_empty_axes;
  auto at = [&](int64_t i) { return c.is_float ? double(c.floats[i]) : double(c.ints[i]); };
  std::vector<double> acc(outputs, 0.0), peak(outputs, -HUGE_VAL);
  std::vector<int64_t> out_index(total, 0);
  for (int64_t i = 0; i < total; ++i) {
    int64_t rest = i, o = 0, scale = 1;
    for (int64_t d = rank; d-- > 0;) {
      const int64_t k = rest % c.dims[d];
      rest /= c.dims[d];
      if (!(*reduced)[d]) {
        o += k * scale;
        scale *= c.dims[d];
      }
    }
    out_index[i] = o;
    peak[o] = std::max(peak[o], at(i));
  }
  if (op.code == 3 || op.code == 4) std::fill(acc.begin(), acc.end(), op.code == 3 ? HUGE_VAL : 1);
  for (int64_t i = 0; i < total; ++i) {
    const double v = at(i);
    double& r = acc[out_index[i]];
    switch (op.code) {
      case 2:
        r = peak[out_index[i]];
        break;
      case 3:
        r = std::min(r, v);
        break;
      case 4:
        r *= v;
        break;
      case 5:
        r += std::abs(v);
        break;
      case 6:
      case 7:
        r += v * v;
        break;
      case 9:
        r += std::exp(v - peak[out_index[i]]);
        break;
      default:  // sum, mean, log-sum
        r += v;
        break;
    }
  }
  for (int64_t o = 0; o < outputs; ++o) {
    double& r = acc[o];
    if (op.code == 1) r /= static_cast<double>(count);
    if (op.code == 6) r = std::sqrt(r);
    if (op.code == 8) r = std::log(r);
    if (op.code == 9) r = std::log(r) + peak[o];
  }
  if (noop) {
    y.floats = c.floats;
    y.ints = c.ints;
    return y;
  }
  for (double r : acc) {
    if (c.is_float) {
      y.floats.push_back(static_cast<float>(r));
    } else {
      y.ints.push_back(static_cast<int64_t>(r));
    }
  }
  return y;
}

absl::Status Import(OnnxNodeContext& n, const ReduceOp& op) {
  ReduceAttrs a;
  RECQ_ASSIGN_OR_RETURN(int64_t keepdims, n.Int("keepdims", 1));
  a.keepdims = keepdims != 0;
  if (n.opset() < op.axes_input_opset) {
    RECQ_RETURN_IF_ERROR(n.CheckAttrs({"axes", "keepdims"}));
    if (n.HasAttr("axes")) {
      RECQ_ASSIGN_OR_RETURN(a.axes, n.Ints("axes"));
    }
  } else {
    RECQ_RETURN_IF_ERROR(n.CheckAttrs({"keepdims", "noop_with_empty_axes"}));
    RECQ_ASSIGN_OR_RETURN(int64_t noop, n.Int("noop_with_empty_axes", 0));
    a.noop_with_empty_axes = noop != 0;
    if (n.num_inputs() > 1) {
      RECQ_ASSIGN_OR_RETURN(const OnnxConstant* axes, n.ConstantInput(1));
      if (axes != nullptr) {
        if (axes->is_float) return n.Invalid("axes must be an int64 tensor");
        a.axes = axes->ints;
      }
    }
  }
  // A reduction of a constant (the norm of weight-normalized conv weights,
  // the statistics of standardized weights) folds, so that the weights it
  // feeds stay constant.
  if (absl::StatusOr<const OnnxConstant*> c = n.ConstantInput(0); c.ok() && *c != nullptr) {
    if ((*c)->is_float || op.code == 0 || op.code == 2 || op.code == 3 || op.code == 4) {
      RECQ_ASSIGN_OR_RETURN(OnnxConstant folded, Fold(n, op, a, **c));
      return n.DefineConstant(std::move(folded));
    }
  }
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  return n.Emit(OpType(op.name), {x}, std::move(a));
}

// The reduction's layout after dropping size-1 dimensions and merging
// neighbours that are both kept or both reduced.
struct Layout {
  std::vector<int64_t> dims;
  std::vector<bool> reduced;
  int64_t outputs = 1;
  int64_t r = 1;  // reduced elements per output
  // Contiguous: one run of reduced dimensions, as [outer, r, inner].
  bool contiguous = false;
  int64_t outer = 1, inner = 1;
};

Layout LayoutOf(const Node& node, const LoweringContext& ctx) {
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const std::vector<bool> reduced =
      *ReducedAxes(node.op, AttrsOr<ReduceAttrs>(node), static_cast<int64_t>(x.size()));
  Layout l;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] == 1) continue;
    (reduced[i] ? l.r : l.outputs) *= x[i];
    if (!l.dims.empty() && l.reduced.back() == reduced[i]) {
      l.dims.back() *= x[i];
    } else {
      l.dims.push_back(x[i]);
      l.reduced.push_back(reduced[i]);
    }
  }
  const int runs = static_cast<int>(std::count(l.reduced.begin(), l.reduced.end(), true));
  l.contiguous = runs <= 1;
  bool seen = false;
  for (size_t i = 0; i < l.dims.size(); ++i) {
    if (l.reduced[i]) {
      seen = true;
    } else {
      (seen ? l.inner : l.outer) *= l.dims[i];
    }
  }
  return l;
}

std::vector<std::string> Options(const Node& node, std::vector<std::string> more = {}) {
  more.push_back(absl::StrCat("-DRECQ_REDUCE=", CodeOf(node.op)));
  return more;
}

bool IsNoop(const Node& node) {
  const ReduceAttrs& a = AttrsOr<ReduceAttrs>(node);
  return a.axes.empty() && a.noop_with_empty_axes;
}

absl::Status LowerNoop(LoweringContext& ctx, const Node& node) {
  // ONNX's noop_with_empty_axes: the input itself.
  EmitCopy(ctx, ctx.Arg(node.inputs[0]), ctx.Arg(node.outputs[0]),
           ctx.graph().value(node.outputs[0]).desc.NumElements());
  return absl::OkStatus();
}

bool RowsFit(const Node& node, const LoweringContext& ctx) {
  if (IsNoop(node)) return false;
  const Layout l = LayoutOf(node, ctx);
  return ctx.device().GpuKernels() && l.contiguous && l.inner == 1 && l.r >= 64;
}

absl::Status LowerRows(LoweringContext& ctx, const Node& node) {
  const Layout l = LayoutOf(node, ctx);
  const size_t local = GroupForRow(ctx.device(), l.r, 32, 256);
  Dispatch& d =
      ctx.Emit(MakeDispatch(ctx, "reduce.cl", "reduce_rows", {size_t(l.outer) * local},
                            Options(node, {absl::StrCat("-DRECQ_REDUCE_LOCAL=", local)})));
  d.local = {local, 1, 1};
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.outputs[0])};
  AddInts(d, {l.r});
  return absl::OkStatus();
}

bool AxisFits(const Node& node, const LoweringContext& ctx) {
  return !IsNoop(node) && LayoutOf(node, ctx).contiguous;
}

absl::Status LowerAxis(LoweringContext& ctx, const Node& node) {
  const Layout l = LayoutOf(node, ctx);
  Dispatch& d = ctx.Emit(
      MakeDispatch(ctx, "reduce.cl", "reduce_axis", {size_t(l.outer * l.inner)}, Options(node)));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.outputs[0])};
  AddInts(d, {l.r, l.inner});
  return absl::OkStatus();
}

absl::Status LowerGeneric(LoweringContext& ctx, const Node& node) {
  if (IsNoop(node)) return LowerNoop(ctx, node);
  const Layout l = LayoutOf(node, ctx);
  if (l.dims.size() > 8) return Unsupported(node, "a reduction over more than 8 merged dimensions");
  Shape kept, kept_strides, red, red_strides;
  int64_t stride = 1;
  for (size_t i = l.dims.size(); i-- > 0;) {
    (l.reduced[i] ? red : kept).insert((l.reduced[i] ? red : kept).begin(), l.dims[i]);
    Shape& s = l.reduced[i] ? red_strides : kept_strides;
    s.insert(s.begin(), stride);
    stride *= l.dims[i];
  }
  Dispatch& d = ctx.Emit(
      MakeDispatch(ctx, "reduce.cl", "reduce_generic", {size_t(l.outputs)}, Options(node)));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.outputs[0])};
  d.args.push_back(DispatchArg::Scalar(Pad8(kept, 1)));
  d.args.push_back(DispatchArg::Scalar(Pad8(kept_strides, 0)));
  d.args.push_back(DispatchArg::Scalar(Pad8(red, 1)));
  d.args.push_back(DispatchArg::Scalar(Pad8(red_strides, 0)));
  AddInts(d, {l.r});
  return absl::OkStatus();
}

}  // namespace

RECQ_REGISTER_OPS(Reduce) {
  for (const ReduceOp& r : kOps) {
    const OpType type(r.name);
    OpDef def;
    def.type = type;
    auto import = [r](OnnxNodeContext& n) { return Import(n, r); };
    // Up to the opset before axes became an input, and from it on (the
    // default domain's mapping is checked against the model's opset).
    def.onnx = {{"", r.name, 1, r.axes_input_opset - 1, import},
                {"", r.name, r.axes_input_opset, 21, import}};
    def.infer = [type](const OpAttrs& attrs, InferInputs in) { return Infer(type, attrs, in); };
    def.variants = {{"reduce_rows", RowsFit, LowerRows},
                    {"reduce_axis", AxisFits, LowerAxis},
                    {"reduce_generic", nullptr, LowerGeneric}};
    RECQ_RETURN_IF_ERROR(table.Add(std::move(def)));
  }
  return absl::OkStatus();
}

}  // namespace recq::internal
