// Pooling: MaxPool and AveragePool over 2-D windows (PoolAttrs; 1-D and
// 3-D ones import as 2-D pools on views), and
// GlobalAveragePool over every spatial position. Their kernels apply a fused
// activation.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/onnx_emitter.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/ops/typed.h"
#include "engine/ops/window.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

absl::StatusOr<TensorDesc> InferWindowPool(OpType op, const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(op, in, 1, 1));
  RECQ_ASSIGN_OR_RETURN(const PoolAttrs* a, AttrsOf<PoolAttrs>(op, attrs));
  const Shape& x = in[0]->shape;
  if (x.size() != 4) return Bad(op, absl::StrCat("input must be NCHW (rank 4), got ", S(x)));
  Shape out = {x[0], x[1], 0, 0};
  for (int i = 0; i < 2; ++i) {
    if (a->pads[i] >= a->kernel[i] || a->pads[2 + i] >= a->kernel[i]) {
      return Bad(op, "pads must be smaller than the kernel");
    }
    RECQ_ASSIGN_OR_RETURN(out[2 + i],
                          WindowOutput(op, x[2 + i], a->pads[i], a->pads[2 + i], a->kernel[i],
                                       a->strides[i], a->dilations[i], a->ceil_mode));
  }
  return TensorDesc{out};
}

// A 3-D pool (N, C, D, H, W) runs as two 2-D pools: the (H, W) window on
// the (N, C*D, H, W) view, then the D window, kernel (kd, 1), on the
// (N, C, D, H'*W') view of its result. Max and average separate exactly:
// each axis keeps its own stride, dilation, pads and ceil_mode, and the
// valid taps of a window (AveragePool's divisor) are a box, whose count is
// the product of the per-axis counts.
absl::Status ImportPool3D(OnnxNodeContext& n, OpType op, ValueId x,
                          const std::vector<int64_t>& kernel, const PoolAttrs& base) {
  OnnxNodeEmitter* e = EmitterOf(n);
  if (e == nullptr)
    return n.Unsupported("a 3-D pool needs an importer that can emit several nodes");
  const Shape s = n.desc(x).shape;
  if (kernel.size() != 3) return n.Invalid("kernel_shape must have 3 values for a 3-D input");
  RECQ_ASSIGN_OR_RETURN(const Window3D win,
                        ResolveWindow3D(n, s, {kernel[0], kernel[1], kernel[2]}));
  const std::array<int64_t, 3>& strides = win.strides;
  const std::array<int64_t, 3>& dilations = win.dilations;
  const std::array<int64_t, 6>& pads = win.pads;
  PoolAttrs hw = base;
  hw.kernel = {kernel[1], kernel[2]};
  hw.strides = {strides[1], strides[2]};
  hw.dilations = {dilations[1], dilations[2]};
  hw.pads = {pads[1], pads[2], pads[4], pads[5]};
  RECQ_ASSIGN_OR_RETURN(
      ValueId planes,
      e->EmitValue(OpType::kReshape, {x}, ReshapeAttrs{{s[0], s[1] * s[2], s[3], s[4]}}, "planes"));
  RECQ_ASSIGN_OR_RETURN(ValueId y_hw, e->EmitValue(op, {planes}, hw, "hw"));
  const Shape hw_out = n.desc(y_hw).shape;
  RECQ_ASSIGN_OR_RETURN(
      ValueId columns,
      e->EmitValue(OpType::kReshape, {y_hw},
                   ReshapeAttrs{{s[0], s[1], s[2], hw_out[2] * hw_out[3]}}, "depth"));
  PoolAttrs d = base;
  d.kernel = {kernel[0], 1};
  d.strides = {strides[0], 1};
  d.dilations = {dilations[0], 1};
  d.pads = {pads[0], 0, pads[3], 0};
  RECQ_ASSIGN_OR_RETURN(ValueId y_d, e->EmitValue(op, {columns}, d, "d"));
  const int64_t depth_out = n.desc(y_d).shape[2];
  return n.Emit(OpType::kReshape, {y_d},
                ReshapeAttrs{{s[0], s[1], depth_out, hw_out[2], hw_out[3]}});
}

