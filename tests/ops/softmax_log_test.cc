// LogSoftmax on every axis, and with opset < 13's coerce-to-2-D semantics,
// against the CPU reference.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/op_test_util.h"
#include "recq/graph.h"

namespace recq::optest {
namespace {

TEST(LogSoftmaxTest, EveryAxisMatchesReference) {
  const std::vector<int64_t> shape = {2, 3, 5, 67};
  for (int64_t axis = -4; axis < 4; ++axis) {
    for (bool coerce : {false, true}) {
      SCOPED_TRACE(std::to_string(axis) + (coerce ? " coerce_to_2d" : ""));
      OpGraphBuilder b;
      TensorRef x = b.Input("x", shape, -10.0f, 10.0f);
      TensorRef y = b.graph().AddNode(OpType("LogSoftmax"), {x}, SoftmaxAttrs{axis, coerce});
      // log of a sum of up to 2010 exps: a few ulp of values up to ~30.
      CheckOptions options;
      options.atol = 1e-5f;
      options.rtol = 1e-5f;
      RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), options);
    }
  }
}

}  // namespace
}  // namespace recq::optest
