#include "fault_injection.h"

#include <iterator>
#include <string_view>

#include "cl_error_names.h"

namespace recq::qcom_layer {
namespace {

constexpr std::string_view kPointNames[] = {
    "clNewRecordingQCOM",     "clEndRecordingQCOM",     "clRetainRecordingQCOM",
    "clReleaseRecordingQCOM", "clEnqueueRecordingQCOM", "clEnqueueRecordingSVMQCOM",
    "clEnqueueNDRangeKernel", "clSetKernelArg",         "clCreateBuffer",
    "clCreateKernel",         "clBuildProgram",         "clCreateCommandQueueWithProperties",
};
static_assert(std::size(kPointNames) == static_cast<size_t>(FaultPoint::kCount));

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool ParseCallNumber(std::string_view text, uint64_t* value) {
  if (text.empty() || text.size() > 18) return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v == 0) return false;
  *value = v;
  return true;
}

}  // namespace

bool FaultInjector::Configure(const char* spec, std::string* error) {
  std::vector<Rule> rules;
  std::string problem;
  std::string_view rest = spec == nullptr ? std::string_view() : std::string_view(spec);
  while (problem.empty() && !Trim(rest).empty()) {
    const size_t comma = rest.find(',');
    const std::string_view item = Trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);

    const size_t c1 = item.find(':');
    const size_t c2 = c1 == std::string_view::npos ? c1 : item.find(':', c1 + 1);
    if (c2 == std::string_view::npos) {
      problem = "expected <entrypoint>:<N>:<ERROR>, got '" + std::string(item) + "'";
      break;
    }
    const std::string_view name = Trim(item.substr(0, c1));
    const std::string_view number = Trim(item.substr(c1 + 1, c2 - c1 - 1));
    const std::string_view error_text = Trim(item.substr(c2 + 1));

    Rule rule{};
    bool known = false;
    for (size_t i = 0; i < std::size(kPointNames); ++i) {
      if (name == kPointNames[i]) {
        rule.point = static_cast<FaultPoint>(i);
        known = true;
      }
    }
    if (!known) {
      problem = "unsupported entry point '" + std::string(name) + "'";
    } else if (!ParseCallNumber(number, &rule.call)) {
      problem = "call number must be a positive integer, got '" + std::string(number) + "'";
    } else if (!ParseClError(error_text, &rule.error) || rule.error >= 0) {
      problem = "error must be a CL error name or a negative integer, got '" +
                std::string(error_text) + "'";
    } else {
      rules.push_back(rule);
    }
  }
  if (!problem.empty()) rules.clear();

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
