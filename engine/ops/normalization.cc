// LayerNormalization (ONNX 17), InstanceNormalization (6) and
// GroupNormalization (18: per-group scale and bias; 21: per-channel), all
// NormalizationAttrs. Each normalises rows of contiguous elements and
// applies a scale and an optional bias (normalization.cl): one work-item per
// row for CPUs, a work-group per row for GPUs.
#include <array>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/onnx_emitter.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "recq/math_op_attrs.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

const OpType kLayerNorm("LayerNormalization");
const OpType kInstanceNorm("InstanceNormalization");
const OpType kGroupNorm("GroupNormalization");

// The rows and the parameter indexing of one node (see normalization.cl).
struct Rows {
  int64_t rows = 1, d = 1;
  int64_t pm_mod = 1, pm_a = 0, pm_div = 1;
  int64_t params = 1;  // the elements scale and bias must have
  // With channels_first_input or _output: the spatial elements of an
  // image, the stride of a row's elements in the channels-first tensor (0:
  // rows are contiguous on both sides).
  int64_t spatial = 0;
};

absl::StatusOr<Rows> RowsOf(OpType op, const NormalizationAttrs& a, const Shape& input) {
  if ((a.channels_first_input || a.channels_first_output) &&
      (op != kLayerNorm || input.size() < 3)) {
    return Bad(op, absl::StrCat("channels-first reads or writes need a LayerNormalization of "
                                "rank 3 or more; got rank ",
                                input.size()));
  }
  const Shape x = a.channels_first_input ? Permuted(input, ChannelsLastPerm(input.size())) : input;
  const int64_t rank = static_cast<int64_t>(x.size());
  Rows r;
  if (op == kLayerNorm) {
    RECQ_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(op, a.axis, rank, false));
    if ((a.channels_first_input || a.channels_first_output) && axis != rank - 1) {
      return Bad(op, absl::StrCat("channels-first reads or writes normalise the last axis; got "
                                  "axis ",
                                  a.axis));
    }
    r.rows = Product(x, 0, axis);
    r.d = Product(x, axis, rank);
    r.params = r.d;
    if (a.channels_first_input || a.channels_first_output) r.spatial = Product(x, 1, rank - 1);
    return r;
  }
  if (rank < 2) return Bad(op, absl::StrCat("input must have rank >= 2, got ", S(x)));
  const int64_t n = x[0], c = x[1], s = Product(x, 2, rank);
  if (op == kInstanceNorm) {
    r.rows = n * c;
    r.d = s;
    r.pm_mod = c;
    r.pm_a = 1;
    r.pm_div = s;
    r.params = c;
    return r;
  }
  if (a.num_groups <= 0 || c % a.num_groups != 0) {
    return Bad(op, absl::StrCat("num_groups ", a.num_groups, " does not divide the ", c,
                                " channels of ", S(x)));
  }
  const int64_t g = a.num_groups;
  r.rows = n * g;
  r.d = c / g * s;
  r.pm_mod = g;
  if (a.per_group_affine) {
    r.pm_a = 1;
    r.pm_div = r.d;
    r.params = g;
  } else {
    r.pm_a = c / g;
    r.pm_div = s;
    r.params = c;
  }
  return r;
}

absl::StatusOr<TensorDesc> Infer(OpType op, const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(op, in, op == kLayerNorm ? 2 : 3, 3));
  RECQ_ASSIGN_OR_RETURN(const NormalizationAttrs* a, AttrsOf<NormalizationAttrs>(op, attrs));
  RECQ_ASSIGN_OR_RETURN(Rows r, RowsOf(op, *a, in[0]->shape));
  const Shape& input = in[0]->shape;
  const Shape x = a->channels_first_input ? Permuted(input, ChannelsLastPerm(input.size())) : input;
  for (size_t i = 1; i < in.size(); ++i) {
    if (in[i] == nullptr) continue;
    const char* what = i == 1 ? "scale" : "bias";
    const Shape& p = in[i]->shape;
    if (op == kLayerNorm) {
      // The normalised shape x[axis:], possibly with fewer leading dims.
      const size_t tail = x.size() - static_cast<size_t>(*NormalizeAxis(
                                         op, a->axis, static_cast<int64_t>(x.size()), false));
      Shape normalized(x.end() - static_cast<ptrdiff_t>(tail), x.end());
      Shape trimmed = p;
      while (trimmed.size() > tail && trimmed.front() == 1) trimmed.erase(trimmed.begin());
      while (trimmed.size() < normalized.size()) trimmed.insert(trimmed.begin(), 1);
      if (trimmed != normalized) {
        return Bad(op, absl::StrCat(what, " has shape ", S(p), "; expected the normalized shape ",
                                    S(normalized), " of input ", S(x)));
      }
    } else if (p.size() != 1 || p[0] != r.params) {
      return Bad(op, absl::StrCat(what, " has shape ", S(p), "; expected [", r.params, "]"));
    }
  }
  TensorDesc out = *in[0];
  out.shape = a->channels_first_output ? Permuted(x, ChannelsFirstPerm(x.size())) : x;
  return out;
}

