// Lowering: a Graph to the backend-neutral dispatch list, with a memory plan
// for the intermediates.
#ifndef RECQ_ENGINE_LOWERING_H_
#define RECQ_ENGINE_LOWERING_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "engine/dispatch_list.h"
#include "engine/memory_planner.h"
#include "recq/graph.h"

namespace recq::internal {

// LoweringTarget holds the device facts that kernel selection depends on.
// The default is the CPU-shaped library (vector work-items, small groups),
// tuned for PoCL; `gpu` selects the GPU variants (one or a few outputs per
// work-item, consecutive work-items along pixels, groups of 64-256).
struct LoweringTarget {
  bool gpu = false;
  size_t max_work_group_size = 0;  // CL_DEVICE_MAX_WORK_GROUP_SIZE; 0: unknown
  uint32_t compute_units = 0;      // CL_DEVICE_MAX_COMPUTE_UNITS; 0: unknown
};

struct Lowered {
  DispatchList list;
  MemoryPlan plan;
};

// Lower turns every node into one or more dispatches of the kernel library.
// Reshape, Flatten and Identity alias their input's memory where they can
// and become copies where they cannot (both ends bound per run, say). Graph
// inputs and outputs become binding slots, constants stay constants, and the
// other tensors are placed by PlanMemory. Unimplemented names an op the
// kernel library cannot run. `target` picks among the kernel variants; every
// variant computes the same function.
[[nodiscard]] absl::StatusOr<Lowered> Lower(const Graph& graph, const LoweringTarget& target = {});

}  // namespace recq::internal

#endif  // RECQ_ENGINE_LOWERING_H_
