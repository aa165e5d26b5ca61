// The unrecorded path: dispatches op by op and sets every argument of every
// kernel on every run. The baseline a recording improves on, and a debugging
// aid (no state carries over between runs but the kernel objects).
#ifndef RECQ_BACKENDS_UNRECORDED_UNRECORDED_RUNNER_H_
#define RECQ_BACKENDS_UNRECORDED_UNRECORDED_RUNNER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "engine/recording_backend.h"

namespace recq::internal {

[[nodiscard]] absl::StatusOr<std::unique_ptr<RecordingBackend>> CreateUnrecordedRunner(
    std::shared_ptr<const EngineState> engine);

// ProfileDispatches runs every dispatch once on a new profiling queue of the
// engine's context with `slot_mems` bound, waits, and returns each one's
// device time (CL_PROFILING_COMMAND_END - START) in milliseconds.
[[nodiscard]] absl::StatusOr<std::vector<double>> ProfileDispatches(
    std::shared_ptr<const EngineState> engine, absl::Span<const SlotMemory> slot_mems);

}  // namespace recq::internal

#endif  // RECQ_BACKENDS_UNRECORDED_UNRECORDED_RUNNER_H_
