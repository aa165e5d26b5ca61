#include "fault_injection.h"

#include <iterator>
#include <string_view>
#include <vector>

#include "cl_error_names.h"
#include "fault_spec.h"

namespace recq::qcom_layer {
namespace {

constexpr std::string_view kPointNames[] = {
    "clNewRecordingQCOM",     "clEndRecordingQCOM",     "clRetainRecordingQCOM",
    "clReleaseRecordingQCOM", "clEnqueueRecordingQCOM", "clEnqueueRecordingSVMQCOM",
    "clEnqueueNDRangeKernel", "clSetKernelArg",         "clCreateBuffer",
    "clCreateKernel",         "clBuildProgram",         "clCreateCommandQueueWithProperties",
};
static_assert(std::size(kPointNames) == static_cast<size_t>(FaultPoint::kCount));

}  // namespace

bool FaultInjector::Configure(const char* spec, std::string* error) {
  static const std::vector<std::string_view> names(std::begin(kPointNames), std::end(kPointNames));
  std::vector<FaultSpecRule> parsed;
  std::string problem;
  ParseFaultSpec(spec, names, &parsed, &problem);
  std::vector<Rule> rules;
  for (const FaultSpecRule& r : parsed) {
    rules.push_back({static_cast<FaultPoint>(r.index), r.call, r.error});
  }

  std::lock_guard<std::mutex> lock(mu_);
  rules_ = std::move(rules);
  calls_.fill(0);
  armed_.store(!rules_.empty(), std::memory_order_release);
  if (!problem.empty() && error != nullptr) *error = problem;
  return problem.empty();
}

cl_int FaultInjector::Check(FaultPoint point) {
  if (!armed_.load(std::memory_order_acquire)) return CL_SUCCESS;
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t call = ++calls_[static_cast<size_t>(point)];
  for (const Rule& rule : rules_) {
    if (rule.point == point && rule.call == call) return rule.error;
  }
  return CL_SUCCESS;
}

}  // namespace recq::qcom_layer
