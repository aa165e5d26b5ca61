#include "backends/khr_command_buffer/khr_entry_points.h"

#include "absl/strings/str_cat.h"

namespace recq::internal {

namespace {

// One row of the declared table: the name the platform knows the function
// by, whether recq needs it, and where it goes.
struct EntryPointRow {
  const char* name;
  bool required;
  void** slot;
};

}  // namespace

absl::StatusOr<KhrEntryPoints> KhrEntryPoints::Load(cl_platform_id platform) {
  KhrEntryPoints table;
  const EntryPointRow rows[] = {
      {"clCreateCommandBufferKHR", true, reinterpret_cast<void**>(&table.create_command_buffer)},
      {"clFinalizeCommandBufferKHR", true,
       reinterpret_cast<void**>(&table.finalize_command_buffer)},
      {"clReleaseCommandBufferKHR", true, reinterpret_cast<void**>(&table.release_command_buffer)},
      {"clCommandNDRangeKernelKHR", true, reinterpret_cast<void**>(&table.command_nd_range_kernel)},
      {"clEnqueueCommandBufferKHR", true, reinterpret_cast<void**>(&table.enqueue_command_buffer)},
      {"clUpdateMutableCommandsKHR", false,
       reinterpret_cast<void**>(&table.update_mutable_commands)},
  };
  for (const EntryPointRow& row : rows) {
    *row.slot = clGetExtensionFunctionAddressForPlatform(platform, row.name);
    if (*row.slot == nullptr && row.required) {
      return absl::UnavailableError(
          absl::StrCat("cl_khr_command_buffer: clGetExtensionFunctionAddressForPlatform(\"",
                       row.name, "\") returned NULL"));
    }
  }
  return table;
}

}  // namespace recq::internal
