#include "engine/memory_planner.h"

#include <algorithm>
#include <numeric>

namespace recq::internal {

MemoryPlan PlanMemory(const std::vector<TensorLifetime>& tensors) {
  MemoryPlan plan;
  plan.buffer_of.assign(tensors.size(), -1);
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return tensors[a].first < tensors[b].first; });
  std::vector<int> busy_until;  // per buffer: last step of its current tensor
  for (size_t t : order) {
    const TensorLifetime& life = tensors[t];
    int best = -1;
    for (size_t b = 0; b < plan.buffer_bytes.size(); ++b) {
      if (busy_until[b] >= life.first) continue;
      // Prefer the smallest buffer that fits; else the largest one (to grow).
      if (best < 0) {
        best = static_cast<int>(b);
        continue;
      }
      size_t have = plan.buffer_bytes[b], cur = plan.buffer_bytes[best];
      bool fits = have >= life.bytes, cur_fits = cur >= life.bytes;
      if ((fits && (!cur_fits || have < cur)) || (!fits && !cur_fits && have > cur)) {
        best = static_cast<int>(b);
      }
    }
    if (best < 0) {
      best = static_cast<int>(plan.buffer_bytes.size());
      plan.buffer_bytes.push_back(0);
      busy_until.push_back(-1);
    }
    plan.buffer_bytes[best] = std::max(plan.buffer_bytes[best], life.bytes);
    busy_until[best] = life.last;
    plan.buffer_of[t] = best;
  }
  plan.total_bytes = std::accumulate(plan.buffer_bytes.begin(), plan.buffer_bytes.end(), size_t{0});
  int last_step = 0;
  for (const TensorLifetime& t : tensors) last_step = std::max(last_step, t.last);
  std::vector<size_t> alive(last_step + 1, 0);
  for (const TensorLifetime& t : tensors) {
    for (int s = t.first; s <= t.last; ++s) alive[s] += t.bytes;
  }
  plan.lower_bound_bytes = alive.empty() ? 0 : *std::max_element(alive.begin(), alive.end());
  return plan;
}

}  // namespace recq::internal
