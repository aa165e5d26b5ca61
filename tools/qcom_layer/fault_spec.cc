#include "fault_spec.h"

#include "cl_error_names.h"

namespace recq::qcom_layer {
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

bool ParseFaultSpec(const char* spec, const std::vector<std::string_view>& names,
                    std::vector<FaultSpecRule>* rules, std::string* problem) {
  rules->clear();
  problem->clear();
  std::string_view rest = spec == nullptr ? std::string_view() : std::string_view(spec);
  while (problem->empty() && !Trim(rest).empty()) {
    const size_t comma = rest.find(',');
    const std::string_view item = Trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);

    const size_t c1 = item.find(':');
    const size_t c2 = c1 == std::string_view::npos ? c1 : item.find(':', c1 + 1);
    if (c2 == std::string_view::npos) {
      *problem = "expected <entrypoint>:<N>:<ERROR>, got '" + std::string(item) + "'";
      break;
    }
    const std::string_view name = Trim(item.substr(0, c1));
    const std::string_view number = Trim(item.substr(c1 + 1, c2 - c1 - 1));
    const std::string_view error_text = Trim(item.substr(c2 + 1));

    FaultSpecRule rule{names.size(), 0, CL_SUCCESS};
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == name) rule.index = i;
    }
    if (rule.index == names.size()) {
      *problem = "unsupported entry point '" + std::string(name) + "'";
    } else if (!ParseCallNumber(number, &rule.call)) {
      *problem = "call number must be a positive integer, got '" + std::string(number) + "'";
    } else if (!ParseClError(error_text, &rule.error) || rule.error >= 0) {
      *problem = "error must be a CL error name or a negative integer, got '" +
                 std::string(error_text) + "'";
    } else {
      rules->push_back(rule);
    }
  }
  if (!problem->empty()) rules->clear();
  return problem->empty();
}

}  // namespace recq::qcom_layer
