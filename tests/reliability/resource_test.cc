// Resource exhaustion: models too large for the device are a clear
// ResourceExhausted at compile, checked before anything is allocated.
#include "absl/strings/str_cat.h"
#include "testing/test_env.h"

namespace recq {
namespace {

TEST(ResourceTest, AbsurdShapeIsResourceExhaustedBeforeAnyAllocation) {
  // 1e12 elements (4 TB): no host or device memory is touched for it.
  GraphBuilder b;
  TensorRef x = b.Input("x", {1, 1000000, 1000000});
  b.Output(b.Relu(x), "y");
  RECQ_ASSERT_OK_AND_ASSIGN(Graph graph, std::move(b).Build());
  absl::StatusOr<Engine> engine = Engine::Compile(testing::SharedContext(), graph);
  ASSERT_TRUE(absl::IsResourceExhausted(engine.status())) << engine.status();
  EXPECT_THAT(std::string(engine.status().message()),
              ::testing::HasSubstr("tensor 'x' (1x1000000x1000000) needs 4000000000000 bytes"));
  EXPECT_THAT(std::string(engine.status().message()),
              ::testing::HasSubstr("CL_DEVICE_MAX_MEM_ALLOC_SIZE"));
}

TEST(ResourceTest, IntermediateBeyondTheMaxAllocationIsResourceExhausted) {
  const DeviceInfo& device = testing::SharedContext().device_info();
  // The input fits one buffer; the concatenation of it with itself (an
  // intermediate, consumed by Relu) does not.
  const int64_t elements = static_cast<int64_t>(device.max_alloc_bytes * 3 / 5 / sizeof(float));
  GraphBuilder b;
  TensorRef x = b.Input("x", {elements});
  b.Output(b.Relu(b.AddNode(OpType::kConcat, {x, x}, ConcatAttrs{0})), "y");
  RECQ_ASSERT_OK_AND_ASSIGN(Graph graph, std::move(b).Build());
  absl::StatusOr<Engine> engine = Engine::Compile(testing::SharedContext(), graph);
  ASSERT_TRUE(absl::IsResourceExhausted(engine.status())) << engine.status();
  EXPECT_THAT(std::string(engine.status().message()),
              ::testing::HasSubstr("CL_DEVICE_MAX_MEM_ALLOC_SIZE"));
  EXPECT_THAT(std::string(engine.status().message()),
              ::testing::HasSubstr(absl::StrCat(elements * 2 * 4, " bytes")));
}

}  // namespace
}  // namespace recq
