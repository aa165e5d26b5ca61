#include "backends/khr_command_buffer/khr_entry_points.h"

#include "backends/opencl/entry_points.h"

namespace recq::internal {

absl::StatusOr<KhrEntryPoints> KhrEntryPoints::Load(cl_platform_id platform) {
  KhrEntryPoints table;
  const cl::EntryPointRow rows[] = {
      {"clCreateCommandBufferKHR", true, reinterpret_cast<void**>(&table.create_command_buffer)},
      {"clFinalizeCommandBufferKHR", true,
       reinterpret_cast<void**>(&table.finalize_command_buffer)},
      {"clReleaseCommandBufferKHR", true, reinterpret_cast<void**>(&table.release_command_buffer)},
      {"clCommandNDRangeKernelKHR", true, reinterpret_cast<void**>(&table.command_nd_range_kernel)},
      {"clEnqueueCommandBufferKHR", true, reinterpret_cast<void**>(&table.enqueue_command_buffer)},
      {"clUpdateMutableCommandsKHR", false,
       reinterpret_cast<void**>(&table.update_mutable_commands)},
  };
  absl::Status status = cl::LoadEntryPoints(platform, "cl_khr_command_buffer", rows);
  if (!status.ok()) return status;
  return table;
}

}  // namespace recq::internal
