// MaxUnpool's attributes, shared by its op file (max_unpool.cc) and its
// CPU reference (tests/reference/ops/max_unpool.cc).
#ifndef RECQ_ENGINE_OPS_MAX_UNPOOL_H_
#define RECQ_ENGINE_OPS_MAX_UNPOOL_H_

#include <cstdint>
#include <vector>

#include "recq/graph.h"

namespace recq::internal {

inline constexpr OpType kMaxUnpool("MaxUnpool");

// MaxUnpool: y of `out_shape` is zero except where x [N, C, ...] goes:
// x[i] lands at the flat index indices[i] of a tensor of `inferred_shape`
// (the shape MaxPool's input had, as ONNX infers it), that tensor sitting
// in the leading corner of y (ONNX's reference: out_shape may only add
// rows and columns at the end). Indices outside inferred_shape are
// dropped; an index given twice receives one of its values.
struct MaxUnpoolAttrs {
  std::vector<int64_t> inferred_shape;
  std::vector<int64_t> out_shape;
};

}  // namespace recq::internal

#endif  // RECQ_ENGINE_OPS_MAX_UNPOOL_H_
