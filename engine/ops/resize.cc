// Resize (ResizeAttrs): nearest (every nearest_mode), linear and cubic
// interpolation of any axes, with the coordinate transformation modes
// half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners,
// asymmetric and tf_half_pixel_for_nn; scales or sizes from constant inputs. ONNX Resize opsets
// 10-21 and Upsample 7-9 (asymmetric coordinates).
//
// Separable: for every axis the taps (source index, weight) of each output
// coordinate are computed on the host in double and uploaded as a constant
// table; the kernel sums the product of one tap per resized axis. Bilinear
// or nearest resizing of the last two axes only (the segmentation heads'
// upsampling) has its own 2-D kernel.
#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/ops/layout_attrs.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

const OpType kResize("Resize");

absl::StatusOr<TensorDesc> Infer(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kResize, in, 1, 1));
  RECQ_ASSIGN_OR_RETURN(const ResizeAttrs* a, AttrsOf<ResizeAttrs>(kResize, attrs));
  const Shape& x = in[0]->shape;
  if (a->out_shape.size() != x.size() || a->scales.size() != x.size()) {
    return Bad(kResize, absl::StrCat("output shape ", S(a->out_shape), " and ", a->scales.size(),
                                     " scales must match the rank of ", S(x)));
  }
  for (size_t i = 0; i < x.size(); ++i) {
    if (a->out_shape[i] <= 0 || !(a->scales[i] > 0)) {
      return Bad(kResize, absl::StrCat("output shape ", S(a->out_shape), " and scale ",
                                       a->scales[i], " must be positive"));
    }
  }
  TensorDesc out = *in[0];
  out.shape = a->out_shape;
  return out;
}

// The taps of one axis: for each output coordinate, `count` (index, weight)
// pairs.
struct AxisTaps {
  int count = 0;  // 0: the axis is not resized (identity)
  std::vector<float> table;
};

double SourceCoordinate(const ResizeAttrs& a, int64_t o, int64_t in, int64_t out, double scale) {
  switch (a.coordinates) {
    case ResizeCoordinates::kHalfPixel:
      return (o + 0.5) / scale - 0.5;
    case ResizeCoordinates::kHalfPixelSymmetric: {
      const double adjustment = out / (scale * in);
      const double center = in / 2.0;
      const double offset = center * (1 - adjustment);
      return offset + (o + 0.5) / scale - 0.5;
    }
    case ResizeCoordinates::kPytorchHalfPixel:
      return out > 1 ? (o + 0.5) / scale - 0.5 : 0.0;
    case ResizeCoordinates::kAlignCorners:
      // The resized length is in * scale, unrounded, as in ONNX's reference
      // (the same as `out` when the model gave sizes).
      return out == 1 ? 0.0 : o * double(in - 1) / (in * scale - 1);
    case ResizeCoordinates::kAsymmetric:
      return o / scale;
    case ResizeCoordinates::kTfHalfPixelForNn:
      return (o + 0.5) / scale;
  }
  return 0.0;
}

int64_t NearestIndex(ResizeNearest mode, double x, double scale) {
  switch (mode) {
    case ResizeNearest::kRoundPreferFloor:
      return x - std::floor(x) == 0.5 ? int64_t(std::floor(x)) : int64_t(std::round(x));
    case ResizeNearest::kRoundPreferCeil:
      return x - std::floor(x) == 0.5 ? int64_t(std::ceil(x)) : int64_t(std::round(x));
    case ResizeNearest::kFloor:
      return int64_t(std::floor(x));
    case ResizeNearest::kCeil:
      return int64_t(std::ceil(x));
    case ResizeNearest::kSimple:
      return scale < 1 ? int64_t(std::ceil(x)) : int64_t(x);
  }
  return 0;
}

double CubicWeight(double d, double a) {
  d = std::fabs(d);
  if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
  if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  return 0;
}

// The taps per output of an axis resized from `in` to `out` (0: not
// resized).
int TapCount(const ResizeAttrs& a, int64_t in, int64_t out, double scale) {
  if (in == out && scale == 1.0) return 0;
  return a.mode == ResizeMode::kNearest ? 1 : a.mode == ResizeMode::kLinear ? 2 : 4;
}

