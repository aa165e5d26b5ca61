// Ops that copy their input's elements at strided offsets: Slice
// (SliceAttrs; ONNX Slice is imported by shape_folding.cc, which folds it on
// constants), Split (imported as one Slice per output), Tile (TileAttrs) and
// Expand (ExpandAttrs, numpy broadcasting). Each lowers to one
// strided_copy dispatch whose dimensions are collapsed where the source is
// contiguous, so a Split of channels is a contiguous range copy (a copy
// kernel rather than a view: the memory plan aliases whole values only).
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/ops/constant_eval.h"
#include "engine/ops/layout_attrs.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/ops/strided_copy.h"
#include "engine/ops/typed.h"
#include "recq/status_macros.h"

namespace recq::internal {

absl::Status EmitStridedCopy(LoweringContext& ctx, const Node& node, int64_t base, Shape dims,
                             Shape strides, Shape mods) {
  // Drop unit dimensions, then merge a dimension into the next inner one
  // where the source runs on contiguously.
  Shape d2, s2, m2;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    d2.push_back(dims[i]);
    s2.push_back(strides[i]);
    m2.push_back(mods[i]);
  }
  Shape d3, s3, m3;
  for (size_t i = d2.size(); i-- > 0;) {
    if (!d3.empty() && m2[i] == d2[i] && m3.front() == d3.front() &&
        s2[i] == s3.front() * d3.front()) {
      d3.front() *= d2[i];
      m3.front() = d3.front();
      continue;
    }
    d3.insert(d3.begin(), d2[i]);
    s3.insert(s3.begin(), s2[i]);
    m3.insert(m3.begin(), m2[i]);
  }
  if (d3.empty()) {
    d3 = {1};
    s3 = {1};
    m3 = {1};
  }
  if (d3.size() > 8) return Unsupported(node, "a strided copy of more than 8 dimensions");
  const int64_t total = Product(dims, 0, dims.size());
  if (total >= (int64_t{1} << 31)) return Unsupported(node, "2^31 or more output elements");
  bool wrap = false;
  for (size_t i = 0; i < d3.size(); ++i) wrap |= m3[i] != d3[i];
  std::vector<std::string> options = {absl::StrCat("-DRANK=", d3.size()),
                                      absl::StrCat("-DWRAP=", wrap ? 1 : 0)};
  // Tensors other than float32 (a bool or int64 mask) copy their bits.
  const DataType dtype = ctx.graph().value(node.outputs[0]).desc.dtype;
  const bool bits = dtype != DataType::kFloat32;
  if (bits) options.push_back(absl::StrCat("-DCOPY_BITS=", TypedBits(dtype)));
  if (ctx.device().CpuKernels() && !wrap && d3.back() >= 4 && !bits) {
    // CPUs: a row of the innermost dimension per item.
    const int64_t rows = total / d3.back();
    Dispatch d;
    d.label = "strided_copy_rows";
    d.kernel = ctx.Kernel("strided_copy.cl", "strided_copy_rows", options);
    const std::array<size_t, 3> range = {size_t(rows), 1, 1};
    SetRange(d, range, WorkGroupFor(range, 16));
    d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.outputs[0])};
    d.args.push_back(DispatchArg::Scalar(static_cast<cl_int>(base)));
    d.args.push_back(DispatchArg::Scalar(Pad8(d3, 1)));
    d.args.push_back(DispatchArg::Scalar(Pad8(s3, 0)));
    AddInts(d, {rows});
    ctx.Emit(std::move(d));
    return absl::OkStatus();
  }
  Dispatch& d =
      ctx.Emit(MakeDispatch(ctx, "strided_copy.cl", "strided_copy", {size_t(total)}, options));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.outputs[0])};
  d.args.push_back(DispatchArg::Scalar(static_cast<cl_int>(base)));
  d.args.push_back(DispatchArg::Scalar(Pad8(d3, 1)));
  d.args.push_back(DispatchArg::Scalar(Pad8(s3, 0)));
  d.args.push_back(DispatchArg::Scalar(Pad8(m3, 1)));
  return absl::OkStatus();
}

