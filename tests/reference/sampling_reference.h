// The Sample reference's parts (tests/reference/ops/sampling.cc), for tests
// that check them on their own or call them with int64 steps that a
// HostTensor's floats cannot hold.
#ifndef RECQ_TESTS_REFERENCE_SAMPLING_REFERENCE_H_
#define RECQ_TESTS_REFERENCE_SAMPLING_REFERENCE_H_

#include <array>
#include <cstdint>

#include "engine/ops/sampling.h"

namespace recq::reference {

// SampleReferencePhilox returns Philox4x32-10 of `counter` under `key`.
std::array<uint32_t, 4> SampleReferencePhilox(std::array<uint32_t, 4> counter,
                                              std::array<uint32_t, 2> key);

// SampleReferenceKey is the order-preserving key of a logit (sampling.h).
uint32_t SampleReferenceKey(float x);

// SampleReferenceRow returns the id Sample picks from the `vocab` logits at
// `row` for batch row `batch_row` at `step`.
int64_t SampleReferenceRow(const float* row, int64_t vocab, int64_t batch_row, int64_t step,
                           const internal::SampleAttrs& attrs);

}  // namespace recq::reference

#endif  // RECQ_TESTS_REFERENCE_SAMPLING_REFERENCE_H_
