// ScatterND (engine/ops/scatter_nd.cc) from ONNX's definition: y = data,
// then each index row's slice is replaced by (or combined with) its
// updates, rows in order. Negative indices wrap; indices out of range are
// clamped, as the device does.
#include <algorithm>
#include <cstdint>

#include "engine/ops/typed.h"
#include "reference/reference_registry.h"
#include "reference/reference_util.h"

namespace recq::reference {

RECQ_REGISTER_REFERENCE(ScatterND) {
  return table.Add(internal::kScatterND,
                   [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                     if (absl::Status s = CheckArity(node, in, 3, 3); !s.ok()) return s;
                     const auto* a = node.attrs.get_if<internal::ScatterNDAttrs>();
                     if (a == nullptr)
                       return absl::InvalidArgumentError("ScatterND without ScatterNDAttrs");
                     const HostTensor& data = *in[0];
                     const HostTensor& indices = *in[1];
                     const HostTensor& updates = *in[2];
                     const int64_t k = indices.shape.back();
                     const int64_t rows = NumElements(indices.shape) / k;
                     int64_t slice = 1;
                     for (size_t d = k; d < data.shape.size(); ++d) slice *= data.shape[d];
                     HostTensor y = data;
                     for (int64_t r = 0; r < rows; ++r) {
                       int64_t offset = 0;
                       for (int64_t j = 0; j < k; ++j) {
                         const int64_t dim = data.shape[j];
                         int64_t idx = static_cast<int64_t>(indices.data[r * k + j]);
                         if (idx < 0) idx += dim;
                         offset = offset * dim + std::clamp<int64_t>(idx, 0, dim - 1);
                       }
                       for (int64_t e = 0; e < slice; ++e) {
                         float& to = y.data[offset * slice + e];
                         const float u = updates.data[r * slice + e];
                         double v = u;
                         switch (a->reduction) {
                           case internal::ScatterReduction::kNone:
                             break;
                           case internal::ScatterReduction::kAdd:
                             v = double(to) + u;
                             break;
                           case internal::ScatterReduction::kMul:
                             v = double(to) * u;
                             break;
                           case internal::ScatterReduction::kMax:
                             v = std::max<double>(to, u);
                             break;
                           case internal::ScatterReduction::kMin:
                             v = std::min<double>(to, u);
                             break;
                         }
                         // Each step stores in the element type, as the device does.
                         to = data.dtype == DataType::kFloat16 ? HalfToFloat(FloatToHalf(float(v)))
                                                               : static_cast<float>(v);
                       }
                     }
                     return y;
                   });
}

}  // namespace recq::reference