namespace {

const OpType kSlice("Slice");
const OpType kTile("Tile");
const OpType kExpand("Expand");

// Where a Slice reads along every axis of `x`.
struct SliceBox {
  Shape begin, step, count;
};

absl::StatusOr<SliceBox> ResolveSlice(const Shape& x, const SliceAttrs& a) {
  const int64_t rank = static_cast<int64_t>(x.size());
  if (a.starts.size() != a.ends.size() || (!a.axes.empty() && a.axes.size() != a.starts.size()) ||
      (!a.steps.empty() && a.steps.size() != a.starts.size())) {
    return Bad(kSlice, absl::StrCat("starts, ends, axes and steps must have one length, got ",
                                    a.starts.size(), ", ", a.ends.size(), ", ", a.axes.size(),
                                    " and ", a.steps.size()));
  }
  SliceBox box{Shape(rank, 0), Shape(rank, 1), x};
  std::vector<bool> seen(rank, false);
  for (size_t k = 0; k < a.starts.size(); ++k) {
    int64_t axis = a.axes.empty() ? static_cast<int64_t>(k) : a.axes[k];
    RECQ_ASSIGN_OR_RETURN(axis, NormalizeAxis(kSlice, axis, rank, false));
    if (seen[axis]) return Bad(kSlice, absl::StrCat("axis ", axis, " is sliced twice"));
    seen[axis] = true;
    const int64_t dim = x[axis];
    const int64_t st = a.steps.empty() ? 1 : a.steps[k];
    if (st == 0) return Bad(kSlice, "a step is 0");
    // Starts and ends may be INT64_MAX / INT64_MIN ("to the end"): clamp
    // before adding.
    auto wrap = [dim](int64_t v) {
      v = std::clamp<int64_t>(v, -(int64_t{1} << 62), int64_t{1} << 62);
      return v < 0 ? v + dim : v;
    };
    int64_t b = wrap(a.starts[k]);
    int64_t e = wrap(a.ends[k]);
    int64_t n = 0;
    if (st > 0) {
      b = std::clamp<int64_t>(b, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      n = e > b ? (e - b + st - 1) / st : 0;
    } else {
      b = std::clamp<int64_t>(b, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      n = b > e ? (b - e - st - 1) / -st : 0;
    }
    box.begin[axis] = b;
    box.step[axis] = st;
    box.count[axis] = n;
  }
  return box;
}

absl::StatusOr<TensorDesc> InferSlice(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kSlice, in, 1, 1));
  RECQ_ASSIGN_OR_RETURN(const SliceAttrs* a, AttrsOf<SliceAttrs>(kSlice, attrs));
  RECQ_ASSIGN_OR_RETURN(SliceBox box, ResolveSlice(in[0]->shape, *a));
  TensorDesc out = *in[0];
  out.shape = box.count;
  return out;
}

absl::StatusOr<TensorDesc> InferTile(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kTile, in, 1, 1));
  RECQ_ASSIGN_OR_RETURN(const TileAttrs* a, AttrsOf<TileAttrs>(kTile, attrs));
  TensorDesc out = *in[0];
  if (a->repeats.size() != out.shape.size()) {
    return Bad(kTile, absl::StrCat("repeats ", S(a->repeats), " must have one entry per axis of ",
                                   S(out.shape)));
  }
  for (size_t i = 0; i < out.shape.size(); ++i) {
    if (a->repeats[i] < 0) return Bad(kTile, absl::StrCat("repeats ", S(a->repeats), " < 0"));
    out.shape[i] *= a->repeats[i];
  }
  return out;
}

absl::StatusOr<TensorDesc> InferExpand(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kExpand, in, 1, 1));
  RECQ_ASSIGN_OR_RETURN(const ExpandAttrs* a, AttrsOf<ExpandAttrs>(kExpand, attrs));
  TensorDesc out = *in[0];
  RECQ_ASSIGN_OR_RETURN(out.shape, Broadcast(kExpand, in[0]->shape, a->shape));
  return out;
}

