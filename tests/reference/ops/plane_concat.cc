// PlaneConcat (engine/ops/plane_concat.h): output slice k along the axis is
// slice plane[k] of input source[k].
#include "engine/ops/plane_concat.h"
#include "reference/reference_ops.h"
#include "reference/reference_registry.h"

namespace recq::reference {

RECQ_REGISTER_REFERENCE(PlaneConcat) {
  return table.Add(
      OpType("PlaneConcat"),
      [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
        if (absl::Status s = CheckArity(node, in, 1, internal::kPlaneConcatMaxSources); !s.ok()) {
          return s;
        }
        const auto* a = node.attrs.get_if<internal::PlaneConcatAttrs>();
        if (a == nullptr) return absl::InvalidArgumentError("PlaneConcat reference: no attributes");
        const std::vector<int64_t>& shape = in[0]->shape;
        int64_t outer = 1;
        int64_t inner = 1;
        for (int64_t d = 0; d < a->axis; ++d) outer *= shape[d];
        for (size_t d = size_t(a->axis) + 1; d < shape.size(); ++d) inner *= shape[d];
        const int64_t count = static_cast<int64_t>(a->source.size());
        HostTensor y;
        y.shape = shape;
        y.shape[size_t(a->axis)] = count;
        y.data.resize(size_t(outer * count * inner));
        for (int64_t o = 0; o < outer; ++o) {
          for (int64_t k = 0; k < count; ++k) {
            const HostTensor& x = *in[size_t(a->source[k])];
            const int64_t dim = x.shape[size_t(a->axis)];
            for (int64_t i = 0; i < inner; ++i) {
              y.data[(o * count + k) * inner + i] = x.data[(o * dim + a->plane[k]) * inner + i];
            }
          }
        }
        return y;
      });
}

}  // namespace recq::reference