absl::Status CheckStash(OnnxNodeContext& n) {
  RECQ_ASSIGN_OR_RETURN(int64_t stash, n.Int("stash_type", 1));
  if (stash != 1) {
    return n.Unsupported(absl::StrCat("stash_type ", stash, " (only 1, float32, is supported)"));
  }
  return absl::OkStatus();
}

// LayerNormalization's outputs Mean and InvStdDev (x's shape with 1s from
// the axis on), where a graph reads them: ReduceMean(x), then
// 1 / sqrt(ReduceMean((x - mean)^2) + epsilon), as graph nodes beside the
// LayerNorm kernel (which computes Y alone).
absl::Status EmitLayerNormStatistics(OnnxNodeContext& n, ValueId x, const NormalizationAttrs& a) {
  OnnxNodeEmitter* e = EmitterOf(n);
  if (e == nullptr) return n.Unsupported("outputs Mean and InvStdDev need an importer that emits");
  const int64_t rank = static_cast<int64_t>(n.desc(x).shape.size());
  const int64_t axis = a.axis < 0 ? a.axis + rank : a.axis;
  if (axis < 0 || axis >= rank) {
    return n.Invalid(absl::StrCat("axis ", a.axis, " is out of range for rank ", rank));
  }
  ReduceAttrs over;
  for (int64_t i = axis; i < rank; ++i) over.axes.push_back(i);
  const OpType mean_op("ReduceMean");
  RECQ_ASSIGN_OR_RETURN(ValueId mean, e->EmitValue(mean_op, {x}, over, "mean"));
  if (n.OutputUsed(1)) {
    RECQ_RETURN_IF_ERROR(n.EmitOutput(1, OpType::kIdentity, {mean}, {}));
  }
  if (!n.OutputUsed(2)) return absl::OkStatus();
  RECQ_ASSIGN_OR_RETURN(ValueId d, e->EmitValue(OpType::kSub, {x, mean}, {}, "centered"));
  RECQ_ASSIGN_OR_RETURN(ValueId sq, e->EmitValue(OpType::kMul, {d, d}, {}, "squared"));
  RECQ_ASSIGN_OR_RETURN(ValueId var, e->EmitValue(mean_op, {sq}, over, "variance"));
  OnnxConstant eps;
  eps.floats = {a.epsilon};
  RECQ_ASSIGN_OR_RETURN(ValueId eps_id, e->AddConstantValue(std::move(eps), "epsilon"));
  RECQ_ASSIGN_OR_RETURN(ValueId ve, e->EmitValue(OpType::kAdd, {var, eps_id}, {}, "var_eps"));
  RECQ_ASSIGN_OR_RETURN(ValueId sd, e->EmitValue(OpType("Sqrt"), {ve}, {}, "stddev"));
  return n.EmitOutput(2, OpType("Reciprocal"), {sd}, {});
}

absl::Status ImportLayerNorm(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"axis", "epsilon", "stash_type"}));
  RECQ_RETURN_IF_ERROR(CheckStash(n));
  NormalizationAttrs a;
  RECQ_ASSIGN_OR_RETURN(a.axis, n.Int("axis", -1));
  RECQ_ASSIGN_OR_RETURN(a.epsilon, n.Float("epsilon", 1e-5f));
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  RECQ_ASSIGN_OR_RETURN(ValueId scale, n.Input(1));
  RECQ_ASSIGN_OR_RETURN(ValueId bias, n.Input(2, /*optional=*/true));
  if (n.OutputUsed(1) || n.OutputUsed(2)) {
    RECQ_RETURN_IF_ERROR(EmitLayerNormStatistics(n, x, a));
  }
  return n.Emit(kLayerNorm, {x, scale, bias}, a);
}

absl::Status ImportInstanceNorm(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"epsilon"}));
  NormalizationAttrs a;
  RECQ_ASSIGN_OR_RETURN(a.epsilon, n.Float("epsilon", 1e-5f));
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  RECQ_ASSIGN_OR_RETURN(ValueId scale, n.Input(1));
  RECQ_ASSIGN_OR_RETURN(ValueId bias, n.Input(2));
  return n.Emit(kInstanceNorm, {x, scale, bias}, a);
}

absl::Status ImportGroupNorm(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"epsilon", "num_groups", "stash_type"}));
  RECQ_RETURN_IF_ERROR(CheckStash(n));
  NormalizationAttrs a;
  RECQ_ASSIGN_OR_RETURN(a.epsilon, n.Float("epsilon", 1e-5f));
  if (!n.HasAttr("num_groups")) return n.Invalid("attribute num_groups is required");
  RECQ_ASSIGN_OR_RETURN(a.num_groups, n.Int("num_groups", 1));
  a.per_group_affine = n.opset() < 21;
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  RECQ_ASSIGN_OR_RETURN(ValueId scale, n.Input(1));
  RECQ_ASSIGN_OR_RETURN(ValueId bias, n.Input(2));
  return n.Emit(kGroupNorm, {x, scale, bias}, a);
}