absl::Status LowerSlice(LoweringContext& ctx, const Node& node) {
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  RECQ_ASSIGN_OR_RETURN(SliceBox box, ResolveSlice(x, AttrsOr<SliceAttrs>(node)));
  const Shape in_strides = RowMajor(x);
  int64_t base = 0;
  Shape strides(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    base += box.begin[i] * in_strides[i];
    strides[i] = box.step[i] * in_strides[i];
  }
  return EmitStridedCopy(ctx, node, base, box.count, strides, box.count);
}

absl::Status LowerTile(LoweringContext& ctx, const Node& node) {
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const Shape& y = ShapeOf(ctx, node.outputs[0]);
  Shape mods = x;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] == y[i]) mods[i] = y[i];
  }
  return EmitStridedCopy(ctx, node, 0, y, RowMajor(x), mods);
}

absl::Status LowerExpand(LoweringContext& ctx, const Node& node) {
  // Other element types (an int64 attention mask) copy their bits.
  if (ctx.graph().value(node.outputs[0]).desc.dtype != DataType::kFloat32) {
    return EmitBroadcastCopy(ctx, node);
  }
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const Shape& y = ShapeOf(ctx, node.outputs[0]);
  Shape strides(y.size(), 0);
  const Shape xs = RowMajor(x);
  const size_t lead = y.size() - x.size();
  for (size_t i = 0; i < x.size(); ++i) strides[lead + i] = x[i] == 1 ? 0 : xs[i];
  return EmitStridedCopy(ctx, node, 0, y, strides, y);
}

absl::StatusOr<std::vector<int64_t>> IntsOfConstant(OnnxNodeContext& n, int i, const char* what) {
  absl::StatusOr<const OnnxConstant*> c = n.ConstantInput(i);
  if (!c.ok() || *c == nullptr) {
    return n.Unsupported(
        absl::StrCat(what, " (input ", i, ") must be a constant known when the model is loaded"));
  }
  if ((*c)->is_float) return n.Invalid(absl::StrCat(what, " must be an integer tensor"));
  return (*c)->ints;
}

// Split: one Slice node per output along `axis`.
absl::Status ImportSplit(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"axis", "split", "num_outputs"}));
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  const Shape& shape = n.desc(x).shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  RECQ_ASSIGN_OR_RETURN(int64_t axis, n.Int("axis", 0));
  if (axis < -rank || axis >= rank) {
    return n.Invalid(absl::StrCat("axis ", axis, " is out of range for rank ", rank));
  }
  if (axis < 0) axis += rank;
  const int64_t dim = shape[axis];
  const int64_t outputs = n.num_outputs();
  std::vector<int64_t> split;
  if (n.opset() < 13) {
    RECQ_ASSIGN_OR_RETURN(split, n.Ints("split"));
  } else if (n.num_inputs() > 1 && !n.ConstantInput(1).ok()) {
    return n.Unsupported("split (input 1) must be a constant known when the model is loaded");
  } else if (n.num_inputs() > 1 && *n.ConstantInput(1) != nullptr) {
    RECQ_ASSIGN_OR_RETURN(split, IntsOfConstant(n, 1, "split"));
  }
  if (split.empty()) {
    int64_t parts = outputs;
    if (n.opset() >= 18) {
      RECQ_ASSIGN_OR_RETURN(parts, n.Int("num_outputs", outputs));
      if (parts != outputs) {
        return n.Invalid(
            absl::StrCat("num_outputs is ", parts, " but the node has ", outputs, " outputs"));
      }
    }
    if (parts <= 0) return n.Invalid("has no outputs");
    // Before opset 18 the split must be even; from 18 the last part may be
    // smaller (ceil(dim / parts) each).
    if (n.opset() < 18 && dim % parts != 0) {
      return n.Invalid(absl::StrCat("dimension ", dim, " of axis ", axis,
                                    " does not split evenly into ", parts, " outputs"));
    }
    const int64_t chunk = (dim + parts - 1) / parts;
    for (int64_t i = 0; i < parts; ++i) {
      split.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
    }
  }
  if (static_cast<int64_t>(split.size()) != outputs) {
    return n.Invalid(absl::StrCat("split [", absl::StrJoin(split, ","), "] has ", split.size(),
                                  " parts for ", outputs, " outputs"));
  }
  int64_t sum = 0;
  for (int64_t s : split) {
    if (s < 0)
      return n.Invalid(absl::StrCat("split [", absl::StrJoin(split, ","), "] is negative"));
    sum += s;
  }
  if (sum != dim) {
    return n.Invalid(absl::StrCat("split [", absl::StrJoin(split, ","), "] sums to ", sum,
                                  ", axis ", axis, " has ", dim));
  }
  int64_t start = 0;
  for (int i = 0; i < outputs; ++i) {
    if (!n.output_name(i).empty()) {
      RECQ_RETURN_IF_ERROR(
          n.EmitOutput(i, kSlice, {x}, SliceAttrs{{start}, {start + split[i]}, {axis}, {}}));
    }
    start += split[i];
  }
  return absl::OkStatus();
}

