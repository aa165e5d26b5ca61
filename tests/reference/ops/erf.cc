// Erf: y = erf(x), in double precision.
#include <cmath>

#include "reference/reference_registry.h"

namespace recq::reference {

RECQ_REGISTER_REFERENCE(Erf) {
  return table.Add(OpType("Erf"),
                   [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                     if (absl::Status s = CheckArity(node, in, 1, 1); !s.ok()) return s;
                     HostTensor y = *in[0];
                     for (float& v : y.data) v = static_cast<float>(std::erf(double(v)));
                     return y;
                   });
}

}  // namespace recq::reference
