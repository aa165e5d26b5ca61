#include "backends/qcom/qcom_entry_points.h"

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

absl::StatusOr<QcomEntryPoints> QcomEntryPoints::Load(cl_platform_id platform) {
  QcomEntryPoints table;
  const EntryPointRow rows[] = {
      {"clNewRecordingQCOM", true, reinterpret_cast<void**>(&table.new_recording)},
      {"clEndRecordingQCOM", true, reinterpret_cast<void**>(&table.end_recording)},
      {"clRetainRecordingQCOM", true, reinterpret_cast<void**>(&table.retain_recording)},
      {"clReleaseRecordingQCOM", true, reinterpret_cast<void**>(&table.release_recording)},
      {"clEnqueueRecordingQCOM", true, reinterpret_cast<void**>(&table.enqueue_recording)},
  };
  for (const EntryPointRow& row : rows) {
    *row.slot = clGetExtensionFunctionAddressForPlatform(platform, row.name);
    if (*row.slot == nullptr && row.required) {
      return absl::UnavailableError(
          absl::StrCat("cl_qcom_recordable_queues: clGetExtensionFunctionAddressForPlatform(\"",
                       row.name, "\") returned NULL"));
    }
  }
  return table;
}

}  // namespace recq::internal