absl::Status ImportWindowPool(OnnxNodeContext& n, OpType op) {
  const bool max = op == OpType::kMaxPool;
  if (max) {
    RECQ_RETURN_IF_ERROR(n.CheckAttrs({"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads",
                                       "storage_order", "strides"}));
    RECQ_ASSIGN_OR_RETURN(int64_t storage_order, n.Int("storage_order", 0));
    if (storage_order != 0) {
      return n.Unsupported(absl::StrCat("storage_order ", storage_order, " is not supported"));
    }
    if (n.num_outputs() > 1 && !n.output_name(1).empty()) {
      return n.Unsupported("the Indices output is not supported");
    }
  } else {
    RECQ_RETURN_IF_ERROR(n.CheckAttrs({"auto_pad", "ceil_mode", "count_include_pad", "dilations",
                                       "kernel_shape", "pads", "strides"}));
  }
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, n.Ints("kernel_shape"));
  // MaxPool of int8 or uint8 (2-D): the float32 pool of the converted
  // values, converted back (exact: every 8-bit value is a float32, and a
  // max picks one of them).
  const DataType in_type = n.desc(x).dtype;
  const bool eight_bit = max && (in_type == DataType::kInt8 || in_type == DataType::kUInt8);
  if (eight_bit) {
    OnnxNodeEmitter* e = EmitterOf(n);
    if (e == nullptr || n.desc(x).shape.size() != 4) {
      return n.Unsupported(
          absl::StrCat("MaxPool of ", n.desc(x).ToString(), " (8-bit inputs: 2-D pools only)"));
    }
    RECQ_ASSIGN_OR_RETURN(x, e->EmitValue(kCast, {x}, CastAttrs{DataType::kFloat32}, "float"));
  }
  if (n.desc(x).shape.size() == 5) {
    PoolAttrs base;
    RECQ_ASSIGN_OR_RETURN(int64_t ceil_mode, n.Int("ceil_mode", 0));
    base.ceil_mode = ceil_mode != 0;
    if (!max) {
      RECQ_ASSIGN_OR_RETURN(int64_t include, n.Int("count_include_pad", 0));
      base.count_include_pad = include != 0;
    }
    return ImportPool3D(n, op, x, kernel, base);
  }
  // A 1-D pool (N, C, L) runs as the 2-D one on (N, C, 1, L).
  const bool one_d = n.desc(x).shape.size() == 3;
  if (one_d) {
    if (kernel.size() != 1) return n.Invalid("kernel_shape must have 1 value for a 1-D input");
    kernel.insert(kernel.begin(), 1);
    RECQ_ASSIGN_OR_RETURN(x, ViewAs2D(n, x));
  }
  const TensorDesc& xd = n.desc(x);
  if (xd.shape.size() != 4) {
    return n.Unsupported(absl::StrCat("input is ", xd.ToString(),
                                      "; only 1-D (N, C, L), 2-D (NCHW) and 3-D (NCDHW) are "
                                      "supported"));
  }
  if (kernel.size() != 2) return n.Invalid("kernel_shape must have 2 values for a 2-D input");
  RECQ_ASSIGN_OR_RETURN(int64_t ceil_mode, n.Int("ceil_mode", 0));
  RECQ_ASSIGN_OR_RETURN(Window win, ResolveWindow(n, xd, {kernel[0], kernel[1]}, one_d));
  PoolAttrs attrs;
  attrs.kernel = win.kernel;
  attrs.strides = win.strides;
  attrs.dilations = win.dilations;
  attrs.pads = win.pads;
  attrs.ceil_mode = ceil_mode != 0;
  if (!max) {
    RECQ_ASSIGN_OR_RETURN(int64_t include, n.Int("count_include_pad", 0));
    attrs.count_include_pad = include != 0;
  }
  if (one_d) return EmitFrom2D(n, op, {x}, attrs);
  if (eight_bit) {
    RECQ_ASSIGN_OR_RETURN(ValueId y, EmitterOf(n)->EmitValue(op, {x}, attrs, "pooled"));
    return n.Emit(kCast, {y}, CastAttrs{in_type});
  }
  return n.Emit(op, {x}, attrs);
}

// `rows`: AveragePool as avg_pool_rows (8 outputs of a row per work-item,
// as MaxPool always is) rather than avg_pool (one output per work-item).
absl::Status LowerWindowPoolImpl(LoweringContext& ctx, const Node& node, bool rows) {
  const auto& a = AttrsOr<PoolAttrs>(node);
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  const bool max = node.op == OpType::kMaxPool;
  rows = rows || max;
  const size_t columns = rows ? CeilDiv(out[3], 8) : size_t(out[3]);
  const char* kernel = max ? "max_pool_rows" : rows ? "avg_pool_rows" : "avg_pool";
  Dispatch& d = ctx.Emit(
      MakeDispatch(ctx, "pool.cl", kernel, {columns, size_t(out[2]), size_t(out[0] * out[1])}));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.outputs[0])};
  AddInts(d, {x[2], x[3], out[2], out[3], a.kernel[0], a.kernel[1], a.strides[0], a.strides[1],
              a.pads[0], a.pads[1]});
  if (!max) AddInts(d, {a.pads[2], a.pads[3]});
  AddInts(d, {a.dilations[0], a.dilations[1]});
  if (!max) AddInts(d, {a.count_include_pad ? 1 : 0});
  AddFusedActivation(ctx, d, node);
  return absl::OkStatus();
}

absl::Status LowerWindowPool(LoweringContext& ctx, const Node& node) {
  return LowerWindowPoolImpl(ctx, node, /*rows=*/false);
}

// AveragePool, CPU: one output per work-item with a branch per tap ran at
// ~1 GB/s on PoCL (Inception-v3's 3x3 stride-1 pools, 12 % of its time).
absl::Status LowerAvgPoolRows(LoweringContext& ctx, const Node& node) {
  return LowerWindowPoolImpl(ctx, node, /*rows=*/true);
}

