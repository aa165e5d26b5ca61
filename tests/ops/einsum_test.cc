// Einsum's kernel against the CPU reference, on the equations it runs
// (the import sends float32 products to MatMul instead; those are tested
// through ONNX in tests/onnx/einsum_import_test.cc): diagonals, traces,
// sums, transposes, broadcast ellipsis dims, products with and without
// summed labels, in float32, float16 and float64.
#include <string>
#include <tuple>
#include <vector>

#include "engine/ops/einsum.h"
#include "gtest/gtest.h"
#include "ops/op_test_util.h"

namespace recq::optest {
namespace {

struct EinsumCase {
  const char* name;
  const char* equation;
  std::vector<std::vector<int64_t>> shapes;
};

const EinsumCase kCases[] = {
    {"batch_diagonal", "...ii->...i", {{3, 5, 5}}},
    {"trace", "ii", {{6, 6}}},
    {"sum_rows", "ij->i", {{7, 9}}},
    {"sum_all", "ijk->", {{3, 4, 5}}},
    {"transpose", "ij->ji", {{3, 4}}},
    {"inner", "i,i", {{17}, {17}}},
    {"outer", "i,j->ij", {{4}, {5}}},
    {"batch_matmul", "bij,bjk->bik", {{3, 4, 6}, {3, 6, 5}}},
    {"broadcast_batch", "...ij,...jk->...ik", {{2, 1, 3, 4}, {3, 4, 2}}},
    {"two_contractions", "abc,cbd->ad", {{3, 4, 5}, {5, 4, 2}}},
    {"implicit", "ij,jk", {{3, 4}, {4, 2}}},
    {"diagonal_product", "ii,i->i", {{5, 5}, {5}}},
    {"one_sided_sum", "ij,k->ik", {{3, 4}, {5}}},
};

class EinsumTest : public ::testing::TestWithParam<std::tuple<EinsumCase, DataType>> {};

TEST_P(EinsumTest, MatchesReference) {
  const auto [c, type] = GetParam();
  std::vector<size_t> ranks;
  for (const auto& s : c.shapes) ranks.push_back(s.size());
  absl::StatusOr<internal::EinsumAttrs> attrs = internal::ParseEinsum(c.equation, ranks);
  ASSERT_TRUE(attrs.ok()) << attrs.status();
  OpGraphBuilder b;
  std::vector<TensorRef> inputs;
  for (size_t k = 0; k < c.shapes.size(); ++k) {
    inputs.push_back(b.Input("x" + std::to_string(k), c.shapes[k], -1.0f, 1.0f, type));
  }
  TensorRef y = b.graph().AddNode(internal::kEinsum, inputs, *attrs);
  CheckOptions o;  // sums of at most 36 products of magnitude <= 1
  o.atol = type == DataType::kFloat16 ? 2e-2f : 1e-5f;
  o.rtol = type == DataType::kFloat16 ? 1e-2f : 1e-5f;
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), o);
}

INSTANTIATE_TEST_SUITE_P(Equations, EinsumTest,
                         ::testing::Combine(::testing::ValuesIn(kCases),
                                            ::testing::Values(DataType::kFloat32,
                                                              DataType::kFloat16,
                                                              DataType::kFloat64)),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param).name) + "_" +
                                  DataTypeName(std::get<1>(info.param));
                         });

TEST(EinsumParseTest, ExpandsEllipsisAndImplicitOutput) {
  absl::StatusOr<internal::EinsumAttrs> a = internal::ParseEinsum("...ii ->...i", {4});
  ASSERT_TRUE(a.ok()) << a.status();
  // 'i' is label 8; the two ellipsis dims are labels 52 and 53.
  EXPECT_EQ(a->operands, (std::vector<std::vector<int64_t>>{{52, 53, 8, 8}}));
  EXPECT_EQ(a->output, (std::vector<int64_t>{52, 53, 8}));
  // Implicit: letters that occur once, upper case before lower case.
  a = internal::ParseEinsum("bA,cb", {2, 2});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->output, (std::vector<int64_t>{26, 2}));
}

TEST(EinsumParseTest, RejectsMalformedEquations) {
  struct Case {
    const char* equation;
    std::vector<size_t> ranks;
    const char* message;
  };
  for (const Case& c : {Case{"ij,jk->ik", {2}, "operands"}, Case{"ij->ik", {2}, "output label"},
                        Case{"ij->ii", {2}, "output label"}, Case{"i.j->i", {2}, "'.'"},
                        Case{"i1->i", {2}, "character"}, Case{"ijk->i", {2}, "rank"}}) {
    absl::Status s = internal::ParseEinsum(c.equation, c.ranks).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.equation;
    EXPECT_NE(s.message().find(c.message), std::string::npos) << c.equation << ": " << s;
  }
}

TEST(EinsumTest, RejectsMismatchedSizes) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {3, 4});
  TensorRef w = b.Input("w", {5, 2});
  absl::StatusOr<internal::EinsumAttrs> a = internal::ParseEinsum("ij,jk->ik", {2, 2});
  ASSERT_TRUE(a.ok());
  b.Output(b.AddNode(internal::kEinsum, {x, w}, *a), "y");
  absl::Status s = std::move(b).Build().status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("label j has sizes 4 and 5"), std::string::npos) << s;
}

}  // namespace
}  // namespace recq::optest
