// FusedElementwise: a chain or tree of element-wise ops that
// FuseElementwise (engine/fusion/elementwise_fusion.h) merged into one node,
// run as one generated kernel (fused_elementwise.cl).
//
// Each input, transposed where input_perms says, is broadcast (numpy) to
// the output's shape. The body is a
// sequence of RECQ_LET(tK,expr) statements over the inputs a0 .. a(n-1) and
// earlier variables, the output the variable `result`; both are OpenCL C
// without white space (elementwise_expr.h), passed to the kernel as build
// options, so that the same chain gives the same program (one program-cache
// entry) and an engine file stores it as any library kernel with options.
#ifndef RECQ_ENGINE_OPS_FUSED_ELEMENTWISE_H_
#define RECQ_ENGINE_OPS_FUSED_ELEMENTWISE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "recq/graph.h"

namespace recq::internal {

inline const OpType kFusedElementwise("FusedElementwise");

// The most inputs a fused kernel takes.
inline constexpr size_t kFusedElementwiseMaxInputs = 8;

struct FusedElementwiseAttrs {
  std::string body;    // RECQ_LET(t0,...)RECQ_LET(t1,...)...
  std::string result;  // the variable holding the output element
  std::vector<int64_t> out_shape;
  // The fused ops' types in graph order ("Add,Erf,Mul"), for profiles,
  // keys and tests.
  std::string ops;
  // The fused nodes in graph order, as they were (op, attributes, fused
  // activation), renumbered: input ids 0 .. n-1 are the fused node's
  // inputs, id n + j the output of step j; the last step's is the output.
  // What the CPU reference replays, independently of `body`.
  std::vector<Node> steps;
  // Per input, a Transpose the kernel reads it through (the permutation,
  // output dimension i reading the input's perm[i]); empty: read as it is.
  // FuseElementwise takes a Transpose whose only reader is the fused node
  // so, instead of a copy (ConvNeXt's channels-last blocks back to NCHW).
  // Absent entries past the end are empty.
  std::vector<std::vector<int64_t>> input_perms;
};

// PermOfInput returns input k's permutation (empty where none).
inline const std::vector<int64_t>& PermOfInput(const FusedElementwiseAttrs& a, size_t k) {
  static const std::vector<int64_t> kNone;
  return k < a.input_perms.size() ? a.input_perms[k] : kNone;
}

}  // namespace recq::internal

#endif  // RECQ_ENGINE_OPS_FUSED_ELEMENTWISE_H_
