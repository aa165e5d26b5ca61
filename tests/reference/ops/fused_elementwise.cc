// FusedElementwise: the fused nodes replayed one by one through their own
// references (FusedElementwiseAttrs::steps), not the generated expression.
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/fused_elementwise.h"
#include "reference/reference_executor.h"
#include "reference/reference_registry.h"

namespace recq::reference {

RECQ_REGISTER_REFERENCE(FusedElementwise) {
  return table.Add(internal::kFusedElementwise,
                   [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                     const auto* a = node.attrs.get_if<internal::FusedElementwiseAttrs>();
                     if (a == nullptr || a->steps.empty()) {
                       return absl::InvalidArgumentError("FusedElementwise without steps");
                     }
                     std::vector<HostTensor> computed;
                     computed.reserve(a->steps.size());
                     for (const Node& step : a->steps) {
                       std::vector<const HostTensor*> operands;
                       for (ValueId id : step.inputs) {
                         const size_t k = static_cast<size_t>(id);
                         if (id < 0 || k >= in.size() + computed.size()) {
                           return absl::InvalidArgumentError(absl::StrCat(
                               "step '", step.name, "' reads id ", id, " before it exists"));
                         }
                         operands.push_back(k < in.size() ? in[k] : &computed[k - in.size()]);
                       }
                       absl::StatusOr<HostTensor> y = RunNode(step, operands);
                       if (!y.ok()) return y.status();
                       computed.push_back(*std::move(y));
                     }
                     return computed.back();
                   });
}

}  // namespace recq::reference
