// Data-movement ops against the CPU reference: Slice (negative steps, axes
// and bounds, clamping), Tile, Expand, Pad (every mode, cropping), Gather,
// DepthToSpace (DCR, CRD) and SpaceToDepth. All are exact copies.
#include <string>
#include <utility>
#include <vector>

#include "engine/ops/layout_attrs.h"
#include "gtest/gtest.h"
#include "ops/op_test_util.h"
#include "recq/graph.h"

namespace recq::optest {
namespace {

using internal::BlockAttrs;
using internal::ExpandAttrs;
using internal::GatherAttrs;
using internal::PadAttrs;
using internal::PadMode;
using internal::SliceAttrs;
using internal::TileAttrs;

constexpr int64_t kMax = int64_t{1} << 62;

void ExpectOp(const char* op, std::vector<int64_t> shape, OpAttrs attrs) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", std::move(shape), -4.0f, 4.0f);
  TensorRef y = b.graph().AddNode(OpType(op), {x}, std::move(attrs));
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
}

TEST(SliceTest, ChannelHalvesOfShuffleNet) {
  ExpectOp("Slice", {1, 116, 7, 9}, SliceAttrs{{0}, {58}, {1}, {}});
  ExpectOp("Slice", {1, 116, 7, 9}, SliceAttrs{{58}, {116}, {1}, {}});
}

// Slice of other element types copies their bits (a bool attention mask
// sliced to the keys, an int64 one, float16 data), negative steps too.
TEST(SliceTest, EveryElementType) {
  for (DataType type : {DataType::kBool, DataType::kInt64, DataType::kFloat16}) {
    SCOPED_TRACE(DataTypeName(type));
    for (const SliceAttrs& a :
         {SliceAttrs{{0}, {9}, {3}, {}}, SliceAttrs{{-1, 2}, {-kMax, 7}, {1, 3}, {-2, 1}}}) {
      OpGraphBuilder b;
      TensorRef x = b.Input("x", {1, 5, 6, 13}, -50.0f, 50.0f, type);
      TensorRef y = b.graph().AddNode(OpType("Slice"), {x}, a);
      RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
    }
  }
}

TEST(SliceTest, NegativeAxesStartsAndEnds) {
  ExpectOp("Slice", {2, 5, 6, 7}, SliceAttrs{{-4, 1}, {-1, 100}, {-1, -3}, {}});
}

TEST(SliceTest, NegativeSteps) {
  ExpectOp("Slice", {3, 10, 9}, SliceAttrs{{-1, 8}, {-kMax, 0}, {1, 2}, {-1, -3}});
}

TEST(SliceTest, StepsAndClamping) {
  ExpectOp("Slice", {4, 13, 5}, SliceAttrs{{1, -100, 0}, {kMax, 12, 5}, {0, 1, 2}, {2, 3, 1}});
}

TEST(SliceTest, DefaultAxes) { ExpectOp("Slice", {6, 7}, SliceAttrs{{1, 2}, {5, 6}, {}, {}}); }

TEST(TileTest, Repeats) {
  ExpectOp("Tile", {2, 3, 5}, TileAttrs{{2, 1, 3}});
  ExpectOp("Tile", {1, 7}, TileAttrs{{4, 1}});
}

TEST(ExpandTest, Broadcasts) {
  ExpectOp("Expand", {1, 768}, ExpandAttrs{{1, 1, 768}});  // ViT's class token
  ExpectOp("Expand", {3, 1, 5}, ExpandAttrs{{2, 1, 4, 5}});
  ExpectOp("Expand", {4, 1}, ExpandAttrs{{4, 6}});
}

TEST(PadTest, Modes) {
  for (PadMode mode : {PadMode::kConstant, PadMode::kReflect, PadMode::kEdge, PadMode::kWrap}) {
    SCOPED_TRACE(static_cast<int>(mode));
    ExpectOp("Pad", {1, 3, 6, 7}, PadAttrs{mode, {0, 0, 2, 1, 0, 0, 3, 4}, 1.5f});
    ExpectOp("Pad", {2, 5}, PadAttrs{mode, {1, 3, 2, 0}, -0.5f});
  }
}

TEST(PadTest, NegativePadsCrop) {
  ExpectOp("Pad", {2, 3, 8, 9}, PadAttrs{PadMode::kConstant, {0, 1, -2, 1, 1, 0, 2, -3}, 0.0f});
}

TEST(GatherTest, Axes) {
  ExpectOp("Gather", {5, 4, 3}, GatherAttrs{0, {4, 0, 2}, {3}});
  ExpectOp("Gather", {5, 4, 3}, GatherAttrs{1, {3, 3, 0, 1, 2, 0}, {2, 3}});
  ExpectOp("Gather", {5, 4, 3}, GatherAttrs{2, {1}, {}});  // a scalar index drops the axis
  ExpectOp("Gather", {1, 197, 24}, GatherAttrs{1, {0}, {}});
  // Progressions are strided copies: step 2, step -1, one index of the
  // outermost axis (attention's q, k, v), and rows of 20 (a vector and a tail).
  ExpectOp("Gather", {7, 4, 3}, GatherAttrs{0, {1, 3, 5}, {3}});
  ExpectOp("Gather", {5, 4, 3}, GatherAttrs{1, {3, 2, 1}, {3}});
  ExpectOp("Gather", {3, 2, 5, 20}, GatherAttrs{0, {2}, {}});
}

TEST(DepthToSpaceTest, Modes) {
  ExpectOp("DepthToSpace", {2, 12, 3, 5}, BlockAttrs{2, false});
  ExpectOp("DepthToSpace", {2, 12, 3, 5}, BlockAttrs{2, true});
  ExpectOp("DepthToSpace", {1, 18, 2, 3}, BlockAttrs{3, true});
  ExpectOp("SpaceToDepth", {2, 3, 6, 4}, BlockAttrs{2, false});
}

}  // namespace
}  // namespace recq::optest
