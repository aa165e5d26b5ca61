// Regression tests for what onnx_fuzzer found, plus the seed corpus: every
// file must import without crashing (an error status is fine). Runs in every
// build, and under ASan/UBSan in scripts/sanitize.sh.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recq/onnx.h"

namespace recq {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(OnnxFuzzRegressionTest, SeedCorpusImportsWithoutCrashing) {
  size_t files = 0, imported = 0;
  for (const auto& entry : fs::directory_iterator(RECQ_FUZZ_DIR "/corpus/onnx")) {
    ++files;
    const std::string bytes = ReadAll(entry.path());
    absl::StatusOr<Graph> graph = LoadOnnxFromBytes(bytes);
    if (graph.ok()) {
      ++imported;
      EXPECT_FALSE(graph->nodes().empty()) << entry.path();
    } else {
      EXPECT_FALSE(graph.status().message().empty()) << entry.path();
    }
  }
  EXPECT_GE(files, 20u);
  EXPECT_GE(imported, files / 2) << "most seeds are valid models of supported ops";
}

// Found by the fuzzer: a Flatten whose input has a dim of INT64_MAX made
// InferOutputShape multiply with signed overflow (UBSan: "20 *
// 9223372036854775807 cannot be represented in type 'long'"). Shapes are
// now bounded (2^40 elements) before any op multiplies dims.
TEST(OnnxFuzzRegressionTest, FlattenOfHugeDimIsAnErrorNotAnOverflow) {
  const std::string bytes = ReadAll(RECQ_FUZZ_DIR "/regressions/flatten_dim_overflow.onnx");
  ASSERT_FALSE(bytes.empty());
  absl::StatusOr<Graph> graph = LoadOnnxFromBytes(bytes);
  ASSERT_FALSE(graph.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(graph.status()) || absl::IsResourceExhausted(graph.status()))
      << graph.status();
}

// Found by the fuzzer once its filter for the Flatten bug was gone: an
// initializer whose dims multiply past 2^63 (UBSan: "4294967296 *
// 2147483648" in DecodeTensor). Now InvalidArgument naming the tensor.
TEST(OnnxFuzzRegressionTest, InitializerDimsBeyondInt64AreAnError) {
  for (const char* name : {"initializer_dims_overflow.onnx", "initializer_dims_overflow_2.onnx",
                           // An integer Add folded at import, with no output.
                           "folded_node_without_output.onnx",
                           // An empty float initializer used as a node's data input.
                           "empty_constant_data_input.onnx"}) {
    const std::string bytes = ReadAll(fs::path(RECQ_FUZZ_DIR "/regressions") / name);
    ASSERT_FALSE(bytes.empty()) << name;
    absl::StatusOr<Graph> graph = LoadOnnxFromBytes(bytes);
    EXPECT_FALSE(graph.ok()) << name;
  }
}

// Found by the fuzzer: a pooling window with a stride near 2^63 and
// auto_pad SAME_UPPER (UBSan: "9223372036854775807 + 1" in
// ResolveWindow3D). Window values are now bounded, InvalidArgument naming
// the attribute and the range.
TEST(OnnxFuzzRegressionTest, WindowValuesNearInt64AreAnError) {
  for (const char* name : {"window_3d_stride_overflow.onnx", "window_2d_stride_overflow.onnx"}) {
    const std::string bytes = ReadAll(fs::path(RECQ_FUZZ_DIR "/regressions") / name);
    ASSERT_FALSE(bytes.empty()) << name;
    absl::StatusOr<Graph> graph = LoadOnnxFromBytes(bytes);
    ASSERT_FALSE(graph.ok()) << name;
    EXPECT_EQ(graph.status().code(), absl::StatusCode::kInvalidArgument) << graph.status();
    EXPECT_NE(graph.status().message().find("strides value 9223372036854775807 is out of range"),
              std::string::npos)
        << graph.status();
  }
}

// Found by the fuzzer: a Mul of int64 constants folded at import whose
// product, computed in double, was 5.2e33 (UBSan: "outside the range of
// representable values of type 'long'" in BroadcastConstants). Folded
// integers now saturate to int64's range; this model then fails on its
// declared output type, with a clear error.
TEST(OnnxFuzzRegressionTest, FoldedIntegerOutOfRangeIsNotUndefined) {
  const std::string bytes =
      ReadAll(RECQ_FUZZ_DIR "/regressions/constant_fold_int_out_of_range.onnx");
  ASSERT_FALSE(bytes.empty());
  absl::StatusOr<Graph> graph = LoadOnnxFromBytes(bytes);
  ASSERT_FALSE(graph.ok());
  EXPECT_EQ(graph.status().code(), absl::StatusCode::kInvalidArgument) << graph.status();
}

// Found by the fuzzer (a 10 s timeout under ASan): an Add of int64
// constants of shapes [n, 1] and [1, n], built by ConstantOfShape, folded
// n^2 elements at import with no bound; n = 8192 took 31 s under ASan,
// n = 65536 would need 32 GiB. One folded constant is now at most 2^26
// elements, and all of an import's folds share OnnxOptions::
// max_folded_elements.
TEST(OnnxFuzzRegressionTest, HugeBroadcastFoldIsRefusedBeforeComputing) {
  const std::string bytes = ReadAll(RECQ_FUZZ_DIR "/regressions/constant_fold_broadcast_huge.onnx");
  ASSERT_FALSE(bytes.empty());
  absl::StatusOr<Graph> graph = LoadOnnxFromBytes(bytes);
  ASSERT_FALSE(graph.ok());
  EXPECT_EQ(graph.status().code(), absl::StatusCode::kUnimplemented) << graph.status();
  EXPECT_THAT(graph.status().message(),
              testing::HasSubstr("a constant of 4294967296 elements is too large to fold"));
}

// The same Add four times in a chain, [1024, 1] + [1, 1024]: 2^20
// elements per fold. Within the default budget it imports; with a budget
// of three folds' worth, the fourth Add is refused and named.
TEST(OnnxFuzzRegressionTest, FoldsShareOneBudgetPerImport) {
  const std::string bytes =
      ReadAll(RECQ_FUZZ_DIR "/regressions/constant_fold_broadcast_chain.onnx");
  ASSERT_FALSE(bytes.empty());
  EXPECT_TRUE(LoadOnnxFromBytes(bytes).ok()) << LoadOnnxFromBytes(bytes).status();
  OnnxOptions options;
  // Two ConstantOfShape folds of 1024 elements each, then 2^20 per Add.
  options.max_folded_elements = 2 * 1024 + 3 * (int64_t{1} << 20);
  absl::StatusOr<Graph> graph = LoadOnnxFromBytes(bytes, options);
  ASSERT_FALSE(graph.ok());
  EXPECT_EQ(graph.status().code(), absl::StatusCode::kUnimplemented) << graph.status();
  EXPECT_THAT(graph.status().message(), testing::HasSubstr("(Add)"));
  EXPECT_THAT(graph.status().message(), testing::HasSubstr("OnnxOptions::max_folded_elements"));
  options.max_folded_elements += int64_t{1} << 20;
  EXPECT_TRUE(LoadOnnxFromBytes(bytes, options).ok());
}

// Found by the fuzzer: Dropout's all-true mask output for an input of
// 3x5x2^31 elements was built as a constant of that size (ASan: out of
// memory). The mask now reserves its elements as a fold does.
TEST(OnnxFuzzRegressionTest, HugeDropoutMaskIsRefused) {
  const std::string bytes = ReadAll(RECQ_FUZZ_DIR "/regressions/dropout_mask_huge.onnx");
  ASSERT_FALSE(bytes.empty());
  absl::StatusOr<Graph> graph = LoadOnnxFromBytes(bytes);
  ASSERT_FALSE(graph.ok());
  EXPECT_EQ(graph.status().code(), absl::StatusCode::kUnimplemented) << graph.status();
  EXPECT_THAT(graph.status().message(), testing::HasSubstr("(Dropout)"));
  EXPECT_THAT(graph.status().message(), testing::HasSubstr("too large to fold"));
}

// Found by the fuzzer (a timeout): a Concat folded from an empty constant
// of dims [2^31, 2, 0] looped 2^31 times over nothing. Empty folds are not
// looped over, and a Reduce folding away a zero dim reserves its outputs.
TEST(OnnxFuzzRegressionTest, EmptyFoldWithHugeDimsIsQuick) {
  const std::string bytes = ReadAll(RECQ_FUZZ_DIR "/regressions/concat_fold_empty_huge_outer.onnx");
  ASSERT_FALSE(bytes.empty());
  // The old loop ran for minutes: ctest's timeout catches it coming back.
  absl::StatusOr<Graph> graph = LoadOnnxFromBytes(bytes);
  ASSERT_FALSE(graph.ok());
  EXPECT_THAT(graph.status().message(), testing::HasSubstr("(Concat): has no output"))
      << graph.status();
}

}  // namespace
}  // namespace recq
