// GatherND (engine/ops/gather_nd.cc) from ONNX's definition; negative
// indices wrap once and indices out of range are clamped, as the device does.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/ops/typed.h"
#include "reference/reference_registry.h"
#include "reference/reference_util.h"

namespace recq::reference {

RECQ_REGISTER_REFERENCE(GatherND) {
  return table.Add(internal::kGatherND,
                   [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                     if (absl::Status s = CheckArity(node, in, 2, 2); !s.ok()) return s;
                     const auto* a = node.attrs.get_if<internal::GatherNDAttrs>();
                     if (a == nullptr) return absl::InvalidArgumentError("GatherND without attrs");
                     const HostTensor& x = *in[0];
                     const HostTensor& idx = *in[1];
                     const size_t b = static_cast<size_t>(a->batch_dims);
                     const int64_t k = idx.shape.back();
                     int64_t batches = 1, rows = 1, slice = 1, batch_stride = 1;
                     for (size_t i = 0; i < b; ++i) batches *= x.shape[i];
                     for (size_t i = b; i + 1 < idx.shape.size(); ++i) rows *= idx.shape[i];
                     for (size_t i = b + k; i < x.shape.size(); ++i) slice *= x.shape[i];
                     for (size_t i = b; i < x.shape.size(); ++i) batch_stride *= x.shape[i];
                     std::vector<int64_t> shape(idx.shape.begin(), idx.shape.end() - 1);
                     shape.insert(shape.end(), x.shape.begin() + b + k, x.shape.end());
                     HostTensor y{shape, std::vector<float>(NumElements(shape)), x.dtype};
                     for (int64_t bt = 0; bt < batches; ++bt) {
                       for (int64_t r = 0; r < rows; ++r) {
                         const int64_t row = bt * rows + r;
                         int64_t offset = 0;
                         for (int64_t j = 0; j < k; ++j) {
                           const int64_t dim = x.shape[b + j];
                           int64_t v = static_cast<int64_t>(idx.data[row * k + j]);
                           if (v < 0) v += dim;
                           offset = offset * dim + std::clamp<int64_t>(v, 0, dim - 1);
                         }
                         for (int64_t e = 0; e < slice; ++e) {
                           y.data[row * slice + e] = x.data[bt * batch_stride + offset * slice + e];
                         }
                       }
                     }
                     return y;
                   });
}

}  // namespace recq::reference
