// Fault injection for the cl_qcom_recordable_queues emulation layer: make the
// N-th call of an entry point fail with a chosen error, without doing anything.
//
// Spec syntax (env RECQ_QCOM_LAYER_FAIL, or recqQcomLayerSetFault()):
//   "<entrypoint>:<N>:<ERROR>[,<entrypoint>:<N>:<ERROR>...]"
// N counts calls of that entry point from 1, since the spec was set. ERROR is
// a standard CL error name (CL_OUT_OF_RESOURCES) or a negative integer (-5).
// Several rules may name the same entry point (different N).

#ifndef RECQ_TOOLS_QCOM_LAYER_FAULT_INJECTION_H_
#define RECQ_TOOLS_QCOM_LAYER_FAULT_INJECTION_H_

#include <CL/cl.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace recq::qcom_layer {

// The entry points that can be made to fail. Only calls made by the
// application count; the layer's own calls to the platform below do not.
enum class FaultPoint : int {
  kNewRecordingQCOM,
  kEndRecordingQCOM,
  kRetainRecordingQCOM,
  kReleaseRecordingQCOM,
  kEnqueueRecordingQCOM,
  kEnqueueRecordingSVMQCOM,
  kEnqueueNDRangeKernel,
  kSetKernelArg,
  kCreateBuffer,
  kCreateKernel,
  kBuildProgram,
  kCreateCommandQueueWithProperties,
  kCount,
};

// FaultInjector holds the active rules and per-entry-point call counters.
// Thread-safe. Counting costs one relaxed atomic load while no rule is set.
class FaultInjector {
 public:
  FaultInjector() = default;
  FaultInjector(const FaultInjector&) = delete;
  FaultInjector& operator=(const FaultInjector&) = delete;

  // Configure replaces the rules with those parsed from `spec` and zeroes all
  // counters. A null or empty spec clears the rules. On a malformed spec it
  // clears the rules, stores a description in *error (if non-null) and
  // returns false.
  bool Configure(const char* spec, std::string* error);

  // Check counts one call of `point` and returns the error that call must
  // fail with, or CL_SUCCESS when it should proceed.
  cl_int Check(FaultPoint point);

 private:
  struct Rule {
    FaultPoint point;
    uint64_t call;  // 1-based
    cl_int error;
  };

  std::atomic<bool> armed_{false};
  std::mutex mu_;
  std::vector<Rule> rules_;                                                // guarded by mu_
  std::array<uint64_t, static_cast<size_t>(FaultPoint::kCount)> calls_{};  // guarded by mu_
};

}  // namespace recq::qcom_layer

#endif  // RECQ_TOOLS_QCOM_LAYER_FAULT_INJECTION_H_
