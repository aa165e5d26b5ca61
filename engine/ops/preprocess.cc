// Preprocess (PreprocessAttrs): a camera frame in, the model's input out,
// in one kernel (engine/ops/preprocess.cl): colour conversion, bilinear
// resize and normalization fused. See recq/preprocess.h for the formats.
#include "engine/ops/preprocess.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "recq/status_macros.h"

namespace recq::internal {

std::vector<TensorDesc> SourceDescs(const PreprocessAttrs& a) {
  const InputPreprocess& s = a.spec;
  const int64_t n = a.model.shape.empty() ? 1 : a.model.shape[0];
  const int64_t h = s.source_height, w = s.source_width;
  const DataType t = s.element_type;
  switch (s.color) {
    case ColorFormat::kNv12TwoPlane:
      return {{{n, h, w, 1}, t}, {{n, h / 2, w / 2, 2}, t}};
    case ColorFormat::kNv12SinglePlane:
      return {{{n, s.uv_offset + h * w / 2}, t}};
    default:
      break;
  }
  int64_t c = 3;
  if (s.color == ColorFormat::kRGBX || s.color == ColorFormat::kBGRX) c = 4;
  if (s.color == ColorFormat::kGray) c = 1;
  if (s.kind == MemoryKind::kImage2D || s.layout == TensorLayout::kNHWC) {
    return {{{n, h, w, c}, t}};
  }
  return {{{n, c, h, w}, t}};
}

bool KernelReadsImage(const KernelRef& kernel, uint32_t arg) {
  if (kernel.program != "preprocess.cl") return false;
  auto has = [&](const char* option) {
    return std::find(kernel.options.begin(), kernel.options.end(), option) != kernel.options.end();
  };
  if (!has("-DSRC_IMAGE=1")) return false;
  return arg == 0 || (arg == 1 && has("-DCOLOR=PP_NV12_2"));
}

namespace {
const char* ColorMacro(ColorFormat c);
}  // namespace

bool DescribeSource(const KernelRef& kernel, uint32_t arg, BindingInfo& info) {
  if (kernel.program != "preprocess.cl") return false;
  auto has = [&](const std::string& option) {
    return std::find(kernel.options.begin(), kernel.options.end(), option) != kernel.options.end();
  };
  for (ColorFormat c :
       {ColorFormat::kRGB, ColorFormat::kBGR, ColorFormat::kRGBX, ColorFormat::kBGRX,
        ColorFormat::kNv12TwoPlane, ColorFormat::kNv12SinglePlane, ColorFormat::kGray}) {
    if (!has(absl::StrCat("-DCOLOR=", ColorMacro(c)))) continue;
    const bool two_planes = c == ColorFormat::kNv12TwoPlane;
    if (arg > (two_planes ? 1u : 0u)) return false;
    info.preprocessed = true;
    info.color = c;
    info.memory = has("-DSRC_IMAGE=1") ? MemoryKind::kImage2D : MemoryKind::kBuffer;
    info.plane = !two_planes ? BindingInfo::Nv12Plane::kNone
                 : arg == 0  ? BindingInfo::Nv12Plane::kY
                             : BindingInfo::Nv12Plane::kUV;
    return true;
  }
  return false;
}

namespace {

absl::StatusOr<TensorDesc> Infer(const OpAttrs& attrs, InferInputs in) {
  RECQ_ASSIGN_OR_RETURN(const PreprocessAttrs* a, AttrsOf<PreprocessAttrs>(kPreprocess, attrs));
  const std::vector<TensorDesc> want = SourceDescs(*a);
  RECQ_RETURN_IF_ERROR(CheckInputCount(kPreprocess, in, want.size(), want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    if (*in[i] != want[i]) {
      return Bad(kPreprocess, absl::StrCat("source ", i, " is ", in[i]->ToString(), "; the ",
                                           ColorFormatName(a->spec.color), " format needs ",
                                           want[i].ToString()));
    }
  }
  const Shape& m = a->model.shape;
  if (m.size() != 4 || (m[1] != 1 && m[1] != 3) || a->model.dtype == DataType::kFloat64 ||
      !IsFloatingPoint(a->model.dtype)) {
    return Bad(kPreprocess, absl::StrCat("the model input ", a->model.ToString(),
                                         " is not [N, 1 or 3, H, W] of float32 or float16"));
  }
  return a->model;
}

const char* ColorMacro(ColorFormat c) {
  switch (c) {
    case ColorFormat::kRGB:
      return "PP_RGB";
    case ColorFormat::kBGR:
      return "PP_BGR";
    case ColorFormat::kRGBX:
      return "PP_RGBX";
    case ColorFormat::kBGRX:
      return "PP_BGRX";
    case ColorFormat::kNv12TwoPlane:
      return "PP_NV12_2";
    case ColorFormat::kNv12SinglePlane:
      return "PP_NV12_1";
    case ColorFormat::kGray:
      return "PP_GRAY";
  }
  return "PP_RGB";
}

absl::Status Lower(LoweringContext& ctx, const Node& node) {
  const PreprocessAttrs& a = AttrsOr<PreprocessAttrs>(node);
  const InputPreprocess& s = a.spec;
  const Shape& m = a.model.shape;
  const int64_t n = m[0], c = m[1], h = m[2], w = m[3];
  const bool image = s.kind == MemoryKind::kImage2D;
  const bool resize = s.source_height != h || s.source_width != w;
  const int64_t src_c = SourceDescs(a)[0].shape.back();
  std::vector<std::string> options = {
      absl::StrCat("-DCOLOR=", ColorMacro(s.color)),
      absl::StrCat("-DSRC_IMAGE=", image ? 1 : 0),
      absl::StrCat("-DRESIZE=", resize ? 1 : 0),
      absl::StrCat("-DMODEL_C=", c),
      absl::StrCat("-DMODEL_BGR=", s.model_color == ColorFormat::kBGR ? 1 : 0),
      absl::StrCat("-DOUT_HALF=", a.model.dtype == DataType::kFloat16 ? 1 : 0)};
  if (image) {
    options.push_back(absl::StrCat("-DUNORM=", s.element_type == DataType::kUInt8 ? 1 : 0));
  } else {
    const bool half = s.element_type == DataType::kFloat16;
    options.push_back(absl::StrCat("-DSRC_IS_HALF=", half ? 1 : 0));
    if (!half) {
      options.push_back(
          absl::StrCat("-DSRC_T=", s.element_type == DataType::kUInt8 ? "uchar" : "float"));
    }
    options.push_back(
        absl::StrCat("-DNHWC=", s.layout == TensorLayout::kNHWC || src_c == 1 ? 1 : 0));
    options.push_back(absl::StrCat("-DSRC_C=", src_c));
  }
  Dispatch& d = ctx.Emit(MakeDispatch(ctx, "preprocess.cl", "preprocess", {1, 1, 1}, options));
  d.work_dim = 3;
  // 16x4 work-items: PoCL runs a group as one loop; GPUs get 64-wide groups.
  SetRange(d, {size_t(w), size_t(h), size_t(n)}, {16, 4, 1});
  for (ValueId in : node.inputs) d.args.push_back(ctx.Arg(in));
  d.args.push_back(ctx.Arg(node.outputs[0]));
  AddInts(d, {s.source_height, s.source_width, h, w, n, s.uv_offset});
  cl_float4 mean = {{0, 0, 0, 0}}, scale = {{1, 1, 1, 1}};
  for (int64_t i = 0; i < c; ++i) {
    mean.s[i] = a.spec.mean[i];
    scale.s[i] = a.spec.scale[i];
  }
  d.args.push_back(DispatchArg::Scalar(mean));
  d.args.push_back(DispatchArg::Scalar(scale));
  // Bilinear: 4 taps of 3 channels, a few FLOPs each, plus normalization.
  d.flops = double(n * h * w) * (resize ? 4 * 3 * 3 + 3 * 3 : 0) + double(n * c * h * w) * 2;
  // A downscale reads at most four taps per output pixel, not the frame.
  double read = 0;
  for (const TensorDesc& desc : SourceDescs(a)) read += double(desc.ByteSize());
  const double frame_pixels = double(n * s.source_height * s.source_width);
  read = std::min(read, read / frame_pixels * double(n * h * w) * (resize ? 4 : 1));
  d.bytes = read + double(a.model.ByteSize());
  return absl::OkStatus();
}

}  // namespace

RECQ_REGISTER_OPS(Preprocess) {
  OpDef def;
  def.type = kPreprocess;
  def.infer = Infer;
  def.typed = true;  // u8, f16 and f32 sources; f32 or f16 out
  def.variants = {{"preprocess", nullptr, Lower}};
  return table.Add(std::move(def));
}

}  // namespace recq::internal
