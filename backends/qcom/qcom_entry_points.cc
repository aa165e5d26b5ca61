#include "backends/qcom/qcom_entry_points.h"

#include "backends/opencl/entry_points.h"

namespace recq::internal {

absl::StatusOr<QcomEntryPoints> QcomEntryPoints::Load(cl_platform_id platform) {
  QcomEntryPoints table;
  const cl::EntryPointRow rows[] = {
      {"clNewRecordingQCOM", true, reinterpret_cast<void**>(&table.new_recording)},
      {"clEndRecordingQCOM", true, reinterpret_cast<void**>(&table.end_recording)},
      {"clRetainRecordingQCOM", true, reinterpret_cast<void**>(&table.retain_recording)},
      {"clReleaseRecordingQCOM", true, reinterpret_cast<void**>(&table.release_recording)},
      {"clEnqueueRecordingQCOM", true, reinterpret_cast<void**>(&table.enqueue_recording)},
      {"clEnqueueRecordingSVMQCOM", false, reinterpret_cast<void**>(&table.enqueue_recording_svm)},
  };
  absl::Status status = cl::LoadEntryPoints(platform, "cl_qcom_recordable_queues", rows);
  if (!status.ok()) return status;
  return table;
}

}  // namespace recq::internal
