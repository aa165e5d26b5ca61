// ScatterElements (engine/ops/scatter_elements.cc) from ONNX's definition:
// updates applied in row-major order of indices (so duplicates along the
// axis combine in order; with reduction none the last one wins). Integer
// results wrap to their type as the device's do.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/ops/scatter_elements.h"
#include "reference/reference_registry.h"
#include "reference/reference_util.h"

namespace recq::reference {

using namespace detail;  // NOLINT: the helpers of every reference op

RECQ_REGISTER_REFERENCE(ScatterElements) {
  return table.Add(internal::kScatterElements,
                   [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                     if (absl::Status s = CheckArity(node, in, 3, 3); !s.ok()) return s;
                     absl::StatusOr<internal::ScatterElementsAttrs> a =
                         AttrsOf<internal::ScatterElementsAttrs>(node);
                     if (!a.ok()) return a.status();
                     const HostTensor& x = *in[0];
                     const HostTensor& idx = *in[1];
                     const HostTensor& upd = *in[2];
                     const int64_t rank = static_cast<int64_t>(x.shape.size());
                     absl::StatusOr<int64_t> axis =
                         NormalizeAxis(a->axis, rank, false, "ScatterElements");
                     if (!axis.ok()) return axis.status();
                     const int64_t dim = x.shape[*axis];
                     const std::vector<int64_t> xs = RowMajorStrides(x.shape);
                     // Combined in float (or wrapped in the integer type) step by step, and
                     // float16 rounded once at the end, as the device does.
                     std::vector<float> acc = x.data;
                     const bool integral = IsIntegral(x.dtype) && x.dtype != DataType::kBool;
                     for (int64_t i = 0; i < idx.NumElements(); ++i) {
                       int64_t rest = i, offset = 0;
                       for (int64_t d = rank - 1; d >= 0; --d) {
                         int64_t c = rest % idx.shape[d];
                         rest /= idx.shape[d];
                         if (d == *axis) {
                           c = static_cast<int64_t>(idx.data[i]);
                           if (c < 0) c += dim;
                           c = std::clamp<int64_t>(c, 0, dim - 1);
                         }
                         offset += c * xs[d];
                       }
                       const double cur = acc[offset], u = upd.data[i];
                       double r = u;
                       switch (a->reduction) {
                         case 1:
                           r = cur + u;
                           break;
                         case 2:
                           r = cur * u;
                           break;
                         case 3:
                           r = std::max(cur, u);
                           break;
                         case 4:
                           r = std::min(cur, u);
                           break;
                         default:
                           break;
                       }
                       if (integral) r = WrapTo(r, x.dtype);
                       acc[offset] = static_cast<float>(r);
                     }
                     HostTensor y = x;
                     y.data = acc;
                     if (x.dtype == DataType::kFloat16) {
                       for (float& v : y.data) v = HalfToFloat(FloatToHalf(v));
                     }
                     return y;
                   });
}

}  // namespace recq::reference
