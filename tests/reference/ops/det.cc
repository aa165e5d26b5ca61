// Det (engine/ops/det.cc) by cofactor expansion along the first row, in
// double (the device eliminates instead; the tests keep M <= 6).
#include <cstdint>
#include <vector>

#include "engine/ops/det.h"
#include "reference/reference_registry.h"
#include "reference/reference_util.h"

namespace recq::reference {
namespace {

double Cofactor(const std::vector<double>& a, int64_t n) {
  if (n == 1) return a[0];
  double det = 0;
  std::vector<double> minor((n - 1) * (n - 1));
  for (int64_t j = 0; j < n; ++j) {
    int64_t m = 0;
    for (int64_t r = 1; r < n; ++r) {
      for (int64_t c = 0; c < n; ++c) {
        if (c != j) minor[m++] = a[r * n + c];
      }
    }
    det += (j % 2 == 0 ? 1 : -1) * a[j] * Cofactor(minor, n - 1);
  }
  return det;
}

}  // namespace

RECQ_REGISTER_REFERENCE(Det) {
  return table.Add(
      internal::kDet, [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
        if (absl::Status s = CheckArity(node, in, 1, 1); !s.ok()) return s;
        const HostTensor& x = *in[0];
        const size_t r = x.shape.size();
        if (r < 2 || x.shape[r - 1] != x.shape[r - 2] || x.shape[r - 1] > 8) {
          return absl::InvalidArgumentError("Det of a non-square or large matrix");
        }
        const int64_t n = x.shape[r - 1];
        std::vector<int64_t> shape(x.shape.begin(), x.shape.end() - 2);
        HostTensor y{shape, std::vector<float>(NumElements(shape)), x.dtype};
        std::vector<double> a(n * n);
        for (size_t b = 0; b < y.data.size(); ++b) {
          for (int64_t i = 0; i < n * n; ++i) a[i] = x.data[b * n * n + i];
          const float det = static_cast<float>(Cofactor(a, n));
          y.data[b] = x.dtype == DataType::kFloat16 ? HalfToFloat(FloatToHalf(det)) : det;
        }
        return y;
      });
}

}  // namespace recq::reference
