// FaultRules: which call of which entry point fails, and the call counters.
//
// Spec syntax (env RECQ_FAULT_LAYER_FAIL, or recqFaultLayerSetFault()):
//   "<entrypoint>:<N>:<ERROR>[,<entrypoint>:<N>:<ERROR>...]"
// N counts calls of that entry point from 1, since the rules were set (or the
// counters reset). ERROR is a standard CL error name or a negative integer.
#ifndef RECQ_TOOLS_FAULT_LAYER_FAULT_RULES_H_
#define RECQ_TOOLS_FAULT_LAYER_FAULT_RULES_H_

#include <CL/cl.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace recq::fault_layer {

// FaultRules counts the calls of `names.size()` entry points (identified by
// their index in `names`) and tells which call must fail. Thread-safe.
class FaultRules {
 public:
  explicit FaultRules(std::vector<std::string_view> names);
  FaultRules(const FaultRules&) = delete;
  FaultRules& operator=(const FaultRules&) = delete;

  // Configure replaces the rules with those parsed from `spec` and zeroes the
  // counters. Null or "" clears the rules. A malformed spec clears them too,
  // stores what is wrong in *error and returns false.
  bool Configure(const char* spec, std::string* error);

  // Check counts one call of entry point `index` and returns the error it
  // must fail with, or CL_SUCCESS.
  cl_int Check(size_t index);

  // ResetCounts zeroes the counters, keeping the rules.
  void ResetCounts();

  // Counts returns "<name> <calls>\n" for every entry point called since the
  // last reset, in table order.
  std::string Counts() const;

  const std::vector<std::string_view>& names() const { return names_; }

 private:
  struct Rule {
    size_t index;
    uint64_t call;  // 1-based
    cl_int error;
  };

  const std::vector<std::string_view> names_;
  std::vector<std::atomic<uint64_t>> calls_;
  std::atomic<bool> armed_{false};
  mutable std::mutex mu_;
  std::vector<Rule> rules_;  // guarded by mu_
};

}  // namespace recq::fault_layer

#endif  // RECQ_TOOLS_FAULT_LAYER_FAULT_RULES_H_