AxisTaps TapsOf(const ResizeAttrs& a, int64_t in, int64_t out, double scale) {
  AxisTaps t;
  t.count = TapCount(a, in, out, scale);
  if (t.count == 0) return t;
  auto push = [&t](int64_t index, double weight) {
    t.table.push_back(static_cast<float>(index));
    t.table.push_back(static_cast<float>(weight));
  };
  for (int64_t o = 0; o < out; ++o) {
    const double x = SourceCoordinate(a, o, in, out, scale);
    if (a.mode == ResizeMode::kNearest) {
      push(std::clamp<int64_t>(NearestIndex(a.nearest, x, scale), 0, in - 1), 1.0);
      continue;
    }
    const double base = std::floor(x);
    const double frac = x - base;
    const int64_t i0 = static_cast<int64_t>(base);
    if (a.mode == ResizeMode::kLinear) {
      push(std::clamp<int64_t>(i0, 0, in - 1), 1.0 - frac);
      push(std::clamp<int64_t>(i0 + 1, 0, in - 1), frac);
      continue;
    }
    double w[4], sum = 0;
    for (int k = 0; k < 4; ++k) {
      const int64_t idx = i0 - 1 + k;
      w[k] = CubicWeight(frac - (k - 1), a.cubic_coeff_a);
      if (a.exclude_outside && (idx < 0 || idx >= in)) w[k] = 0;
      sum += w[k];
    }
    for (int k = 0; k < 4; ++k) {
      push(std::clamp<int64_t>(i0 - 1 + k, 0, in - 1), a.exclude_outside ? w[k] / sum : w[k]);
    }
  }
  return t;
}

// Whether the CPU family resizes `node` in two passes (resize_2d_rows, then
// resize_2d_cols through scratch): the last two axes only, 1 or 2 taps
// each, an output row of 16 or more, and no fewer output rows than input
// rows, so that each input row is interpolated along W once and shared by
// the output rows that read it.
bool SeparableOnCpu(const Node& node, const LoweringContext& ctx) {
  if (ctx.device().GpuKernels()) return false;
  const ResizeAttrs& a = AttrsOr<ResizeAttrs>(node);
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const Shape& y = ShapeOf(ctx, node.outputs[0]);
  const size_t rank = x.size();
  if (rank < 2 || rank > 8 || a.scales.size() != rank) return false;
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (TapCount(a, x[i], y[i], a.scales[i]) != 0) return false;
  }
  return TapCount(a, x[rank - 2], y[rank - 2], a.scales[rank - 2]) <= 2 &&
         TapCount(a, x[rank - 1], y[rank - 1], a.scales[rank - 1]) <= 2 && y[rank - 1] >= 16 &&
         y[rank - 2] >= x[rank - 2];
}

// The W-interpolated input rows: planes x input rows x output columns, in
// floats for either storage precision.
size_t SeparableScratch(const Node& node, const LoweringContext& ctx) {
  if (!SeparableOnCpu(node, ctx)) return 0;
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const Shape& y = ShapeOf(ctx, node.outputs[0]);
  const size_t rank = x.size();
  return size_t(Product(y, 0, rank - 2) * x[rank - 2] * y[rank - 1]) * sizeof(float);
}

