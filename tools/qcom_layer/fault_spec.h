// The fault-rule text both layers take ("<entrypoint>:<N>:<ERROR>[,...]",
// from RECQ_QCOM_LAYER_FAIL / RECQ_FAULT_LAYER_FAIL or their hooks), parsed
// once here for the qcom layer's FaultInjector and the fault layer's
// FaultRules.
#ifndef RECQ_TOOLS_QCOM_LAYER_FAULT_SPEC_H_
#define RECQ_TOOLS_QCOM_LAYER_FAULT_SPEC_H_

#include <CL/cl.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace recq::qcom_layer {

struct FaultSpecRule {
  size_t index;   // into the names given to ParseFaultSpec
  uint64_t call;  // 1-based
  cl_int error;   // negative
};

// ParseFaultSpec parses `spec` (nullptr or blank: no rules) against the
// entry-point `names`. On a malformed item it returns false, leaves `rules`
// empty and says why in `problem`.
bool ParseFaultSpec(const char* spec, const std::vector<std::string_view>& names,
                    std::vector<FaultSpecRule>* rules, std::string* problem);

}  // namespace recq::qcom_layer

#endif  // RECQ_TOOLS_QCOM_LAYER_FAULT_SPEC_H_
