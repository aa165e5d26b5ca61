// The unrecorded path: dispatches op by op and sets every argument of every
// kernel on every run. The baseline a recording improves on, and a debugging
// aid (no state carries over between runs but the kernel objects).
#ifndef RECQ_BACKENDS_UNRECORDED_UNRECORDED_RUNNER_H_
#define RECQ_BACKENDS_UNRECORDED_UNRECORDED_RUNNER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "engine/recording_backend.h"

namespace recq::internal {

// CreateUnrecordedRunner makes the unrecorded path for `engine`. Registered
// as "unrecorded": available on every device, never chosen by `auto`.
[[nodiscard]] absl::StatusOr<std::unique_ptr<RecordingBackend>> CreateUnrecordedRunner(
    std::shared_ptr<const EngineState> engine);

}  // namespace recq::internal

#endif  // RECQ_BACKENDS_UNRECORDED_UNRECORDED_RUNNER_H_
