// Sample (engine/ops/sampling.cc): the next token id of each row of logits,
// greedy or drawn at random, on the device.
//
//   inputs:  logits float32 or float16, [B, V] or [B, S, V] (the last of
//            the S rows is used); step int64 [1] (or a scalar), read by the
//            kernel when it runs
//   output:  ids int64 [B, 1]
//
// Every mode is defined with integers only past one float subtraction and
// one multiplication, so the ids are the same on every device and backend,
// and a CPU reference gives them exactly (docs/op_semantics.md, "Sample"):
//
//   key(x)    an order-preserving unsigned key of the logit: +0 and -0 are
//             one key, NaN ranks below every number; ties of keys are
//             ranked by lower index first.
//   greedy    the index of the largest key (the lowest such index).
//   weights   w_i ~ 2^30 * exp((x_i - x_max) / temperature) in fixed point,
//             exactly as SampleWeight below: 0 for NaN, for logits under
//             2^-30 times as likely as the largest, and for every logit
//             when x_max is +-inf or NaN.
//   top_k     candidates: the k highest-ranked logits (all when k >= V).
//   top_p     candidates: the fewest highest-ranked logits whose weights
//             sum to at least ceil(W * P16 / 2^16), W the sum of all
//             weights and P16 = round(p * 2^16); V <= 2^17.
//   draw      R = Philox4x32-10(counter = (step low, step high, row, 0),
//             key = (seed low, seed high)), R64 = out[0] << 32 | out[1];
//             r = R64 mod (sum of the candidates' weights); the id is the
//             first candidate in index order whose running sum of weights
//             exceeds r. When the candidates' weights sum to 0, greedy's id.
//
// The same recording therefore samples differently on every replay that
// advances `step`, and identically when it is replayed with the same step.
#ifndef RECQ_ENGINE_OPS_SAMPLING_H_
#define RECQ_ENGINE_OPS_SAMPLING_H_

#include <array>
#include <cmath>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "recq/graph.h"

namespace recq::internal {

struct Editable;

inline constexpr OpType kSample("Sample");

enum class SampleMode { kGreedy = 0, kTopK = 1, kTopP = 2 };

struct SampleAttrs {
  SampleMode mode = SampleMode::kGreedy;
  // Divides the logits before the weights (top_k, top_p): > 0 and finite.
  float temperature = 1.0f;
  int64_t k = 1;     // top_k: >= 1 (k >= V keeps every logit)
  float p = 1.0f;    // top_p: in (0, 1]
  int64_t seed = 0;  // the Philox key (both halves)
};

// The largest vocabulary top_p takes (its weight sums use 32-bit counters).
inline constexpr int64_t kSampleTopPMaxVocab = int64_t{1} << 17;

// SampleModeName returns "greedy", "top_k" or "top_p".
const char* SampleModeName(SampleMode mode);

// ParseSampling reads "greedy", "top_k=K" or "top_p=P", optionally followed
// by ",temperature=T" and ",seed=S" (in any order): the form of the command
// line's --sampling. InvalidArgument naming what is wrong otherwise.
[[nodiscard]] absl::StatusOr<SampleAttrs> ParseSampling(absl::string_view text);

// CheckSampleAttrs returns InvalidArgument when the attributes are outside
// their ranges (see SampleAttrs).
[[nodiscard]] absl::Status CheckSampleAttrs(const SampleAttrs& attrs);

// Sample appends a Sample node reading `logits` and `step` to `b`; returns
// its ids [B, 1]. Errors are kept by the builder as for any node.
TensorRef Sample(GraphBuilder& b, TensorRef logits, TensorRef step, const SampleAttrs& attrs,
                 std::string name = "");

// AddSample appends a Sample node to a graph being edited (a pass), with a
// new intermediate value "<name>.ids" of int64 [B, 1]; returns that value,
// or InvalidArgument when the inputs do not fit.
[[nodiscard]] absl::StatusOr<ValueId> AddSample(Editable& g, ValueId logits, ValueId step,
                                                const SampleAttrs& attrs, const std::string& name);

// --- the definition, shared by the kernel's host side and CPU references ---

// SampleExpTable returns round(2^30 * 2^(-j / 256)) for j in [0, 256).
inline const std::array<int64_t, 256>& SampleExpTable() {
  static const std::array<int64_t, 256> table = [] {
    std::array<int64_t, 256> t{};
    for (int j = 0; j < 256; ++j) {
      t[j] = static_cast<int64_t>(std::llround(std::ldexp(std::exp2(-j / 256.0), 30)));
    }
    return t;
  }();
  return table;
}

// SampleScale returns the float factor of the weights: log2(e) * 2^24 /
// temperature, rounded to float once.
inline float SampleScale(float temperature) {
  return static_cast<float>(1.4426950408889634 * 16777216.0 / static_cast<double>(temperature));
}

// SampleWeight returns the fixed-point weight of logit `x` when the
// largest is `x_max` (docs/op_semantics.md): u = (x_max - x) * scale in
// float, then with t = trunc(u) as an integer of 24 fraction bits (0 when
// u is not below 2^29, NaN included), n = t >> 24, j = (t >> 16) & 255,
// l = t & 65535, a = (l * 2977044472) >> 24 (ln 2 in 2^-32 units),
// m = 2^32 - a + (a * a >> 33), and w = (SampleExpTable()[j] * m) >> (32 + n).
inline int64_t SampleWeight(float x, float x_max, float scale) {
  const float u = (x_max - x) * scale;
  if (!(u < 536870912.0f)) return 0;
  const uint64_t t = static_cast<uint32_t>(u);
  const uint64_t n = t >> 24;
  const uint64_t j = (t >> 16) & 255;
  const uint64_t l = t & 65535;
  const uint64_t a = (l * 2977044472ull) >> 24;
  const uint64_t m = (uint64_t{1} << 32) - a + ((a * a) >> 33);
  return static_cast<int64_t>((static_cast<uint64_t>(SampleExpTable()[j]) * m) >> (32 + n));
}

}  // namespace recq::internal

#endif  // RECQ_ENGINE_OPS_SAMPLING_H_
