// The state behind a recq::Engine: immutable after Compile.
#ifndef RECQ_ENGINE_ENGINE_STATE_H_
#define RECQ_ENGINE_ENGINE_STATE_H_

#include <memory>
#include <utility>
#include <vector>

#include "backends/opencl/cl_handle.h"
#include "engine/context_state.h"
#include "engine/dispatch_list.h"
#include "engine/program_cache.h"
#include "recq/engine.h"

namespace recq::internal {

// Where a slot is used: dispatch index and argument index.
struct ArgUse {
  uint32_t dispatch;
  uint32_t arg;
};

struct EngineState {
  explicit EngineState(Context ctx) : context(ctx.state()), public_context(std::move(ctx)) {}

  std::shared_ptr<ContextState> context;
  Context public_context;
  DispatchList list;
  std::vector<SharedProgram> programs;         // per DispatchList::kernels entry
  std::vector<cl::UniqueMem> constants;        // per DispatchList::constants entry, read-only
  std::vector<std::vector<ArgUse>> slot_uses;  // per slot
  std::vector<BindingInfo> inputs;
  std::vector<BindingInfo> outputs;
  EngineStats stats;
};

}  // namespace recq::internal

#endif  // RECQ_ENGINE_ENGINE_STATE_H_
