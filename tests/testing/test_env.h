// Shared helpers for recq's engine tests.
#ifndef RECQ_TESTS_TESTING_TEST_ENV_H_
#define RECQ_TESTS_TESTING_TEST_ENV_H_

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recq/recq.h"
#include "reference/reference_executor.h"

namespace recq::testing {

// FreshRng returns a generator seeded from std::random_device, the seed
// recorded as the calling test's "seed" property (in its XML report), so
// that every run draws fresh inputs and a failure can be replayed.
std::mt19937 FreshRng();

// SharedContext returns one Context per test binary (the default device, or
// $RECQ_DEVICE). Fails the calling test if none can be created.
const Context& SharedContext();

// NewTensor allocates a tensor and fills it with `values` (NaN-poisoned when
// `values` is empty).
Tensor NewTensor(const TensorDesc& desc, const std::vector<float>& values = {});

// Download reads a tensor back, failing the test on error.
std::vector<float> Download(const Tensor& tensor);

// ReferenceOutputs runs `graph` on the CPU with one input.
std::vector<float> ReferenceOutput(const Graph& graph, const std::string& input_name,
                                   const reference::HostTensor& input,
                                   const std::string& output_name);

// RunRecorded records `engine`, binds `input` (uploaded into a new tensor)
// and a NaN-poisoned output under their names, runs once and returns the
// output. Fails the calling test (and returns {}) on any error.
std::vector<float> RunRecorded(const Engine& engine, const std::string& input_name,
                               const reference::HostTensor& input, const std::string& output_name);

// A chain of `length` elementwise ops on an [n] input: y = relu(x*1 + ...),
// alternating Add with a constant and Relu so that every step changes the
// values. Output "y", input "x".
Graph ChainGraph(int length, int64_t n);

#define RECQ_ASSERT_OK(expr)                         \
  do {                                               \
    const ::absl::Status recq_s_ = (expr);           \
    ASSERT_TRUE(recq_s_.ok()) << recq_s_.ToString(); \
  } while (false)

#define RECQ_ASSERT_OK_AND_ASSIGN(lhs, expr)                     \
  auto RECQ_CONCAT_T_(recq_or_, __LINE__) = (expr);              \
  ASSERT_TRUE(RECQ_CONCAT_T_(recq_or_, __LINE__).ok())           \
      << RECQ_CONCAT_T_(recq_or_, __LINE__).status().ToString(); \
  lhs = std::move(RECQ_CONCAT_T_(recq_or_, __LINE__)).value()
#define RECQ_CONCAT_T_(a, b) RECQ_CONCAT_T2_(a, b)
#define RECQ_CONCAT_T2_(a, b) a##b

}  // namespace recq::testing

#endif  // RECQ_TESTS_TESTING_TEST_ENV_H_
