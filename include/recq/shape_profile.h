// Shape profiles: the range of shapes one engine serves (recq/shaped_engine.h).
//
// A profile gives, per graph input, each dimension as a fixed size or a
// range min..max with the sizes that get their own compiled lowering (the
// buckets): powers of two, multiples of N, an explicit list, or every size
// in the range (each compiled on first use). As text (recq run, bench and
// build --shapes):
//
//   input_ids:1x128                fixed (as before)
//   input_ids:1x1..512             every length 1..512, each its own bucket
//   input_ids:1x1..512/pow2        buckets 1, 2, 4, ..., 256, 512
//   input_ids:1x1..500/pow2        buckets 1, 2, ..., 256, 500 (the last is max)
//   input_ids:1x1..512/mul64       buckets 64, 128, ..., 512
//   input_ids:1x{16,64,512}        buckets 16, 64, 512 (range 1..512)
//   input_ids:1x1..512/pow2,attention_mask:1x1..512/pow2
//
// Inputs are separated by commas outside braces.
#ifndef RECQ_SHAPE_PROFILE_H_
#define RECQ_SHAPE_PROFILE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace recq {

// One dimension of an input's profile.
struct DimProfile {
  // How sizes inside [min, max] map to buckets.
  enum class Rule {
    kExact,     // every size is its own bucket
    kPow2,      // powers of two in [min, max), then max
    kMultiple,  // multiples of `multiple` in [min, max), then max
    kList,      // `buckets`, sorted, the last one max
  };
  int64_t min = 1;
  int64_t max = 1;
  Rule rule = Rule::kExact;
  int64_t multiple = 0;          // kMultiple
  std::vector<int64_t> buckets;  // kList

  static DimProfile Fixed(int64_t size) { return {size, size, Rule::kExact, 0, {}}; }
  bool fixed() const { return min == max; }
  // Buckets lists the bucket sizes in increasing order; empty for kExact
  // over a range (every size is one).
  std::vector<int64_t> Buckets() const;
  // BucketFor is the smallest bucket holding `size` (kExact: `size`), or
  // -1 when `size` is outside [min, max].
  int64_t BucketFor(int64_t size) const;
  // ToString renders the dimension as the text syntax reads it.
  std::string ToString() const;
};

// The profile of one input: one DimProfile per dimension.
using InputProfile = std::vector<DimProfile>;
using ShapeProfiles = std::map<std::string, InputProfile>;

// InputProfileToString renders "1x1..512/pow2".
std::string InputProfileToString(const InputProfile& profile);

// IsFixed is true when every dimension of every input is fixed.
bool IsFixed(const ShapeProfiles& profiles);

// ParseShapeProfiles reads the text syntax above. A malformed string is
// InvalidArgument naming the input, the bad part and the expected syntax.
[[nodiscard]] absl::StatusOr<ShapeProfiles> ParseShapeProfiles(absl::string_view text);

// ParsePadValues reads "input_ids:0,attention_mask:0" (per input, the
// value written at padded positions); InvalidArgument naming the bad part.
[[nodiscard]] absl::StatusOr<std::map<std::string, double>> ParsePadValues(absl::string_view text);

}  // namespace recq

#endif  // RECQ_SHAPE_PROFILE_H_
