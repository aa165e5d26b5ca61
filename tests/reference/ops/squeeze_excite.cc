// SqueezeExcite (engine/ops/squeeze_excite.h): the mean over the spatial
// dimensions, the two products and their activations, and the scale, in
// double precision.
#include <vector>

#include "engine/ops/squeeze_excite.h"
#include "reference/reference_ops.h"
#include "reference/reference_registry.h"

namespace recq::reference {

RECQ_REGISTER_REFERENCE(SqueezeExcite) {
  return table.Add(OpType("SqueezeExcite"),
                   [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                     if (absl::Status s = CheckArity(node, in, 4, 5); !s.ok()) return s;
                     const auto* a = node.attrs.get_if<internal::SqueezeExciteAttrs>();
                     if (a == nullptr || in[1] == nullptr || in[3] == nullptr) {
                       return absl::InvalidArgumentError(
                           "SqueezeExcite reference: attributes or weights missing");
                     }
                     const HostTensor& x = *in[0];
                     const HostTensor* b1 = Optional(in, 2);
                     const HostTensor* b2 = Optional(in, 4);
                     const int64_t n_items = x.shape[0];
                     const int64_t c_count = x.shape[1];
                     const int64_t hw = x.NumElements() / (n_items * c_count);
                     const int64_t r_count = in[1]->shape[0];
                     HostTensor y = x;
                     for (int64_t n = 0; n < n_items; ++n) {
                       std::vector<double> mean(c_count, 0.0);
                       for (int64_t c = 0; c < c_count; ++c) {
                         for (int64_t i = 0; i < hw; ++i)
                           mean[c] += x.data[(n * c_count + c) * hw + i];
                         mean[c] /= double(hw);
                       }
                       std::vector<float> h(r_count);
                       for (int64_t r = 0; r < r_count; ++r) {
                         double z = b1 != nullptr ? b1->data[r] : 0.0;
                         for (int64_t c = 0; c < c_count; ++c)
                           z += in[1]->data[r * c_count + c] * mean[c];
                         h[r] = ApplyActivation(a->act, static_cast<float>(z));
                       }
                       for (int64_t c = 0; c < c_count; ++c) {
                         double z = b2 != nullptr ? b2->data[c] : 0.0;
                         for (int64_t r = 0; r < r_count; ++r)
                           z += in[3]->data[c * r_count + r] * double(h[r]);
                         const float s = ApplyActivation(a->gate, static_cast<float>(z));
                         for (int64_t i = 0; i < hw; ++i) y.data[(n * c_count + c) * hw + i] *= s;
                       }
                     }
                     return y;
                   });
}

}  // namespace recq::reference
