// The emulated replay list: the reference recording backend.
//
// At record time it creates one cl_kernel per dispatch with every argument
// set. A replay re-sets only the slot arguments whose memory changed since
// the previous run (through the engine's slot -> (dispatch, arg) index),
// then enqueues every dispatch with no host sync. Runs on any OpenCL 1.2
// device.
#ifndef RECQ_BACKENDS_REPLAY_REPLAY_RECORDING_H_
#define RECQ_BACKENDS_REPLAY_REPLAY_RECORDING_H_

#include <memory>

#include "absl/status/statusor.h"
#include "engine/recording_backend.h"

namespace recq::internal {

[[nodiscard]] absl::StatusOr<std::unique_ptr<RecordingBackend>> CreateReplayRecording(
    std::shared_ptr<const EngineState> engine);

// EnqueueDispatch enqueues one dispatch's kernel with its sizes; the error
// names the dispatch.
[[nodiscard]] absl::Status EnqueueDispatch(cl_command_queue queue, const Dispatch& dispatch,
                                           cl_kernel kernel, absl::Span<const cl_event> wait_list,
                                           cl_event* event);

// EnqueueKernels enqueues `kernels[i]` with dispatch i's sizes, the wait list
// on the first and `done` from the last (a marker when there are none).
// Shared by the backends that replay kernel objects.
[[nodiscard]] absl::Status EnqueueKernels(cl_command_queue queue, const DispatchList& list,
                                          absl::Span<const cl::UniqueKernel> kernels,
                                          absl::Span<const cl_event> wait_list, cl_event* done);

}  // namespace recq::internal

#endif  // RECQ_BACKENDS_REPLAY_REPLAY_RECORDING_H_
