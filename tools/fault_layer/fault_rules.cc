#include "fault_rules.h"

#include "qcom_layer/cl_error_names.h"

namespace recq::fault_layer {
namespace {

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

FaultRules::FaultRules(std::vector<std::string_view> names)
    : names_(std::move(names)), calls_(names_.size()) {}

bool FaultRules::Configure(const char* spec, std::string* error) {
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
    Rule rule{names_.size(), 0, CL_SUCCESS};
    for (size_t i = 0; i < names_.size(); ++i) {
      if (names_[i] == name) rule.index = i;
    }
    if (rule.index == names_.size()) {
      problem = "unknown entry point '" + std::string(name) + "'";
    } else if (!ParseCallNumber(Trim(item.substr(c1 + 1, c2 - c1 - 1)), &rule.call)) {
      problem = "call number must be a positive integer in '" + std::string(item) + "'";
    } else if (!qcom_layer::ParseClError(Trim(item.substr(c2 + 1)), &rule.error) ||
               rule.error >= 0) {
      problem =
          "error must be a CL error name or a negative integer in '" + std::string(item) + "'";
    } else {
      rules.push_back(rule);
    }
  }
  if (!problem.empty()) rules.clear();
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
