// ConvTranspose (2-D) in scatter form, the way the ONNX definition reads:
// every input element adds x * w to the outputs its kernel taps land on.
#include <vector>

#include "engine/ops/layout_attrs.h"
#include "reference/reference_registry.h"
#include "reference/reference_util.h"

namespace recq::reference {
namespace {

using namespace detail;  // NOLINT: the helpers of every reference op
using internal::ConvTransposeAttrs;

absl::StatusOr<HostTensor> ConvTranspose(const HostTensor& x, const HostTensor& w,
                                         const HostTensor* bias, const ConvTransposeAttrs& a) {
  if (x.shape.size() != 4 || w.shape.size() != 4) {
    return absl::InvalidArgumentError("ConvTranspose: x and w must be 4-D");
  }
  const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], wd = x.shape[3];
  const int64_t g = a.groups, ocg = w.shape[1], kh = w.shape[2], kw = w.shape[3];
  const int64_t oc = ocg * g, cg = c / g;
  const int64_t oh = a.strides[0] * (h - 1) + a.output_padding[0] + (kh - 1) * a.dilations[0] + 1 -
                     a.pads[0] - a.pads[2];
  const int64_t ow = a.strides[1] * (wd - 1) + a.output_padding[1] + (kw - 1) * a.dilations[1] + 1 -
                     a.pads[1] - a.pads[3];
  std::vector<double> acc(n * oc * oh * ow, 0.0);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ic = 0; ic < c; ++ic) {
      const int64_t grp = ic / cg;
      for (int64_t iy = 0; iy < h; ++iy) {
        for (int64_t ix = 0; ix < wd; ++ix) {
          const double v = x.data[((b * c + ic) * h + iy) * wd + ix];
          for (int64_t o = 0; o < ocg; ++o) {
            for (int64_t ky = 0; ky < kh; ++ky) {
              const int64_t oy = iy * a.strides[0] + ky * a.dilations[0] - a.pads[0];
              if (oy < 0 || oy >= oh) continue;
              for (int64_t kx = 0; kx < kw; ++kx) {
                const int64_t ox = ix * a.strides[1] + kx * a.dilations[1] - a.pads[1];
                if (ox < 0 || ox >= ow) continue;
                const int64_t och = grp * ocg + o;
                acc[((b * oc + och) * oh + oy) * ow + ox] +=
                    v * w.data[((ic * ocg + o) * kh + ky) * kw + kx];
              }
            }
          }
        }
      }
    }
  }
  HostTensor y{{n, oc, oh, ow}, std::vector<float>(acc.size())};
  for (size_t i = 0; i < acc.size(); ++i) {
    const int64_t och = (int64_t(i) / (oh * ow)) % oc;
    y.data[i] = static_cast<float>(acc[i] + (bias ? bias->data[och] : 0.0f));
  }
  return y;
}

}  // namespace

RECQ_REGISTER_REFERENCE(ConvTranspose) {
  return table.Add(OpType("ConvTranspose"),
                   [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                     if (absl::Status s = CheckArity(node, in, 2, 3); !s.ok()) return s;
                     absl::StatusOr<ConvTransposeAttrs> a = AttrsOf<ConvTransposeAttrs>(node);
                     if (!a.ok()) return a.status();
                     return ConvTranspose(*in[0], *in[1], in.size() > 2 ? in[2] : nullptr, *a);
                   });
}

}  // namespace recq::reference
