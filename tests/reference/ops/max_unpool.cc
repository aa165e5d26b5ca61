// MaxUnpool (engine/ops/max_unpool.h) as ONNX's reference computes it:
// scatter into zeros of the inferred shape, then place that in the leading
// corner of the output shape.
#include <cstdint>
#include <vector>

#include "engine/ops/max_unpool.h"
#include "reference/reference_registry.h"

namespace recq::reference {

RECQ_REGISTER_REFERENCE(MaxUnpool) {
  return table.Add(
      internal::kMaxUnpool, [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
        if (absl::Status s = CheckArity(node, in, 2, 2); !s.ok()) return s;
        absl::StatusOr<internal::MaxUnpoolAttrs> attrs = AttrsOf<internal::MaxUnpoolAttrs>(node);
        if (!attrs.ok()) return attrs.status();
        const HostTensor& x = *in[0];
        const HostTensor& idx = *in[1];
        const std::vector<int64_t>& inf = attrs->inferred_shape;
        const std::vector<int64_t>& out = attrs->out_shape;
        std::vector<float> unpooled(NumElements(inf), 0.0f);
        for (size_t i = 0; i < x.data.size(); ++i) {
          const int64_t k = static_cast<int64_t>(idx.data[i]);
          if (k >= 0 && k < static_cast<int64_t>(unpooled.size())) unpooled[k] = x.data[i];
        }
        HostTensor y{out, std::vector<float>(NumElements(out), 0.0f), x.dtype};
        for (int64_t k = 0; k < static_cast<int64_t>(unpooled.size()); ++k) {
          int64_t rest = k, offset = 0, stride = 1;
          for (size_t d = inf.size(); d-- > 0;) {
            offset += rest % inf[d] * stride;
            rest /= inf[d];
            stride *= out[d];
          }
          y.data[offset] = unpooled[k];
        }
        return y;
      });
}

}  // namespace recq::reference
