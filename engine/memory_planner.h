// Liveness-based planning of intermediate tensors onto shared buffers.
#ifndef RECQ_ENGINE_MEMORY_PLANNER_H_
#define RECQ_ENGINE_MEMORY_PLANNER_H_

#include <cstddef>
#include <vector>

namespace recq::internal {

// A tensor to place: its size and the steps (dispatch-list positions) of its
// first write and its last read, inclusive.
struct TensorLifetime {
  size_t bytes = 0;
  int first = 0;
  int last = 0;
};

struct MemoryPlan {
  std::vector<int> buffer_of;        // per tensor: the buffer it lives in
  std::vector<size_t> buffer_bytes;  // per buffer
  size_t total_bytes = 0;            // sum of buffer_bytes
  size_t lower_bound_bytes = 0;      // the largest sum of tensors alive at one step
};

// PlanMemory assigns each tensor to a buffer such that tensors whose
// lifetimes overlap never share one. Greedy best fit in order of first use;
// a buffer grows when a larger tensor reuses it.
MemoryPlan PlanMemory(const std::vector<TensorLifetime>& tensors);

}  // namespace recq::internal

#endif  // RECQ_ENGINE_MEMORY_PLANNER_H_
