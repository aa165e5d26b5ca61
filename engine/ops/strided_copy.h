// The strided copy that Slice, Split, Tile, Expand, Transpose,
// DepthToSpace and SpaceToDepth lower to (strided_copy.cc / .cl).
#ifndef RECQ_ENGINE_OPS_STRIDED_COPY_H_
#define RECQ_ENGINE_OPS_STRIDED_COPY_H_

#include <cstdint>

#include "absl/status/status.h"
#include "engine/ops/op_util.h"

namespace recq::internal {

// EmitStridedCopy emits y[i] = x[base + sum_d (coord_d(i) % mods[d]) *
// strides[d]], x being node.inputs[0] and y node.outputs[0], over the output
// shape `dims` (mods[d] == dims[d]: no wrap-around). Unit dimensions are
// dropped and dimensions along which the source runs on contiguously are
// merged first, and the kernel is built for the rank that remains, so a
// contiguous range is a plain copy. Unimplemented beyond 8 merged dimensions
// or 2^31 elements.
[[nodiscard]] absl::Status EmitStridedCopy(LoweringContext& ctx, const Node& node, int64_t base,
                                           Shape dims, Shape strides, Shape mods);

}  // namespace recq::internal

#endif  // RECQ_ENGINE_OPS_STRIDED_COPY_H_
