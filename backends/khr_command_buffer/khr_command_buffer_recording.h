// The cl_khr_command_buffer backend.
//
// Record: one command buffer per (queue, binding set), with every dispatch
// recorded by clCommandNDRangeKernelKHR (chained by sync points) and then
// finalized. Each command buffer gets kernel objects of its own that are
// never changed after recording: PoCL 3.1 reads a recorded kernel's
// arguments at submit time rather than capturing them at record time.
//
// Per-run substitution:
//  * with cl_khr_command_buffer_mutable_dispatch (argument updates): one
//    command buffer per queue and one clUpdateMutableCommandsKHR per run for
//    the slots whose memory changed, SVM pointers in arg_svm_list (tested
//    through the fault layer's emulation only: no device here has it);
//  * without it: an LRU cache of finalized command buffers keyed by the
//    queue and the tuple of slot memories (cl_mems or SVM pointers),
//    capacity kKhrCacheCapacity; a miss records a new one.
//
// A command buffer is recorded on the queue it is submitted to: the
// revision PoCL 3.1 implements (0.9.0) accepts another queue at submit only
// if it is "compatible" (PoCL rejects a queue with other properties with
// CL_INCOMPATIBLE_COMMAND_QUEUE_KHR), so the cache key includes the queue.
//
// Re-submission: a command buffer whose previous submission may still be
// running is only re-submitted when it was created with
// CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR (when the device has that
// capability). Otherwise Enqueue waits on the host for the previous
// submission first: PoCL rejects a pending re-submit with
// CL_INVALID_OPERATION even when the previous event is in the wait list.
#ifndef RECQ_BACKENDS_KHR_COMMAND_BUFFER_KHR_COMMAND_BUFFER_RECORDING_H_
#define RECQ_BACKENDS_KHR_COMMAND_BUFFER_KHR_COMMAND_BUFFER_RECORDING_H_

#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "engine/recording_backend.h"
#include "recq/context.h"

namespace recq::internal {

// How many finalized command buffers the non-mutable path keeps.
inline constexpr size_t kKhrCacheCapacity = 4;

// What the device offers, read at run time.
struct KhrCommandBufferSupport {
  cl_version version = 0;  // of cl_khr_command_buffer
  cl_device_command_buffer_capabilities_khr capabilities = 0;
  cl_command_queue_properties required_queue_properties = 0;
  // cl_khr_command_buffer_mutable_dispatch is listed in a revision whose
  // structures match recq's headers (0.9.0/0.9.1), it can update arguments,
  // and clUpdateMutableCommandsKHR resolves.
  bool mutable_arguments = false;
  std::string mutable_reason;  // why mutable_arguments is false

  bool simultaneous_use() const {
    return (capabilities & CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR) != 0;
  }
  std::string VersionString() const;
};

// QueryKhrCommandBuffer returns the device's support, or Unavailable naming
// why the backend cannot run (extension not listed, a revision other than
// 0.9.x, an entry point missing, a capability query failing).
[[nodiscard]] absl::StatusOr<KhrCommandBufferSupport> QueryKhrCommandBuffer(const Context& context);

// CreateKhrCommandBufferRecording makes the backend. Command buffers are
// recorded lazily, at the first Enqueue of each (queue, binding set).
// Registered as "khr_command_buffer": available wherever
// QueryKhrCommandBuffer succeeds, chosen by `auto` only with mutable
// dispatch.
[[nodiscard]] absl::StatusOr<std::unique_ptr<RecordingBackend>> CreateKhrCommandBufferRecording(
    std::shared_ptr<const EngineState> engine);

}  // namespace recq::internal

#endif  // RECQ_BACKENDS_KHR_COMMAND_BUFFER_KHR_COMMAND_BUFFER_RECORDING_H_