// GlobalAveragePool, GPU: one work-group reduces each (n, c) row.
absl::Status LowerGapRows(LoweringContext& ctx, const Node& node) {
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const int64_t inner = Product(x, 2, x.size());
  const size_t local = GroupForRow(ctx.device(), inner, 32, 256);
  Dispatch& d =
      ctx.Emit(MakeDispatch(ctx, "pool.cl", "global_avg_pool_rows", {size_t(x[0] * x[1]) * local},
                            {absl::StrCat("-DRECQ_GAP_LOCAL=", local)}));
  d.local = {local, 1, 1};
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.outputs[0])};
  AddInts(d, {inner});
  AddFusedActivation(ctx, d, node);
  return absl::OkStatus();
}

// GlobalAveragePool, CPU: one work-item per (n, c) row.
absl::Status LowerGap(LoweringContext& ctx, const Node& node) {
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  Dispatch& d = ctx.Emit(MakeDispatch(ctx, "pool.cl", "global_avg_pool", {size_t(x[0] * x[1])}));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.outputs[0])};
  AddInts(d, {Product(x, 2, x.size())});
  AddFusedActivation(ctx, d, node);
  return absl::OkStatus();
}

}  // namespace

RECQ_REGISTER_OPS(Pool) {
  for (OpType op : {OpType::kMaxPool, OpType::kAveragePool}) {
    OpDef def;
    def.type = op;
    def.onnx = {{"", op.name(), 1, kOnnxOpsetMax,
                 [op](OnnxNodeContext& n) { return ImportWindowPool(n, op); }}};
    def.infer = [op](const OpAttrs& attrs, InferInputs in) {
      return InferWindowPool(op, attrs, in);
    };
    def.export_onnx = [op](const Node& node, const Graph&, OnnxNodeWriter& out) -> absl::Status {
      const auto& a = AttrsOr<PoolAttrs>(node);
      const bool max = op == OpType::kMaxPool;
      // AveragePool has no dilations before opset 19.
      if (!max && (a.dilations[0] != 1 || a.dilations[1] != 1)) {
        return absl::UnimplementedError(absl::StrCat(
            "node '", node.name, "': a dilated AveragePool cannot be written at opset 13"));
      }
      out.SetOpType(op.name());
      out.SetInts("kernel_shape", {a.kernel[0], a.kernel[1]});
      out.SetInts("strides", {a.strides[0], a.strides[1]});
      if (max) out.SetInts("dilations", {a.dilations[0], a.dilations[1]});
      out.SetInts("pads", {a.pads[0], a.pads[1], a.pads[2], a.pads[3]});
      out.SetInt("ceil_mode", a.ceil_mode ? 1 : 0);
      if (!max) out.SetInt("count_include_pad", a.count_include_pad ? 1 : 0);
      return absl::OkStatus();
    };
    if (op == OpType::kMaxPool) {
      def.variants = {{"max_pool_rows", nullptr, LowerWindowPool}};
    } else {
      def.variants = {
          {"avg_pool_rows",
           [](const Node&, const LoweringContext& ctx) { return ctx.device().CpuKernels(); },
           LowerAvgPoolRows},
          {"avg_pool", nullptr, LowerWindowPool}};
    }
    def.absorbs_activation = true;
    RECQ_RETURN_IF_ERROR(table.Add(std::move(def)));
  }
  OpDef gap;
  gap.type = OpType::kGlobalAveragePool;
  gap.onnx = {{"", "GlobalAveragePool", 1, kOnnxOpsetMax, [](OnnxNodeContext& n) -> absl::Status {
                 RECQ_RETURN_IF_ERROR(n.CheckAttrs({}));
                 RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
                 return n.Emit(OpType::kGlobalAveragePool, {x}, {});
               }}};
  gap.infer = [](const OpAttrs&, InferInputs in) -> absl::StatusOr<TensorDesc> {
    RECQ_RETURN_IF_ERROR(CheckInputCount(OpType::kGlobalAveragePool, in, 1, 1));
    Shape x = in[0]->shape;
    if (x.size() < 3) {
      return Bad(OpType::kGlobalAveragePool, absl::StrCat("input must have rank >= 3, got ", S(x)));
    }
    for (size_t i = 2; i < x.size(); ++i) x[i] = 1;
    return TensorDesc{x};
  };
  gap.variants = {
      {"global_avg_pool_rows",
       [](const Node&, const LoweringContext& ctx) { return ctx.device().GpuKernels(); },
       LowerGapRows},
      {"global_avg_pool", nullptr, LowerGap}};
  gap.export_onnx = [](const Node&, const Graph&, OnnxNodeWriter& out) {
    out.SetOpType("GlobalAveragePool");
    return absl::OkStatus();
  };
  gap.absorbs_activation = true;
  return table.Add(std::move(gap));
}

}  // namespace recq::internal
