// LoadEngineState: Engine::Deserialize's work on a verified EngineFile, for
// the loaders that make more than one engine of a file (ShapedEngine::Load).
#ifndef RECQ_ENGINE_ENGINE_FILE_LOAD_STATE_H_
#define RECQ_ENGINE_ENGINE_FILE_LOAD_STATE_H_

#include <chrono>
#include <memory>

#include "absl/status/statusor.h"
#include "engine/engine_file.pb.h"
#include "engine/engine_state.h"
#include "recq/context.h"
#include "recq/engine.h"

namespace recq::internal {

// LoadEngineState loads `file` (verified: ParseEngineFile) into `context`
// as Engine::Deserialize does, its shape_profile ignored; with `weights`
// its constants' buffers come from that cache. `start` is when the load
// began (EngineStats::compile_ms counts from there).
[[nodiscard]] absl::StatusOr<std::shared_ptr<EngineState>> LoadEngineState(
    const Context& context, engine_file::EngineFile file, const EngineLoadOptions& load,
    std::shared_ptr<WeightCache> weights, std::chrono::steady_clock::time_point start);

}  // namespace recq::internal

#endif  // RECQ_ENGINE_ENGINE_FILE_LOAD_STATE_H_
