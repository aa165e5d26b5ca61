// Lowering: a Graph to the backend-neutral dispatch list, with a memory plan
// for the intermediates.
#ifndef RECQ_ENGINE_LOWERING_H_
#define RECQ_ENGINE_LOWERING_H_

#include "absl/status/statusor.h"
#include "engine/dispatch_list.h"
#include "engine/memory_planner.h"
#include "recq/graph.h"

namespace recq::internal {

struct Lowered {
  DispatchList list;
  MemoryPlan plan;
};

// Lower turns every node into one or more dispatches of the kernel library.
// Reshape, Flatten and Identity alias their input's memory where they can
// and become copies where they cannot (both ends bound per run, say). Graph
// inputs and outputs become binding slots, constants stay constants, and the
// other tensors are placed by PlanMemory. Unimplemented names an op the
// kernel library cannot run.
[[nodiscard]] absl::StatusOr<Lowered> Lower(const Graph& graph);

}  // namespace recq::internal

#endif  // RECQ_ENGINE_LOWERING_H_
