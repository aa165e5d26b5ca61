// The entry points of cl_qcom_recordable_queues, resolved through
// clGetExtensionFunctionAddressForPlatform into one table.
#ifndef RECQ_BACKENDS_QCOM_QCOM_ENTRY_POINTS_H_
#define RECQ_BACKENDS_QCOM_QCOM_ENTRY_POINTS_H_

#include <CL/cl.h>

#include "absl/status/statusor.h"
#include "third_party/qcom/cl_qcom_recordable_queues.h"

namespace recq::internal {

// QcomEntryPoints holds the extension's functions. Every entry but the SVM
// replay is required: a table returned by Load has no other null member.
// Tests may build a table by hand to swap entries.
struct QcomEntryPoints {
  clNewRecordingQCOM_fn new_recording = nullptr;
  clEndRecordingQCOM_fn end_recording = nullptr;
  clRetainRecordingQCOM_fn retain_recording = nullptr;
  clReleaseRecordingQCOM_fn release_recording = nullptr;
  clEnqueueRecordingQCOM_fn enqueue_recording = nullptr;
  // Optional: replays that substitute SVM pointers need it.
  clEnqueueRecordingSVMQCOM_fn enqueue_recording_svm = nullptr;

  // Load resolves every entry point for `platform`. Unavailable names the
  // first one the platform does not return.
  [[nodiscard]] static absl::StatusOr<QcomEntryPoints> Load(cl_platform_id platform);
};

}  // namespace recq::internal

#endif  // RECQ_BACKENDS_QCOM_QCOM_ENTRY_POINTS_H_
