// FuseElementwise: the element-wise fusion pass.
//
// Ops declare themselves element-wise through OpDef::elementwise (an OpenCL
// C expression of one output element); the pass reads only that trait, so
// a new element-wise op joins fusion by declaring it. It finds maximal trees
// of such nodes whose intermediates have the output's shape, one consumer
// and are not graph outputs, and replaces each tree of two nodes or more by
// one FusedElementwise node (engine/ops/fused_elementwise.h), one dispatch.
#ifndef RECQ_ENGINE_FUSION_ELEMENTWISE_FUSION_H_
#define RECQ_ENGINE_FUSION_ELEMENTWISE_FUSION_H_

#include "absl/status/statusor.h"
#include "recq/graph.h"

namespace recq::internal {

// FuseElementwise merges element-wise nodes as above. A node is left out
// when it:
//   * has an input or output that is not float32, or an absent input;
//   * is an Add that lowering may hand to the op before it (a producer
//     with a variant that absorbs_residual_add, read by the Add only),
//     which then adds it in its own epilogue;
//   * would bring the tree to more than kFusedElementwiseMaxInputs
//     distinct inputs.
// The fused node takes the tree's root's name and output; its inputs are
// the tree's distinct leaves in first-use order.
//
// With `read_transposes`, a leaf made by a Transpose that only the tree
// reads is read through the Transpose's permutation instead
// (FusedElementwiseAttrs::input_perms), the copy removed, and a single
// node reading such a leaf fuses too. For GPU kernels: on PoCL the strided
// read, an index computation per element, was slower than the copy
// (ConvNeXt-T 95 -> 109 ms on the project's 2-core Xeon, 2026-11-26).
[[nodiscard]] absl::StatusOr<Graph> FuseElementwise(const Graph& graph,
                                                    bool read_transposes = false);

}  // namespace recq::internal

#endif  // RECQ_ENGINE_FUSION_ELEMENTWISE_FUSION_H_
