// The engine-file writer (Engine::Serialize): an engine's state as an engine
// file's bytes. The same engine state, device and caches give the same bytes
// (PoCL binaries canonicalized: pocl_binary.h).
#ifndef RECQ_ENGINE_ENGINE_FILE_WRITER_H_
#define RECQ_ENGINE_ENGINE_FILE_WRITER_H_

#include <string>

#include "absl/status/statusor.h"
#include "engine/engine_state.h"

namespace recq::internal {

// SerializeEngineState writes `state` as an engine file's bytes: its
// device, options, bindings, memory plan, graph (as ONNX, or why there is
// none), variant choices, constants (their data only without a graph),
// programs with their binaries as the driver has them now, kernels and
// dispatches, sealed in an envelope (archive.h). Unimplemented for a payload
// over protobuf's 2 GiB; the driver's errors from reading a binary.
[[nodiscard]] absl::StatusOr<std::string> SerializeEngineState(const EngineState& state);

}  // namespace recq::internal

#endif  // RECQ_ENGINE_ENGINE_FILE_WRITER_H_
