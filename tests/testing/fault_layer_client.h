// FaultLayerClient: the test side of tools/fault_layer (call counts, fault
// rules, live-object counts, held enqueues), reached through the hooks the
// layer exports.
#ifndef RECQ_TESTS_TESTING_FAULT_LAYER_CLIENT_H_
#define RECQ_TESTS_TESTING_FAULT_LAYER_CLIENT_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tools/fault_layer/fault_layer_hooks.h"

namespace recq::testing {

class FaultLayerClient {
 public:
  // Find returns the client when libRecqFaultLayer.so is one of the layers
  // in OPENCL_LAYERS and loaded, else NotFound saying why. It makes one
  // OpenCL call first (the loader loads layers at the first call).
  static absl::StatusOr<FaultLayerClient> Find();

  // SetFault replaces the rules ("clCreateBuffer:3:CL_OUT_OF_RESOURCES", ""
  // for none) and zeroes the counters.
  absl::Status SetFault(const std::string& spec) const;
  void ResetCounts() const;
  // CallCounts: (entry point, calls since the last reset), in table order.
  std::vector<std::pair<std::string, uint64_t>> CallCounts() const;
  // LiveObjects: kind -> live count, plus "over_released_<kind>" entries.
  std::map<std::string, uint64_t> LiveObjects() const;
  // Hold: see recqFaultLayerHoldEvents.
  void Hold(bool hold) const;
  // SetKhrMutable: see recqFaultLayerSetKhrMutable.
  void SetKhrMutable(bool emulate) const;
  // SetDeviceMemory: see recqFaultLayerSetDeviceMemory (0, 0: the device's).
  void SetDeviceMemory(uint64_t global_mem_size, uint64_t max_mem_alloc_size) const;

 private:
  recqFaultLayerSetFault_fn set_fault_ = nullptr;
  recqFaultLayerResetCounts_fn reset_counts_ = nullptr;
  recqFaultLayerCallCounts_fn call_counts_ = nullptr;
  recqFaultLayerLiveObjects_fn live_objects_ = nullptr;
  recqFaultLayerHoldEvents_fn hold_ = nullptr;
  recqFaultLayerSetKhrMutable_fn set_khr_mutable_ = nullptr;
  recqFaultLayerSetDeviceMemory_fn set_device_memory_ = nullptr;
};

// LiveObjectsText formats LiveObjects() for failure messages ("{}" if none).
std::string LiveObjectsText(const std::map<std::string, uint64_t>& live);

// ReleasedKind is the object kind a clRelease* entry point releases, as
// LiveObjects() names it ("?" for another entry point).
std::string ReleasedKind(const std::string& entry);

// LiveDelta returns the counts that grew from `before` to `after` (of
// LiveObjects(): the objects created between the two and still alive).
std::map<std::string, uint64_t> LiveDelta(const std::map<std::string, uint64_t>& after,
                                          const std::map<std::string, uint64_t>& before);

}  // namespace recq::testing

#endif  // RECQ_TESTS_TESTING_FAULT_LAYER_CLIENT_H_
