#include "testing/small_net.h"

#include <utility>

#include "gtest/gtest.h"
#include "reference/reference_executor.h"

namespace recq::testing {

Graph SmallNet() {
  GraphBuilder b;
  TensorRef x = b.Input("x", {1, 8, 10, 12});
  auto w1 = reference::RandomTensor({8, 8, 3, 3}, 11, -0.3f, 0.3f);
  auto b1 = reference::RandomTensor({8}, 12);
  auto w2 = reference::RandomTensor({4, 8, 1, 1}, 13, -0.5f, 0.5f);
  Conv2DAttrs pad1;
  pad1.pads = {1, 1, 1, 1};
  TensorRef y =
      b.Conv2D(x, b.Constant("w1", w1.shape, w1.data), b.Constant("b1", b1.shape, b1.data), pad1);
  y = b.Relu(y);
  y = b.Add(y, x);
  y = b.Conv2D(y, b.Constant("w2", w2.shape, w2.data), {}, {});
  b.Output(y, "y");
  auto g = std::move(b).Build();
  EXPECT_TRUE(g.ok()) << g.status();
  return *g;
}

}  // namespace recq::testing
