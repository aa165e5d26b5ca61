#include "fault_rules.h"

#include "qcom_layer/fault_spec.h"

namespace recq::fault_layer {
FaultRules::FaultRules(std::vector<std::string_view> names)
    : names_(std::move(names)), calls_(names_.size()) {}

bool FaultRules::Configure(const char* spec, std::string* error) {
  std::vector<qcom_layer::FaultSpecRule> parsed;
  std::string problem;
  qcom_layer::ParseFaultSpec(spec, names_, &parsed, &problem);
  std::vector<Rule> rules;
  for (const qcom_layer::FaultSpecRule& r : parsed) rules.push_back({r.index, r.call, r.error});
  std::lock_guard<std::mutex> lock(mu_);
  rules_ = std::move(rules);
  for (auto& c : calls_) c.store(0, std::memory_order_relaxed);
  armed_.store(!rules_.empty(), std::memory_order_release);
  if (!problem.empty() && error != nullptr) *error = problem;
  return problem.empty();
}

cl_int FaultRules::Check(size_t index) {
  const uint64_t call = calls_[index].fetch_add(1, std::memory_order_relaxed) + 1;
  if (!armed_.load(std::memory_order_acquire)) return CL_SUCCESS;
  std::lock_guard<std::mutex> lock(mu_);
  for (const Rule& rule : rules_) {
    if (rule.index == index && rule.call == call) return rule.error;
  }
  return CL_SUCCESS;
}

void FaultRules::ResetCounts() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& c : calls_) c.store(0, std::memory_order_relaxed);
}

std::string FaultRules::Counts() const {
  std::string out;
  for (size_t i = 0; i < names_.size(); ++i) {
    const uint64_t n = calls_[i].load(std::memory_order_relaxed);
    if (n == 0) continue;
    out.append(names_[i]);
    out += ' ';
    out += std::to_string(n);
    out += '\n';
  }
  return out;
}

}  // namespace recq::fault_layer
