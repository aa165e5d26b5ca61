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
#include "recq/op_registry.h"

namespace recq::internal {

// LoweringTarget holds the device facts that kernel selection depends on
// (the default is the CPU family, tuned for PoCL) and the hook through which
// a tuner picks among the kernel variants that fit a node.
struct LoweringTarget : DeviceFacts {
  VariantChooser choose_variant;  // empty: the first variant that fits
  // Picks the variant and its parameters; used when choose_variant is empty.
  KernelChooser choose_kernel;
  // EngineOptions::Precision::kFp16Storage: every kernel is built with
  // -DRECQ_HALF_STORAGE, float32 constants are uploaded as half, and the
  // graph must hold no float32 value but bindings and constants (the
  // graph went through ToHalfStorage, engine/precision.h).
  bool half_storage = false;
  // EngineOptions::Precision::kTf32: where the target has matrix units,
  // every kernel is built with -DRECQ_MMA_TF32 (common.cl: one tf32
  // product per multiply-add instead of three).
  bool tf32_products = false;
};

struct Lowered {
  DispatchList list;
  MemoryPlan plan;
};

// Lower turns every node into the dispatches of one of its op's kernel
// variants (recq/op_registry.h). Views (Reshape, Flatten, Identity) alias
// their input's memory where they can and run their own lowering (a copy)
// where they cannot (both ends bound per run, say). Graph
// inputs and outputs become binding slots, constants stay constants, and the
// other tensors are placed by PlanMemory. Unimplemented names an op the
// kernel library cannot run. `target` picks among the kernel variants; every
// variant computes the same function.
[[nodiscard]] absl::StatusOr<Lowered> Lower(const Graph& graph, const LoweringTarget& target = {});

}  // namespace recq::internal

#endif  // RECQ_ENGINE_LOWERING_H_
