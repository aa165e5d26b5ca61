// The entry points of cl_khr_command_buffer (and, optionally,
// cl_khr_command_buffer_mutable_dispatch), resolved through
// clGetExtensionFunctionAddressForPlatform into one table.
//
// The signatures are those of the provisional 0.9.x revisions as declared by
// the OpenCL headers recq builds with (opencl-headers 2023.02.06):
// clCommandNDRangeKernelKHR takes a `properties` argument after the queue.
// PoCL 3.1 (which reports cl_khr_command_buffer 0.9.0) implements that
// signature; KhrCommandBufferAvailable only accepts 0.9.x devices.
#ifndef RECQ_BACKENDS_KHR_COMMAND_BUFFER_KHR_ENTRY_POINTS_H_
#define RECQ_BACKENDS_KHR_COMMAND_BUFFER_KHR_ENTRY_POINTS_H_

#include <CL/cl.h>
#include <CL/cl_ext.h>

#include "absl/status/statusor.h"

namespace recq::internal {

// KhrEntryPoints holds the extension's functions. The base entries are
// required: a table returned by Load has none null. The mutable-dispatch
// entry is optional and null when the platform does not return it.
struct KhrEntryPoints {
  clCreateCommandBufferKHR_fn create_command_buffer = nullptr;
  clFinalizeCommandBufferKHR_fn finalize_command_buffer = nullptr;
  clReleaseCommandBufferKHR_fn release_command_buffer = nullptr;
  clCommandNDRangeKernelKHR_fn command_nd_range_kernel = nullptr;
  clEnqueueCommandBufferKHR_fn enqueue_command_buffer = nullptr;
  clUpdateMutableCommandsKHR_fn update_mutable_commands = nullptr;  // optional

  // Load resolves the entry points for `platform`. Unavailable names the
  // first required one the platform does not return.
  [[nodiscard]] static absl::StatusOr<KhrEntryPoints> Load(cl_platform_id platform);
};

}  // namespace recq::internal

#endif  // RECQ_BACKENDS_KHR_COMMAND_BUFFER_KHR_ENTRY_POINTS_H_