absl::Status ImportTile(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({}));
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> repeats, IntsOfConstant(n, 1, "repeats"));
  return n.Emit(kTile, {x}, TileAttrs{std::move(repeats)});
}

// Expand: folded when the data is a constant (shape computations), else a
// device copy.
absl::Status ImportExpand(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({}));
  RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> shape, IntsOfConstant(n, 1, "shape"));
  absl::StatusOr<const OnnxConstant*> c = n.ConstantInput(0);
  if (c.ok() && *c != nullptr) {
    const OnnxConstant& in = **c;
    absl::StatusOr<Shape> out_shape = Broadcast(kExpand, in.dims, shape);
    if (!out_shape.ok()) return n.Invalid(out_shape.status().message());
    const int64_t total = Numel(*out_shape);
    RECQ_RETURN_IF_ERROR(n.ReserveFolded(total));
    OnnxConstant out;
    out.is_float = in.is_float;
    out.dims = *out_shape;
    const size_t lead = out_shape->size() - in.dims.size();
    const Shape in_strides = RowMajor(in.dims);
    for (int64_t flat = 0; flat < total; ++flat) {
      int64_t rem = flat, from = 0;
      for (size_t d = out_shape->size(); d-- > 0;) {
        const int64_t idx = rem % (*out_shape)[d];
        rem /= (*out_shape)[d];
        if (d >= lead && in.dims[d - lead] != 1) from += idx * in_strides[d - lead];
      }
      if (in.is_float) {
        out.floats.push_back(in.floats[from]);
      } else {
        out.ints.push_back(in.ints[from]);
      }
    }
    return n.DefineConstant(std::move(out));
  }
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  return n.Emit(kExpand, {x}, ExpandAttrs{std::move(shape)});
}

}  // namespace

RECQ_REGISTER_OPS(StridedCopy) {
  OpDef slice;
  slice.type = kSlice;
  slice.infer = InferSlice;
  slice.typed = true;  // any element type: a copy
  slice.variants = {{"strided_copy", nullptr, LowerSlice}};
  RECQ_RETURN_IF_ERROR(table.Add(std::move(slice)));
  RECQ_RETURN_IF_ERROR(table.AddOnnx({"", "Split", 2, 21, ImportSplit}));

  OpDef tile;
  tile.type = kTile;
  tile.onnx = {{"", "Tile", 6, kOnnxOpsetMax, ImportTile}};
  tile.infer = InferTile;
  tile.variants = {{"strided_copy", nullptr, LowerTile}};
  RECQ_RETURN_IF_ERROR(table.Add(std::move(tile)));

  OpDef expand;
  expand.type = kExpand;
  expand.onnx = {{"", "Expand", 8, kOnnxOpsetMax, ImportExpand}};
  expand.typed = true;  // any element type: a copy
  expand.infer = InferExpand;
  expand.variants = {{"strided_copy", nullptr, LowerExpand}};
  return table.Add(std::move(expand));
}

}  // namespace recq::internal
