// Sample (engine/ops/sampling.h): the definition followed literally, with a
// full sort where the kernel uses radix selection and a serial walk where
// it uses prefix sums. The weights (SampleWeight) are part of the op's
// definition and shared; Philox4x32-10 is written out here (its
// known-answer vectors are checked in tests/ops/sampling_test.cc).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include "engine/ops/sampling.h"
#include "reference/reference_registry.h"
#include "reference/reference_util.h"
#include "reference/sampling_reference.h"

namespace recq::reference {

std::array<uint32_t, 4> SampleReferencePhilox(std::array<uint32_t, 4> counter,
                                              std::array<uint32_t, 2> key) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] += 0x9E3779B9u;
      key[1] += 0xBB67AE85u;
    }
    const uint64_t p0 = uint64_t{0xD2511F53u} * counter[0];
    const uint64_t p1 = uint64_t{0xCD9E8D57u} * counter[2];
    counter = {static_cast<uint32_t>(p1 >> 32) ^ counter[1] ^ key[0], static_cast<uint32_t>(p1),
               static_cast<uint32_t>(p0 >> 32) ^ counter[3] ^ key[1], static_cast<uint32_t>(p0)};
  }
  return counter;
}

uint32_t SampleReferenceKey(float x) {
  if (std::isnan(x)) return 0;
  if (x == 0.0f) return 0x80000000u;
  uint32_t b;
  std::memcpy(&b, &x, sizeof(b));
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

int64_t SampleReferenceRow(const float* row, int64_t vocab, int64_t batch_row, int64_t step,
                           const internal::SampleAttrs& a) {
  std::vector<int64_t> order(vocab);
  std::iota(order.begin(), order.end(), 0);
  std::vector<uint32_t> key(vocab);
  for (int64_t i = 0; i < vocab; ++i) key[i] = SampleReferenceKey(row[i]);
  // Highest key first, lower index first among equal keys.
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t i, int64_t j) { return key[i] > key[j]; });
  const int64_t greedy = order[0];
  if (a.mode == internal::SampleMode::kGreedy) return greedy;

  const float x_max = row[greedy];
  const float scale = internal::SampleScale(a.temperature);
  std::vector<uint64_t> w(vocab);
  uint64_t all = 0;
  for (int64_t i = 0; i < vocab; ++i) {
    w[i] = static_cast<uint64_t>(internal::SampleWeight(row[i], x_max, scale));
    all += w[i];
  }
  std::vector<bool> candidate(vocab, false);
  if (a.mode == internal::SampleMode::kTopK) {
    const int64_t k = std::min(a.k, vocab);
    for (int64_t r = 0; r < k; ++r) candidate[order[r]] = true;
  } else {
    if (all == 0) return greedy;
    const double p16 = std::min(65536.0, std::max(0.0, std::nearbyint(double(a.p) * 65536.0)));
    uint64_t need = (all * static_cast<uint64_t>(p16) + 65535) >> 16;
    need = std::max<uint64_t>(need, 1);
    uint64_t cum = 0;
    for (int64_t r = 0; r < vocab && cum < need; ++r) {
      candidate[order[r]] = true;
      cum += w[order[r]];
    }
  }
  uint64_t total = 0;
  for (int64_t i = 0; i < vocab; ++i) total += candidate[i] ? w[i] : 0;
  if (total == 0) return greedy;
  const uint64_t s = static_cast<uint64_t>(step);
  const std::array<uint32_t, 4> out =
      SampleReferencePhilox({static_cast<uint32_t>(s), static_cast<uint32_t>(s >> 32),
                             static_cast<uint32_t>(batch_row), 0},
                            {static_cast<uint32_t>(static_cast<uint64_t>(a.seed)),
                             static_cast<uint32_t>(static_cast<uint64_t>(a.seed) >> 32)});
  const uint64_t r = ((uint64_t{out[0]} << 32) | out[1]) % total;
  uint64_t acc = 0;
  for (int64_t i = 0; i < vocab; ++i) {
    if (!candidate[i]) continue;
    acc += w[i];
    if (acc > r) return i;
  }
  return greedy;  // not reached: acc ends at total > r
}

RECQ_REGISTER_REFERENCE(Sampling) {
  return table.Add(
      internal::kSample, [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
        if (absl::Status s = CheckArity(node, in, 2, 2); !s.ok()) return s;
        absl::StatusOr<internal::SampleAttrs> a = AttrsOf<internal::SampleAttrs>(node);
        if (!a.ok()) return a.status();
        const HostTensor& x = *in[0];
        if (x.shape.size() != 2 && x.shape.size() != 3) {
          return absl::InvalidArgumentError("Sample: logits must be [B, V] or [B, S, V]");
        }
        if (in[1]->data.size() != 1) {
          return absl::InvalidArgumentError("Sample: step must have one element");
        }
        const int64_t batch = x.shape[0];
        const int64_t rows = x.shape.size() == 3 ? x.shape[1] : 1;
        const int64_t vocab = x.shape.back();
        const int64_t step = static_cast<int64_t>(in[1]->data[0]);
        HostTensor y{{batch, 1}, std::vector<float>(batch), DataType::kInt64};
        for (int64_t b = 0; b < batch; ++b) {
          const float* row = x.data.data() + (b * rows + rows - 1) * vocab;
          y.data[b] = static_cast<float>(SampleReferenceRow(row, vocab, b, step, *a));
        }
        return y;
      });
}

}  // namespace recq::reference
