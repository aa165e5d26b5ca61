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

// CreateReplayRecording makes the replay list of `engine`. Registered as
// "replay": available on every device, the `auto` choice of last resort.
[[nodiscard]] absl::StatusOr<std::unique_ptr<RecordingBackend>> CreateReplayRecording(
    std::shared_ptr<const EngineState> engine);

}  // namespace recq::internal

#endif  // RECQ_BACKENDS_REPLAY_REPLAY_RECORDING_H_
