// PlaneConcat against the reference of the ops it replaces: Concats whose
// inputs include Gathers of whole slices along the Concat's axis, compiled
// with the passes on (the plane_concat pattern makes one PlaneConcat) and
// off, on both kernel families: planes of 16 elements and more (whole
// vector copies) and fewer, several Gathers of one source, batch 2, an
// axis other than the channels.
#include <string>
#include <vector>

#include "engine/ops/layout_attrs.h"
#include "gtest/gtest.h"
#include "ops/op_test_util.h"
#include "recq/graph.h"

namespace recq::optest {
namespace {

struct PlaneCase {
  std::string name;
  std::vector<int64_t> a;  // the gathered source
  std::vector<int64_t> b;  // a plain input
  int64_t axis;
  std::vector<int64_t> first;   // indices of the first Gather of a
  std::vector<int64_t> second;  // of a second one (none when empty)
};

TensorRef GatherOf(OpGraphBuilder& b, TensorRef x, int64_t axis, std::vector<int64_t> indices) {
  internal::GatherAttrs a;
  a.axis = axis;
  a.indices_shape = {static_cast<int64_t>(indices.size())};
  a.indices = std::move(indices);
  return b.graph().AddNode(OpType("Gather"), {x}, a);
}

class PlaneConcatTest : public ::testing::TestWithParam<PlaneCase> {};

TEST_P(PlaneConcatTest, MatchesTheGathersAndTheConcat) {
  const PlaneCase& k = GetParam();
  OpGraphBuilder b;
  TensorRef a = b.Input("a", k.a);
  TensorRef plain = b.graph().Relu(b.Input("b", k.b));
  std::vector<TensorRef> parts = {GatherOf(b, a, k.axis, k.first), plain};
  if (!k.second.empty()) parts.push_back(GatherOf(b, a, k.axis, k.second));
  TensorRef y = b.graph().AddNode(OpType::kConcat, parts, ConcatAttrs{k.axis});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
}

INSTANTIATE_TEST_SUITE_P(
    Concats, PlaneConcatTest,
    ::testing::Values(PlaneCase{"shufflenet", {1, 8, 5, 7}, {1, 4, 5, 7}, 1, {0, 4, 1, 5}, {}},
                      PlaneCase{"two_gathers", {2, 6, 8, 8}, {2, 3, 8, 8}, 1, {5, 4, 0}, {2, 3}},
                      PlaneCase{"rows", {2, 3, 6, 20}, {2, 3, 2, 20}, 2, {5, 0, 3}, {}}),
    [](const ::testing::TestParamInfo<PlaneCase>& info) { return info.param.name; });

}  // namespace
}  // namespace recq::optest
