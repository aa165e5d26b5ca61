// AffineConcat (engine/ops/affine_concat.cc): the channel concatenation of
// inputs 0..n-3, times scale[c] plus shift[c] (the executor applies the
// fused activation).
#include <vector>

#include "reference/reference_ops.h"
#include "reference/reference_registry.h"

namespace recq::reference {

RECQ_REGISTER_REFERENCE(AffineConcat) {
  return table.Add(OpType("AffineConcat"),
                   [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                     if (absl::Status s = CheckArity(node, in, 3, in.size()); !s.ok()) return s;
                     const size_t n = in.size() - 2;
                     const HostTensor& scale = *in[n];
                     const HostTensor& shift = *in[n + 1];
                     const std::vector<int64_t>& first = in[0]->shape;
                     const int64_t outer = first[0];
                     int64_t plane = 1;
                     for (size_t d = 2; d < first.size(); ++d) plane *= first[d];
                     HostTensor y;
                     y.shape = first;
                     y.shape[1] = 0;
                     for (size_t i = 0; i < n; ++i) y.shape[1] += in[i]->shape[1];
                     const int64_t channels = y.shape[1];
                     y.data.resize(size_t(outer * channels * plane));
                     for (int64_t o = 0; o < outer; ++o) {
                       int64_t c0 = 0;
                       for (size_t i = 0; i < n; ++i) {
                         const int64_t ci = in[i]->shape[1];
                         for (int64_t c = 0; c < ci; ++c) {
                           const int64_t ch = c0 + c;
                           for (int64_t p = 0; p < plane; ++p) {
                             const double v = in[i]->data[(o * ci + c) * plane + p];
                             y.data[(o * channels + ch) * plane + p] =
                                 static_cast<float>(v * scale.data[ch] + shift.data[ch]);
                           }
                         }
                         c0 += ci;
                       }
                     }
                     return y;
                   });
}

}  // namespace recq::reference
