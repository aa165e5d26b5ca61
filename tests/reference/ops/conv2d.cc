#include "reference/reference_registry.h"
#include "reference/reference_util.h"

namespace recq::reference {

using namespace detail;  // NOLINT: the helpers of every reference op

absl::StatusOr<HostTensor> Conv2D(const HostTensor& x, const HostTensor& w, const HostTensor* bias,
                                  const Conv2DAttrs& attrs) {
  if (absl::Status s = CheckRank(x, 4, "Conv2D", "X"); !s.ok()) return s;
  if (absl::Status s = CheckRank(w, 4, "Conv2D", "W"); !s.ok()) return s;
  const int64_t n_size = x.shape[0], c = x.shape[1], h = x.shape[2], wd = x.shape[3];
  const int64_t oc_size = w.shape[0], icpg = w.shape[1], kh_size = w.shape[2], kw_size = w.shape[3];
  const int64_t groups = attrs.groups;
  if (groups < 1 || c % groups != 0 || oc_size % groups != 0 || icpg != c / groups) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Conv2D: groups ", groups, " do not fit X ", ShapeString(x.shape), " and W ",
        ShapeString(w.shape), " (need C and OC divisible by groups and W[1] == C/groups)"));
  }
  if (bias != nullptr) {
    if (absl::Status s = CheckVector(*bias, oc_size, "Conv2D", "B"); !s.ok()) return s;
  }
  const int64_t sh = attrs.strides[0], sw = attrs.strides[1];
  const int64_t dh = attrs.dilations[0], dw = attrs.dilations[1];
  const int64_t pt = attrs.pads[0], pl = attrs.pads[1], pb = attrs.pads[2], pr = attrs.pads[3];
  if (sh < 1 || sw < 1 || dh < 1 || dw < 1 || pt < 0 || pl < 0 || pb < 0 || pr < 0) {
    return absl::InvalidArgumentError("Conv2D: strides and dilations must be >= 1, pads >= 0");
  }
  const int64_t span_h = h + pt + pb - dh * (kh_size - 1) - 1;
  const int64_t span_w = wd + pl + pr - dw * (kw_size - 1) - 1;
  if (span_h < 0 || span_w < 0) {
    return absl::InvalidArgumentError(absl::StrCat("Conv2D: the dilated kernel [", kh_size, ",",
                                                   kw_size, "] does not fit the padded input ",
                                                   ShapeString(x.shape)));
  }
  const int64_t oh_size = span_h / sh + 1;
  const int64_t ow_size = span_w / sw + 1;
  const int64_t ocpg = oc_size / groups;

  HostTensor y{{n_size, oc_size, oh_size, ow_size},
               std::vector<float>(n_size * oc_size * oh_size * ow_size)};
  std::vector<double> acc(oh_size * ow_size);
  for (int64_t n = 0; n < n_size; ++n) {
    for (int64_t oc = 0; oc < oc_size; ++oc) {
      const int64_t g = oc / ocpg;
      std::fill(acc.begin(), acc.end(), bias != nullptr ? bias->data[oc] : 0.0);
      for (int64_t icg = 0; icg < icpg; ++icg) {
        const float* in = x.data.data() + ((n * c) + g * icpg + icg) * h * wd;
        const float* kernel = w.data.data() + (oc * icpg + icg) * kh_size * kw_size;
        for (int64_t kh = 0; kh < kh_size; ++kh) {
          const auto [oy_lo, oy_hi] = ValidRange(oh_size, h, sh, kh * dh - pt);
          for (int64_t kw = 0; kw < kw_size; ++kw) {
            const double wv = kernel[kh * kw_size + kw];
            const int64_t x_offset = kw * dw - pl;
            const auto [ox_lo, ox_hi] = ValidRange(ow_size, wd, sw, x_offset);
            for (int64_t oy = oy_lo; oy < oy_hi; ++oy) {
              const float* in_row = in + (oy * sh + kh * dh - pt) * wd + x_offset;
              double* acc_row = acc.data() + oy * ow_size;
              for (int64_t ox = ox_lo; ox < ox_hi; ++ox) acc_row[ox] += wv * in_row[ox * sw];
            }
          }
        }
      }
      float* out = y.data.data() + (n * oc_size + oc) * oh_size * ow_size;
      for (size_t i = 0; i < acc.size(); ++i) out[i] = static_cast<float>(acc[i]);
    }
  }
  return y;
}

RECQ_REGISTER_REFERENCE(Conv2D) {
  return table.Add(OpType::kConv2D,
                   [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                     if (absl::Status s = CheckArity(node, in, 2, 3); !s.ok()) return s;
                     absl::StatusOr<Conv2DAttrs> a = AttrsOf<Conv2DAttrs>(node);
                     if (!a.ok()) return a.status();
                     return Conv2D(*in[0], *in[1], Optional(in, 2), *a);
                   });
}

}  // namespace recq::reference
