// Runs a whole recq::Graph on the CPU with the reference ops, plus the
// random-input and comparison helpers that tests use with it.
//
//   absl::flat_hash_map<std::string, HostTensor> in;
//   in["input"] = RandomTensor({1, 3, 224, 224}, /*seed=*/7);
//   auto out = RunReference(graph, in);          // out->at("prob")
//   CompareResult r = Compare(device_values, out->at("prob").data, 1e-4f, 1e-4f);
//   EXPECT_TRUE(r.ok()) << r.ToString();
#ifndef RECQ_TESTS_REFERENCE_REFERENCE_EXECUTOR_H_
#define RECQ_TESTS_REFERENCE_REFERENCE_EXECUTOR_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "recq/graph.h"
#include "reference/reference_ops.h"

namespace recq::reference {

// RunReference evaluates every node of `graph` in order (the graph is
// topologically ordered), applying each node's `fused` activation to its
// output, and returns the graph outputs keyed by their value names.
// `inputs` must hold exactly the graph inputs, by name, with the graph's
// shapes and matching element counts; otherwise InvalidArgument names the
// input. Constants are read from Value::data. An op whose inputs do not fit
// is InvalidArgument naming the node; a reference output shape that differs
// from the graph's inferred shape is Internal (a shape-inference bug).
[[nodiscard]] absl::StatusOr<absl::flat_hash_map<std::string, HostTensor>> RunReference(
    const Graph& graph, const absl::flat_hash_map<std::string, HostTensor>& inputs);

// RunNode evaluates one node on already computed inputs (nullptr for an
// absent optional input), including its fused activation.
[[nodiscard]] absl::StatusOr<HostTensor> RunNode(const Node& node,
                                                 absl::Span<const HostTensor* const> inputs);

// RandomTensor returns a tensor of `shape` with values uniform in [lo, hi),
// a deterministic function of `seed` on every platform.
HostTensor RandomTensor(std::vector<int64_t> shape, uint64_t seed, float lo = -1.0f,
                        float hi = 1.0f);

// CompareResult summarizes an element-wise comparison. An element fails when
// either value is NaN, or when |actual - expected| > atol + rtol * |expected|
// (equal infinities pass).
struct CompareResult {
  size_t actual_size = 0;
  size_t expected_size = 0;
  size_t failures = 0;         // failing elements (sizes must match too)
  int64_t first_failure = -1;  // index of the first failing element, or -1
  float first_actual = 0.0f;
  float first_expected = 0.0f;
  double max_abs_err = 0.0;  // over all compared elements; +inf if one is NaN
  double max_rel_err = 0.0;  // |actual - expected| / |expected| where expected != 0
  float atol = 0.0f;
  float rtol = 0.0f;

  bool ok() const { return failures == 0 && actual_size == expected_size; }
  // ToString renders a one-paragraph summary for a test failure message.
  std::string ToString() const;
};

// Compare compares `actual` against `expected` element by element.
CompareResult Compare(absl::Span<const float> actual, absl::Span<const float> expected, float atol,
                      float rtol);

// IndexString renders flat index `index` of a row-major `shape` as
// "[n,c,h,w]".
std::string IndexString(absl::Span<const int64_t> shape, int64_t index);

}  // namespace recq::reference

#endif  // RECQ_TESTS_REFERENCE_REFERENCE_EXECUTOR_H_