absl::Status Lower(LoweringContext& ctx, const Node& node) {
  const ResizeAttrs& a = AttrsOr<ResizeAttrs>(node);
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const Shape& y = ShapeOf(ctx, node.outputs[0]);
  const size_t rank = x.size();
  if (rank > 8) return Unsupported(node, "rank above 8");
  const int64_t total = Product(y, 0, rank);
  if (total >= (int64_t{1} << 31) || Product(x, 0, rank) >= (int64_t{1} << 24)) {
    return Unsupported(node, "inputs of 2^24 or more elements, or outputs of 2^31 or more,");
  }
  std::vector<AxisTaps> taps(rank);
  auto table = std::make_shared<std::vector<float>>();
  Shape offsets(rank, 0), counts(rank, 0), strides(rank);
  int64_t stride = 1, combos = 1;
  for (size_t i = rank; i-- > 0;) {
    strides[i] = stride;
    stride *= x[i];
  }
  bool outer_identity = true;
  for (size_t i = 0; i < rank; ++i) {
    taps[i] = TapsOf(a, x[i], y[i], a.scales[i]);
    offsets[i] = static_cast<int64_t>(table->size());
    counts[i] = taps[i].count;
    combos *= std::max(1, taps[i].count);
    table->insert(table->end(), taps[i].table.begin(), taps[i].table.end());
    if (i + 2 < rank && taps[i].count != 0) outer_identity = false;
  }
  const bool two_d = rank >= 2 && outer_identity && counts[rank - 1] <= 2 && counts[rank - 2] <= 2;
  if (two_d) {
    // Planes of [H, W]; both axes use tables (identity axes get one).
    const int64_t h_in = x[rank - 2], w_in = x[rank - 1], h = y[rank - 2], w = y[rank - 1];
    const int64_t planes = Product(y, 0, rank - 2);
    auto axis_table = [&](size_t i) {
      if (taps[i].count != 0) return taps[i];
      AxisTaps id;
      id.count = 1;
      for (int64_t o = 0; o < y[i]; ++o) id.table.insert(id.table.end(), {float(o), 1.0f});
      return id;
    };
    const AxisTaps ty = axis_table(rank - 2), tx = axis_table(rank - 1);
    // GPUs: one output per work-item, the W taps as (index, weight) pairs
    // like the H taps. CPUs: strips of 16 outputs summed as vectors, the W
    // taps planar per tap (indices, then weights), in two passes where
    // SeparableOnCpu holds, else in one (resize_2d_strips). Against 16
    // outputs per item summed one by one, LRASPP's two Resizes took 0.09x the
    // device time in two passes (4.70 -> 0.40 ms; the one pass alone 0.66x),
    // 2-core AVX2, PoCL 3.1, 2026-11-27.
    const bool gpu = ctx.device().GpuKernels();
    auto both = std::make_shared<std::vector<float>>(ty.table);
    if (gpu) {
      both->insert(both->end(), tx.table.begin(), tx.table.end());
    } else {
      for (int k = 0; k < tx.count; ++k) {
        for (int part = 0; part < 2; ++part) {
          for (int64_t o = 0; o < w; ++o) both->push_back(tx.table[2 * (o * tx.count + k) + part]);
        }
      }
    }
    DispatchArg t2 = ctx.AddConstant(both);
    // Outputs of a row per work-item (resize_2d's XPER; the CPU kernels'
    // strips are 16 wide).
    const int64_t per = gpu ? 1 : 16;
    const std::vector<std::string> options = {absl::StrCat("-DKY=", ty.count),
                                              absl::StrCat("-DKX=", tx.count),
                                              absl::StrCat("-DXPER=", per)};
    if (SeparableOnCpu(node, ctx)) {
      const std::array<size_t, 3> rows = {CeilDiv(w, 16), size_t(h_in), size_t(planes)};
      Dispatch r = MakeDispatch(ctx, "resize.cl", "resize_2d_rows", {1}, options);
      r.work_dim = 3;
      SetRange(r, rows, WorkGroupFor(rows, 64));
      Dispatch& re = ctx.Emit(std::move(r));
      re.args = {ctx.Arg(node.inputs[0]), t2, ctx.Scratch()};
      AddInts(re, {h_in, w_in, w, planes, static_cast<int64_t>(ty.table.size())});
      const std::array<size_t, 3> cols = {CeilDiv(w, 16), size_t(h), size_t(planes)};
      Dispatch c = MakeDispatch(ctx, "resize.cl", "resize_2d_cols", {1}, options);
      c.work_dim = 3;
      SetRange(c, cols, WorkGroupFor(cols, 64));
      Dispatch& ce = ctx.Emit(std::move(c));
      ce.args = {ctx.Scratch(), t2, ctx.Arg(node.outputs[0])};
      AddInts(ce, {h_in, h, w, planes});
      return absl::OkStatus();
    }
    Dispatch d =
        MakeDispatch(ctx, "resize.cl", gpu ? "resize_2d" : "resize_2d_strips", {1}, options);
    d.work_dim = 3;
    const std::array<size_t, 3> global = {CeilDiv(w, per), size_t(h), size_t(planes)};
    SetRange(
        d, global,
        ctx.device().GpuKernels() ? std::array<size_t, 3>{32, 4, 1} : WorkGroupFor(global, 64));
    Dispatch& e = ctx.Emit(std::move(d));
    e.args = {ctx.Arg(node.inputs[0]), t2, ctx.Arg(node.outputs[0])};
    AddInts(e, {h_in, w_in, h, w, planes, static_cast<int64_t>(ty.table.size())});
    return absl::OkStatus();
  }
  if (table->empty()) table->push_back(0.0f);
  DispatchArg tab = ctx.AddConstant(table);
  Dispatch& d = ctx.Emit(MakeDispatch(ctx, "resize.cl", "resize_taps", {size_t(total)}));
  d.args = {ctx.Arg(node.inputs[0]), std::move(tab), ctx.Arg(node.outputs[0])};
  d.args.push_back(DispatchArg::Scalar(Pad8(y, 1)));
  d.args.push_back(DispatchArg::Scalar(Pad8(strides, 0)));
  d.args.push_back(DispatchArg::Scalar(Pad8(offsets, 0)));
  d.args.push_back(DispatchArg::Scalar(Pad8(counts, 0)));
  d.args.push_back(DispatchArg::Scalar(static_cast<cl_int>(combos)));
  return absl::OkStatus();
}

