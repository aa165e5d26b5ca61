// MaxUnpool against the reference: 1-D and 2-D windows, with and without a
// larger output shape, int64 and int32 indices. The indices are a constant
// drawn like MaxPool's: one position inside each input element's window,
// so no two elements share one (a shared index takes either value).
#include <random>
#include <string>
#include <vector>

#include "engine/ops/max_unpool.h"
#include "gtest/gtest.h"
#include "ops/op_test_util.h"

namespace recq::optest {
namespace {

using internal::MaxUnpoolAttrs;

struct Case {
  std::string name;
  std::vector<int64_t> x;         // [N, C, spatial...]
  std::vector<int64_t> kernel;    // == strides: windows do not overlap
  std::vector<int64_t> out_grow;  // added to the inferred spatial dims
  DataType index_type;
};

const Case kCases[] = {
    {"Pool2x2", {2, 3, 4, 5}, {2, 2}, {0, 0}, DataType::kInt64},
    {"Pool3x2LargerOutput", {1, 2, 3, 5}, {3, 2}, {2, 1}, DataType::kInt64},
    {"Pool1DInt32", {2, 3, 7}, {3}, {1}, DataType::kInt32},
};

class MaxUnpoolTest : public ::testing::TestWithParam<Case> {};

TEST_P(MaxUnpoolTest, MatchesReference) {
  const Case& c = GetParam();
  const size_t spatial = c.kernel.size();
  MaxUnpoolAttrs a;
  a.inferred_shape = {c.x[0], c.x[1]};
  for (size_t i = 0; i < spatial; ++i) a.inferred_shape.push_back(c.x[2 + i] * c.kernel[i]);
  a.out_shape = a.inferred_shape;
  for (size_t i = 0; i < spatial; ++i) a.out_shape[2 + i] += c.out_grow[i];

  std::mt19937_64 rng(NextSeed());
  int64_t count = 1;
  for (int64_t d : c.x) count *= d;
  std::vector<int64_t> idx(count);
  for (int64_t e = 0; e < count; ++e) {
    // e's coordinates in x, then a random position in its window.
    int64_t rest = e, flat = 0, stride = 1;
    std::vector<int64_t> pos(c.x.size());
    for (size_t d = c.x.size(); d-- > 0;) {
      pos[d] = rest % c.x[d];
      rest /= c.x[d];
    }
    for (size_t d = c.x.size(); d-- > 0;) {
      int64_t p = pos[d];
      if (d >= 2) p = p * c.kernel[d - 2] + static_cast<int64_t>(rng() % c.kernel[d - 2]);
      flat += p * stride;
      stride *= a.inferred_shape[d];
    }
    idx[e] = flat;
  }
  OpGraphBuilder b;
  TensorRef x = b.Input("x", c.x, -4.0f, 4.0f);
  TensorRef indices =
      c.index_type == DataType::kInt64
          ? b.graph().Constant("indices", c.x, HostData(idx))
          : b.graph().Constant("indices", c.x,
                               HostData(std::vector<int32_t>(idx.begin(), idx.end())));
  TensorRef y = b.graph().AddNode(internal::kMaxUnpool, {x, indices}, a);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
}

INSTANTIATE_TEST_SUITE_P(Windows, MaxUnpoolTest, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace recq::optest
