#include "reference/reference_registry.h"
#include "reference/reference_util.h"

namespace recq::reference {

using namespace detail;  // NOLINT: the helpers of every reference op

absl::StatusOr<HostTensor> BatchNorm(const HostTensor& x, const HostTensor& scale,
                                     const HostTensor& bias, const HostTensor& mean,
                                     const HostTensor& var, const BatchNormAttrs& attrs) {
  if (absl::Status s = CheckWellFormed(x, "BatchNorm", "X"); !s.ok()) return s;
  if (x.shape.size() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("BatchNorm: X must have rank >= 2, got ", ShapeString(x.shape)));
  }
  const int64_t c = x.shape[1];
  const std::pair<const HostTensor*, const char*> params[] = {
      {&scale, "scale"}, {&bias, "B"}, {&mean, "mean"}, {&var, "var"}};
  for (const auto& [t, name] : params) {
    if (absl::Status s = CheckVector(*t, c, "BatchNorm", name); !s.ok()) return s;
  }
  const int64_t n_size = x.shape[0];
  const int64_t inner = Product(x.shape, 2, x.shape.size());
  HostTensor y{x.shape, std::vector<float>(x.data.size())};
  for (int64_t n = 0; n < n_size; ++n) {
    for (int64_t ch = 0; ch < c; ++ch) {
      const double inv_std =
          1.0 / std::sqrt(static_cast<double>(var.data[ch]) + static_cast<double>(attrs.epsilon));
      const int64_t base = (n * c + ch) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        y.data[base + i] = static_cast<float>(
            (x.data[base + i] - static_cast<double>(mean.data[ch])) * inv_std * scale.data[ch] +
            bias.data[ch]);
      }
    }
  }
  return y;
}

RECQ_REGISTER_REFERENCE(BatchNorm) {
  return table.Add(OpType::kBatchNorm,
                   [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                     if (absl::Status s = CheckArity(node, in, 5, 5); !s.ok()) return s;
                     absl::StatusOr<BatchNormAttrs> a = AttrsOf<BatchNormAttrs>(node);
                     if (!a.ok()) return a.status();
                     return BatchNorm(*in[0], *in[1], *in[2], *in[3], *in[4], *a);
                   });
}

}  // namespace recq::reference