// The node reads or writes its rows strided in a channels-first tensor,
// which only norm_rows does.
bool StridedRows(const Node& node) {
  const NormalizationAttrs& a = AttrsOr<NormalizationAttrs>(node);
  return a.channels_first_input || a.channels_first_output;
}

absl::Status Lower(LoweringContext& ctx, const Node& node, bool rows) {
  const NormalizationAttrs& a = AttrsOr<NormalizationAttrs>(node);
  RECQ_ASSIGN_OR_RETURN(Rows r, RowsOf(node.op, a, ShapeOf(ctx, node.inputs[0])));
  const bool has_bias = node.inputs.size() > 2 && node.inputs[2] != kNoValue;
  const size_t local = rows ? GroupForRow(ctx.device(), r.d, 32, 256) : 1;
  std::vector<std::string> options = {absl::StrCat("-DRECQ_NORM_LOCAL=", local)};
  if (a.channels_first_input) options.push_back("-DRECQ_NORM_STRIDED_IN=1");
  if (a.channels_first_output) options.push_back("-DRECQ_NORM_STRIDED_OUT=1");
  Dispatch& d =
      ctx.Emit(rows ? MakeDispatch(ctx, "normalization.cl", "norm_rows", {size_t(r.rows) * local},
                                   std::move(options))
                    : MakeDispatch(ctx, "normalization.cl", "norm_plain", {size_t(r.rows)}));
  if (rows) d.local = {local, 1, 1};
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]),
            ctx.Arg(has_bias ? node.inputs[2] : node.inputs[1]), ctx.Arg(node.outputs[0])};
  AddInts(d, {r.d, has_bias ? 1 : 0, r.pm_mod, r.pm_a, r.pm_div});
  if (rows) AddInts(d, {r.spatial});
  d.args.push_back(DispatchArg::Scalar(a.epsilon));
  return absl::OkStatus();
}

// LayerNorm on CPUs: an item per row, float16 vectors along it.
absl::Status LowerRowsVec(LoweringContext& ctx, const Node& node) {
  const NormalizationAttrs& a = AttrsOr<NormalizationAttrs>(node);
  RECQ_ASSIGN_OR_RETURN(Rows r, RowsOf(node.op, a, ShapeOf(ctx, node.inputs[0])));
  const bool has_bias = node.inputs.size() > 2 && node.inputs[2] != kNoValue;
  Dispatch d;
  d.label = "norm_rows_vec";
  d.kernel = ctx.Kernel("normalization.cl", "norm_rows_vec");
  const std::array<size_t, 3> range = {size_t(r.rows), 1, 1};
  SetRange(d, range, WorkGroupFor(range, 16));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]),
            ctx.Arg(has_bias ? node.inputs[2] : node.inputs[1]), ctx.Arg(node.outputs[0])};
  AddInts(d, {r.d, has_bias ? 1 : 0, r.rows});
  d.args.push_back(DispatchArg::Scalar(a.epsilon));
  ctx.Emit(std::move(d));
  return absl::OkStatus();
}

}  // namespace

RECQ_REGISTER_OPS(Normalization) {
  struct Family {
    OpType type;
    std::vector<OnnxMapping> onnx;
  };
  const Family families[] = {
      {kLayerNorm, {{"", "LayerNormalization", 17, 21, ImportLayerNorm}}},
      {kInstanceNorm, {{"", "InstanceNormalization", 6, kOnnxOpsetMax, ImportInstanceNorm}}},
      // Opset 18 (to 20) has per-group scale and bias, 21 per-channel ones.
      {kGroupNorm,
       {{"", "GroupNormalization", 18, 20, ImportGroupNorm},
        {"", "GroupNormalization", 21, 21, ImportGroupNorm}}},
  };
  for (const Family& f : families) {
    OpDef def;
    def.type = f.type;
    def.onnx = f.onnx;
    def.infer = [op = f.type](const OpAttrs& attrs, InferInputs in) {
      return Infer(op, attrs, in);
    };
    def.variants = {
        {"norm_rows",
         [](const Node&, const LoweringContext& ctx) { return ctx.device().GpuKernels(); },
         [](LoweringContext& ctx, const Node& node) { return Lower(ctx, node, true); }},
        {"norm_rows_vec",
         [](const Node& node, const LoweringContext& ctx) {
           return ctx.device().CpuKernels() && node.op == kLayerNorm && !StridedRows(node);
         },
         LowerRowsVec},
        {"norm_plain", [](const Node& node, const LoweringContext&) { return !StridedRows(node); },
         [](LoweringContext& ctx, const Node& node) { return Lower(ctx, node, false); }}};
    RECQ_RETURN_IF_ERROR(table.Add(std::move(def)));
  }
  return absl::OkStatus();
}

}  // namespace recq::internal
