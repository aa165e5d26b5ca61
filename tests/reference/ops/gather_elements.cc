// GatherElements (engine/ops/gather_elements.cc) from ONNX's definition;
// negative indices wrap once and indices out of range are clamped, as the
// device does.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/ops/typed.h"
#include "reference/reference_registry.h"
#include "reference/reference_util.h"

namespace recq::reference {

RECQ_REGISTER_REFERENCE(GatherElements) {
  return table.Add(internal::kGatherElements,
                   [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                     if (absl::Status s = CheckArity(node, in, 2, 2); !s.ok()) return s;
                     const auto* a = node.attrs.get_if<internal::GatherElementsAttrs>();
                     if (a == nullptr)
                       return absl::InvalidArgumentError("GatherElements without attrs");
                     const HostTensor& x = *in[0];
                     const HostTensor& idx = *in[1];
                     const int64_t rank = static_cast<int64_t>(x.shape.size());
                     const int64_t axis = a->axis < 0 ? a->axis + rank : a->axis;
                     HostTensor y{idx.shape, std::vector<float>(idx.data.size()), x.dtype};
                     for (int64_t i = 0; i < static_cast<int64_t>(idx.data.size()); ++i) {
                       // The coordinates of i in indices' shape, the axis one replaced.
                       int64_t rest = i, offset = 0, stride = 1;
                       for (int64_t d = rank; d-- > 0;) {
                         int64_t c = rest % idx.shape[d];
                         rest /= idx.shape[d];
                         if (d == axis) {
                           c = static_cast<int64_t>(idx.data[i]);
                           if (c < 0) c += x.shape[d];
                           c = std::clamp<int64_t>(c, 0, x.shape[d] - 1);
                         }
                         offset += c * stride;
                         stride *= x.shape[d];
                       }
                       y.data[i] = x.data[offset];
                     }
                     return y;
                   });
}

}  // namespace recq::reference
