// Preprocess (engine/ops/preprocess.cc), written from recq/preprocess.h:
// colour to RGB per source pixel (BT.601 limited range for NV12, clamped),
// bilinear half-pixel resize of the four converted taps, (v - mean) / scale
// per model channel, NCHW out. Values travel as floats (u8 sources as
// 0..255; an image2d source as its [1, H, W, C] values on the u8 scale).
#include <algorithm>
#include <array>
#include <cmath>

#include "engine/ops/preprocess.h"
#include "reference/reference_registry.h"

namespace recq::reference {
namespace {

using Rgb = std::array<double, 3>;

Rgb YuvToRgb(double y, double u, double v) {
  const double c = 1.164 * (y - 16), d = u - 128, e = v - 128;
  Rgb rgb = {c + 1.596 * e, c - 0.391 * d - 0.813 * e, c + 2.018 * d};
  for (double& x : rgb) x = std::clamp(x, 0.0, 255.0);
  return rgb;
}

Rgb Pixel(const internal::PreprocessAttrs& a, ReferenceInputs in, int64_t n, int64_t x, int64_t y) {
  const InputPreprocess& s = a.spec;
  const int64_t hs = s.source_height, ws = s.source_width;
  const std::vector<float>& p = in[0]->data;
  switch (s.color) {
    case ColorFormat::kNv12TwoPlane: {
      const std::vector<float>& uv = in[1]->data;
      const int64_t c = ((n * (hs / 2) + y / 2) * (ws / 2) + x / 2) * 2;
      return YuvToRgb(p[(n * hs + y) * ws + x], uv[c], uv[c + 1]);
    }
    case ColorFormat::kNv12SinglePlane: {
      const int64_t frame = n * (s.uv_offset + hs * ws / 2);
      const int64_t c = frame + s.uv_offset + (y / 2) * ws + (x / 2) * 2;
      return YuvToRgb(p[frame + y * ws + x], p[c], p[c + 1]);
    }
    default:
      break;
  }
  const int64_t channels = in[0]->shape.size() == 4 && (s.kind == MemoryKind::kImage2D ||
                                                        s.layout == TensorLayout::kNHWC)
                               ? in[0]->shape[3]
                               : in[0]->shape[1];
  auto at = [&](int64_t k) -> double {
    if (s.kind == MemoryKind::kImage2D || s.layout == TensorLayout::kNHWC) {
      return p[((n * hs + y) * ws + x) * channels + k];
    }
    return p[((n * channels + k) * hs + y) * ws + x];
  };
  if (s.color == ColorFormat::kGray) return {at(0), at(0), at(0)};
  if (s.color == ColorFormat::kBGR || s.color == ColorFormat::kBGRX) return {at(2), at(1), at(0)};
  return {at(0), at(1), at(2)};
}

}  // namespace

RECQ_REGISTER_REFERENCE(Preprocess) {
  return table.Add(internal::kPreprocess,
                   [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                     const auto* a = node.attrs.get_if<internal::PreprocessAttrs>();
                     if (a == nullptr) {
                       return absl::InvalidArgumentError("Preprocess without PreprocessAttrs");
                     }
                     const size_t sources = internal::SourceDescs(*a).size();
                     if (absl::Status s = CheckArity(node, in, sources, sources); !s.ok()) {
                       return s;
                     }
                     const InputPreprocess& s = a->spec;
                     const auto& m = a->model.shape;
                     const int64_t batch = m[0], c = m[1], h = m[2], w = m[3];
                     const int64_t hs = s.source_height, ws = s.source_width;
                     HostTensor out;
                     out.shape = m;
                     out.dtype = a->model.dtype;
                     out.data.resize(static_cast<size_t>(batch * c * h * w));
                     for (int64_t n = 0; n < batch; ++n) {
                       for (int64_t y = 0; y < h; ++y) {
                         for (int64_t x = 0; x < w; ++x) {
                           // Half-pixel centres, clamped taps (ONNX Resize
                           // linear, half_pixel).
                           const double fx = std::max((x + 0.5) * ws / w - 0.5, 0.0);
                           const double fy = std::max((y + 0.5) * hs / h - 0.5, 0.0);
                           const int64_t x0 = std::min<int64_t>(int64_t(fx), ws - 1);
                           const int64_t y0 = std::min<int64_t>(int64_t(fy), hs - 1);
                           const int64_t x1 = std::min(x0 + 1, ws - 1);
                           const int64_t y1 = std::min(y0 + 1, hs - 1);
                           const double ax = fx - x0, ay = fy - y0;
                           const Rgb p00 = Pixel(*a, in, n, x0, y0);
                           const Rgb p01 = Pixel(*a, in, n, x1, y0);
                           const Rgb p10 = Pixel(*a, in, n, x0, y1);
                           const Rgb p11 = Pixel(*a, in, n, x1, y1);
                           Rgb v;
                           for (int k = 0; k < 3; ++k) {
                             v[k] = (p00[k] * (1 - ax) + p01[k] * ax) * (1 - ay) +
                                    (p10[k] * (1 - ax) + p11[k] * ax) * ay;
                           }
                           if (s.model_color == ColorFormat::kBGR) std::swap(v[0], v[2]);
                           for (int64_t k = 0; k < c; ++k) {
                             double r = (v[k] - s.mean[k]) / s.scale[k];
                             float f = static_cast<float>(r);
                             if (out.dtype == DataType::kFloat16) f = HalfToFloat(FloatToHalf(f));
                             out.data[((n * c + k) * h + y) * w + x] = f;
                           }
                         }
                       }
                     }
                     return out;
                   });
}

}  // namespace recq::reference
