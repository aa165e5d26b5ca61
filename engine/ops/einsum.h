// Einsum (engine/ops/einsum.cc): the parsed equation as the graph op holds
// it, and the parser the import uses (tests read both).
#ifndef RECQ_ENGINE_OPS_EINSUM_H_
#define RECQ_ENGINE_OPS_EINSUM_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "recq/graph.h"

namespace recq::internal {

// Einsum of one or two operands of one floating-point type (float32,
// float16, float64): y[output labels] = the sum over every label not in the
// output of the product of the operands at those labels. Labels are small
// integers, one per dimension of each operand; a label repeated within an
// operand takes its diagonal. A dimension of size 1 broadcasts against the
// label's size elsewhere. Ranks and the count of summed labels are at most
// 8 each. One kernel computes it (einsum.cl, a work-item per output
// element); the import lowers float32 products to Transpose, Reshape and
// MatMul where the equation allows.
inline constexpr OpType kEinsum("Einsum");
struct EinsumAttrs {
  std::vector<std::vector<int64_t>> operands;  // the labels of each input's dims
  std::vector<int64_t> output;                 // the labels of y's dims
};

// ParseEinsum reads an ONNX / numpy equation ("bij,bjk->bik", "...ii->...i",
// "i,i") for operands of these ranks: letters become labels 0-51, the dims
// an ellipsis stands for labels 52 on (aligned at the right across
// operands). Without "->" the output is the ellipsis' dims, then the
// letters that occur once, in alphabetical order. InvalidArgument says what
// does not fit.
[[nodiscard]] absl::StatusOr<EinsumAttrs> ParseEinsum(absl::string_view equation,
                                                      const std::vector<size_t>& ranks);

}  // namespace recq::internal

#endif  // RECQ_ENGINE_OPS_EINSUM_H_