// --- ONNX ---

absl::StatusOr<const OnnxConstant*> OptionalConstant(OnnxNodeContext& n, int i, const char* what) {
  absl::StatusOr<const OnnxConstant*> c = n.ConstantInput(i);
  if (!c.ok()) {
    return n.Unsupported(
        absl::StrCat(what, " (input ", i, ") must be a constant known when the model is loaded"));
  }
  if (*c != nullptr && (*c)->size() == 0) return nullptr;  // an empty tensor means absent
  return *c;
}

// Fills out_shape and scales from the scales or sizes given for `axes`.
absl::Status ResolveSizes(OnnxNodeContext& n, const Shape& x, const OnnxConstant* scales,
                          const OnnxConstant* sizes, std::vector<int64_t> axes,
                          const std::string& policy, ResizeAttrs& a) {
  const int64_t rank = static_cast<int64_t>(x.size());
  if (axes.empty()) {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  for (int64_t& axis : axes) {
    if (axis < -rank || axis >= rank) {
      return n.Invalid(absl::StrCat("axis ", axis, " is out of range for rank ", rank));
    }
    if (axis < 0) axis += rank;
  }
  a.out_shape = x;
  a.scales.assign(rank, 1.0);
  if ((scales == nullptr) == (sizes == nullptr)) {
    return n.Invalid("exactly one of scales and sizes must be given");
  }
  const OnnxConstant* given = scales != nullptr ? scales : sizes;
  if (given->size() != static_cast<int64_t>(axes.size())) {
    return n.Invalid(absl::StrCat(scales != nullptr ? "scales" : "sizes", " has ", given->size(),
                                  " entries for ", axes.size(), " axes"));
  }
  if (scales != nullptr) {
    if (!scales->is_float) return n.Invalid("scales must be a float tensor");
    for (size_t k = 0; k < axes.size(); ++k) {
      const double s = scales->floats[k];
      if (!(s > 0)) return n.Invalid(absl::StrCat("scale ", s, " must be positive"));
      a.scales[axes[k]] = s;
      a.out_shape[axes[k]] = static_cast<int64_t>(std::floor(x[axes[k]] * s));
    }
    return absl::OkStatus();
  }
  if (sizes->is_float) return n.Invalid("sizes must be an int64 tensor");
  if (policy == "stretch") {
    for (size_t k = 0; k < axes.size(); ++k) {
      a.out_shape[axes[k]] = sizes->ints[k];
      a.scales[axes[k]] = double(sizes->ints[k]) / double(x[axes[k]]);
    }
    return absl::OkStatus();
  }
  // not_larger / not_smaller: one scale for every listed axis.
  double s = policy == "not_larger" ? 1e300 : 0;
  for (size_t k = 0; k < axes.size(); ++k) {
    const double r = double(sizes->ints[k]) / double(x[axes[k]]);
    s = policy == "not_larger" ? std::min(s, r) : std::max(s, r);
  }
  for (int64_t axis : axes) {
    a.scales[axis] = s;
    a.out_shape[axis] = static_cast<int64_t>(std::round(s * x[axis]));
  }
  return absl::OkStatus();
}

absl::Status ImportResize(OnnxNodeContext& n) {
  const bool upsample = n.op_type() == "Upsample";
  if (upsample || n.opset() < 11) {
    RECQ_RETURN_IF_ERROR(n.CheckAttrs({"mode", "scales"}));
  } else {
    RECQ_RETURN_IF_ERROR(n.CheckAttrs({"mode", "coordinate_transformation_mode", "nearest_mode",
                                       "cubic_coeff_a", "exclude_outside", "extrapolation_value",
                                       "antialias", "axes", "keep_aspect_ratio_policy"}));
  }
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  const Shape& shape = n.desc(x).shape;
  ResizeAttrs a;
  RECQ_ASSIGN_OR_RETURN(std::string mode, n.String("mode", "nearest"));
  if (mode == "nearest") {
    a.mode = ResizeMode::kNearest;
  } else if (mode == "linear" || (upsample && mode == "bilinear")) {
    a.mode = ResizeMode::kLinear;
  } else if (mode == "cubic" && !upsample && n.opset() >= 11) {
    a.mode = ResizeMode::kCubic;
  } else {
    return n.Invalid(absl::StrCat("mode '", mode, "' is not supported"));
  }
  if (upsample || n.opset() < 11) {
    // Upsample and Resize-10: asymmetric coordinates; nearest truncates
    // (onnxruntime's behaviour, which also rounds up when downsampling).
    a.coordinates = ResizeCoordinates::kAsymmetric;
    a.nearest = ResizeNearest::kSimple;
    OnnxConstant scales;
    if (upsample && n.opset() < 9) {
      RECQ_ASSIGN_OR_RETURN(std::vector<float> s, n.Floats("scales"));
      scales.floats = std::move(s);
    } else {
      RECQ_ASSIGN_OR_RETURN(const OnnxConstant* s, OptionalConstant(n, 1, "scales"));
      if (s == nullptr) return n.Invalid("scales (input 1) is required");
      scales = *s;
    }
    RECQ_RETURN_IF_ERROR(ResolveSizes(n, shape, &scales, nullptr, {}, "stretch", a));
    return n.Emit(kResize, {x}, std::move(a));
  }
  RECQ_ASSIGN_OR_RETURN(std::string coordinates,
                        n.String("coordinate_transformation_mode", "half_pixel"));
  if (coordinates == "half_pixel") {
    a.coordinates = ResizeCoordinates::kHalfPixel;
  } else if (coordinates == "half_pixel_symmetric" && n.opset() >= 19) {
    a.coordinates = ResizeCoordinates::kHalfPixelSymmetric;
  } else if (coordinates == "pytorch_half_pixel") {
    a.coordinates = ResizeCoordinates::kPytorchHalfPixel;
  } else if (coordinates == "align_corners") {
    a.coordinates = ResizeCoordinates::kAlignCorners;
  } else if (coordinates == "asymmetric") {
    a.coordinates = ResizeCoordinates::kAsymmetric;
  } else if (coordinates == "tf_half_pixel_for_nn") {
    a.coordinates = ResizeCoordinates::kTfHalfPixelForNn;
  } else if (coordinates == "tf_crop_and_resize") {
    return n.Unsupported(absl::StrCat("coordinate_transformation_mode '", coordinates, "'"));
  } else {
    return n.Invalid(absl::StrCat("coordinate_transformation_mode '", coordinates,
                                  "' is not one of opset ", n.opset()));
  }
  RECQ_ASSIGN_OR_RETURN(std::string nearest, n.String("nearest_mode", "round_prefer_floor"));
  if (nearest == "round_prefer_floor") {
    a.nearest = ResizeNearest::kRoundPreferFloor;
  } else if (nearest == "round_prefer_ceil") {
    a.nearest = ResizeNearest::kRoundPreferCeil;
  } else if (nearest == "floor") {
    a.nearest = ResizeNearest::kFloor;
  } else if (nearest == "ceil") {
    a.nearest = ResizeNearest::kCeil;
  } else {
    return n.Invalid(absl::StrCat("nearest_mode '", nearest, "' is not a Resize nearest_mode"));
  }
  RECQ_ASSIGN_OR_RETURN(a.cubic_coeff_a, n.Float("cubic_coeff_a", -0.75f));
  RECQ_ASSIGN_OR_RETURN(int64_t exclude, n.Int("exclude_outside", 0));
  a.exclude_outside = exclude != 0;
  RECQ_ASSIGN_OR_RETURN(int64_t antialias, n.Int("antialias", 0));
  if (antialias != 0) return n.Unsupported("antialias = 1");
  RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> axes, n.Ints("axes"));
  RECQ_ASSIGN_OR_RETURN(std::string policy, n.String("keep_aspect_ratio_policy", "stretch"));
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller") {
    return n.Invalid(absl::StrCat("keep_aspect_ratio_policy '", policy, "' is not supported"));
  }
  RECQ_ASSIGN_OR_RETURN(const OnnxConstant* scales, OptionalConstant(n, 2, "scales"));
  RECQ_ASSIGN_OR_RETURN(const OnnxConstant* sizes, OptionalConstant(n, 3, "sizes"));
  RECQ_RETURN_IF_ERROR(ResolveSizes(n, shape, scales, sizes, std::move(axes), policy, a));
  return n.Emit(kResize, {x}, std::move(a));
}

}  // namespace

RECQ_REGISTER_OPS(Resize) {
  OpDef def;
  def.type = kResize;
  def.onnx = {{"", "Resize", 10, 10, ImportResize},
              {"", "Resize", 11, 12, ImportResize},
              {"", "Resize", 13, 17, ImportResize},
              {"", "Resize", 18, 21, ImportResize},
              {"", "Upsample", 7, 9, ImportResize}};
  def.infer = Infer;
  def.variants = {{"resize", nullptr, Lower, false, nullptr, SeparableScratch}};
  return table.Add(std::move(def));
}

}  // namespace recq::internal
