// FusedElementwise: the fused nodes replayed one by one through their own
// references (FusedElementwiseAttrs::steps), not the generated expression.
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/fused_elementwise.h"
#include "reference/reference_executor.h"
#include "reference/reference_registry.h"

namespace recq::reference {

RECQ_REGISTER_REFERENCE(FusedElementwise) {
  return table.Add(
      internal::kFusedElementwise,
      [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
        const auto* a = node.attrs.get_if<internal::FusedElementwiseAttrs>();
        if (a == nullptr || a->steps.empty()) {
          return absl::InvalidArgumentError("FusedElementwise without steps");
        }
        // Inputs read through a Transpose, transposed.
        std::vector<HostTensor> transposed(in.size());
        std::vector<const HostTensor*> inputs(in.begin(), in.end());
        for (size_t k = 0; k < in.size(); ++k) {
          const std::vector<int64_t>& perm = internal::PermOfInput(*a, k);
          if (perm.empty()) continue;
          Node t;
          t.op = OpType::kTranspose;
          t.attrs = TransposeAttrs{perm};
          absl::StatusOr<HostTensor> x = RunNode(t, {in[k]});
          if (!x.ok()) return x.status();
          transposed[k] = *std::move(x);
          inputs[k] = &transposed[k];
        }
        std::vector<HostTensor> computed;
        computed.reserve(a->steps.size());
        for (const Node& step : a->steps) {
          std::vector<const HostTensor*> operands;
          for (ValueId id : step.inputs) {
            const size_t k = static_cast<size_t>(id);
            if (id < 0 || k >= inputs.size() + computed.size()) {
              return absl::InvalidArgumentError(
                  absl::StrCat("step '", step.name, "' reads id ", id, " before it exists"));
            }
            operands.push_back(k < inputs.size() ? inputs[k] : &computed[k - inputs.size()]);
          }
          absl::StatusOr<HostTensor> y = RunNode(step, operands);
          if (!y.ok()) return y.status();
          computed.push_back(*std::move(y));
        }
        return computed.back();
      });
}

}  // namespace recq::reference
