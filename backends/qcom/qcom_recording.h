// The cl_qcom_recordable_queues backend.
//
// Record: a queue with CL_QUEUE_RECORDABLE_QCOM on the engine's context and
// device; clNewRecordingQCOM; one kernel per dispatch with every non-slot
// argument set and slot arguments NULL, each enqueued on the recordable
// queue; clEndRecordingQCOM. A list longer than the device's
// CL_DEVICE_RECORDABLE_QUEUE_MAX_SIZE becomes several recordings replayed in
// order.
//
// Replay: clEnqueueRecordingQCOM per recording on the caller's queue with a
// cl_array_arg_qcom for every slot use of that recording, on every replay
// (whether substitutions persist is not documented). A run with SVM
// bindings (Bindings::SetSvm) replays with clEnqueueRecordingSVMQCOM
// instead, the SVM pointers in its svm_arg_array (arg_value is the pointer,
// as clSetKernelArgSVMPointer takes it) and the cl_mems in arg_array. The
// wait list gates the first recording; `done` is the last recording's event.
//
// The backend owns its recordings and the kernels recorded into them (a
// driver may reference the kernel objects at replay) and releases both on
// destruction.
#ifndef RECQ_BACKENDS_QCOM_QCOM_RECORDING_H_
#define RECQ_BACKENDS_QCOM_QCOM_RECORDING_H_

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/recording_backend.h"
#include "recq/context.h"

namespace recq::internal {

// QcomAvailable is OK when the context's device lists
// cl_qcom_recordable_queues and every entry point resolves; otherwise an
// Unavailable status that says which is missing. The backend's probe:
// registered as "qcom", `auto`'s first choice where available.
[[nodiscard]] absl::Status QcomAvailable(const Context& context);

// CreateQcomRecording records the engine's dispatch list. Errors name the
// failing OpenCL call (for example "clNewRecordingQCOM: CL_OUT_OF_RESOURCES").
[[nodiscard]] absl::StatusOr<std::unique_ptr<RecordingBackend>> CreateQcomRecording(
    std::shared_ptr<const EngineState> engine);

}  // namespace recq::internal

#endif  // RECQ_BACKENDS_QCOM_QCOM_RECORDING_H_
