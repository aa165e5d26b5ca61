// The memory planner: tensors alive at once never share a buffer, and the
// plan reuses memory.
#include "engine/memory_planner.h"

#include <random>

#include "engine/lowering.h"
#include "gtest/gtest.h"
#include "testing/test_env.h"
#include "tools/models/mobilenet.h"

namespace recq::internal {
namespace {

void ExpectValid(const std::vector<TensorLifetime>& tensors, const MemoryPlan& plan) {
  ASSERT_EQ(plan.buffer_of.size(), tensors.size());
  for (size_t a = 0; a < tensors.size(); ++a) {
    ASSERT_GE(plan.buffer_of[a], 0);
    EXPECT_GE(plan.buffer_bytes[plan.buffer_of[a]], tensors[a].bytes);
    for (size_t b = a + 1; b < tensors.size(); ++b) {
      bool overlap = tensors[a].first <= tensors[b].last && tensors[b].first <= tensors[a].last;
      if (overlap) {
        EXPECT_NE(plan.buffer_of[a], plan.buffer_of[b]) << a << " and " << b;
      }
    }
  }
  EXPECT_GE(plan.total_bytes, plan.lower_bound_bytes);
}

TEST(MemoryPlannerTest, ChainReusesTwoBuffers) {
  std::vector<TensorLifetime> chain;
  for (int i = 0; i < 10; ++i) chain.push_back({1000, i, i + 1});
  MemoryPlan plan = PlanMemory(chain);
  ExpectValid(chain, plan);
  EXPECT_EQ(plan.buffer_bytes.size(), 2u);
  EXPECT_EQ(plan.total_bytes, 2000u);
  EXPECT_EQ(plan.lower_bound_bytes, 2000u);
}

TEST(MemoryPlannerTest, RandomLifetimesNeverOverlap) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<TensorLifetime> tensors;
    for (int i = 0; i < 40; ++i) {
      int first = rng() % 50;
      tensors.push_back({size_t(1 + rng() % 5000), first, first + int(rng() % 8)});
    }
    ExpectValid(tensors, PlanMemory(tensors));
  }
}

TEST(MemoryPlannerTest, MobileNetV2PlanIsCloseToTheLowerBound) {
  auto graph = models::BuildMobileNetV2();
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto lowered = Lower(*graph);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  const MemoryPlan& plan = lowered->plan;
  std::printf("MobileNetV2 224: planned %.2f MiB, unplanned %.2f MiB, lower bound %.2f MiB\n",
              plan.total_bytes / 1048576.0, lowered->list.unplanned_bytes / 1048576.0,
              plan.lower_bound_bytes / 1048576.0);
  EXPECT_LT(plan.total_bytes, lowered->list.unplanned_bytes / 4);
  EXPECT_LE(plan.total_bytes, plan.lower_bound_bytes * 3 / 2);
}

}  // namespace
}  // namespace recq::internal
