#include "reference/reference_registry.h"
#include "reference/reference_util.h"

namespace recq::reference {

using namespace detail;  // NOLINT: the helpers of every reference op

namespace {

// Softmax, or with `log` LogSoftmax: x - max - log(sum(exp(x - max))).
absl::StatusOr<HostTensor> SoftmaxOrLog(const HostTensor& x, const SoftmaxAttrs& attrs, bool log) {
  if (absl::Status s = CheckWellFormed(x, "Softmax", "X"); !s.ok()) return s;
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  absl::StatusOr<int64_t> ax = NormalizeAxis(attrs.axis, rank, /*inclusive_end=*/false, "Softmax");
  if (!ax.ok()) return ax.status();
  // The softmax runs over `len` elements spaced `stride` apart, for every
  // (outer, inner) pair.
  const int64_t outer = Product(x.shape, 0, *ax);
  const int64_t len = attrs.coerce_to_2d ? Product(x.shape, *ax, rank) : x.shape[*ax];
  const int64_t inner = attrs.coerce_to_2d ? 1 : Product(x.shape, *ax + 1, rank);
  HostTensor y{x.shape, std::vector<float>(x.data.size())};
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      const int64_t base = o * len * inner + in;
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t i = 0; i < len; ++i) max = std::max(max, double{x.data[base + i * inner]});
      double sum = 0.0;
      for (int64_t i = 0; i < len; ++i) sum += std::exp(x.data[base + i * inner] - max);
      for (int64_t i = 0; i < len; ++i) {
        const double v = x.data[base + i * inner];
        y.data[base + i * inner] =
            static_cast<float>(log ? v - max - std::log(sum) : std::exp(v - max) / sum);
      }
    }
  }
  return y;
}

}  // namespace

absl::StatusOr<HostTensor> Softmax(const HostTensor& x, const SoftmaxAttrs& attrs) {
  return SoftmaxOrLog(x, attrs, false);
}

RECQ_REGISTER_REFERENCE(Softmax) {
  for (const bool log : {false, true}) {
    absl::Status s =
        table.Add(log ? OpType("LogSoftmax") : OpType::kSoftmax,
                  [log](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                    if (absl::Status s = CheckArity(node, in, 1, 1); !s.ok()) return s;
                    absl::StatusOr<SoftmaxAttrs> a = AttrsOf<SoftmaxAttrs>(node);
                    if (!a.ok()) return a.status();
                    return SoftmaxOrLog(*in[0], *a, log);
                  });
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace recq::reference
