// Graph passes run by Engine::Compile when EngineOptions::optimize is set.
#ifndef RECQ_ENGINE_PASSES_H_
#define RECQ_ENGINE_PASSES_H_

#include "absl/status/statusor.h"
#include "recq/context.h"
#include "recq/graph.h"

namespace recq::internal {

// RemoveIdentities rewires the consumers of Identity nodes to their inputs
// (an Identity whose output is a graph output stays).
[[nodiscard]] absl::StatusOr<Graph> RemoveIdentities(const Graph& graph);
// FoldBatchNorm folds a BatchNorm into the Conv2D or Gemm before it when that
// op's weights are constants and the BatchNorm is its only consumer.
[[nodiscard]] absl::StatusOr<Graph> FoldBatchNorm(const Graph& graph);
// FuseActivations moves an activation node into the op before it (Conv2D,
// Gemm, BatchNorm, Add/Sub/Mul/Div, pools) when it is that op's only
// consumer, also across a view (Reshape) that is the op's only consumer.
[[nodiscard]] absl::StatusOr<Graph> FuseActivations(const Graph& graph);
// FoldConstants evaluates every node whose inputs are all constants on the
// context's device (through an unoptimized engine of that one node) and
// replaces its output with a constant.
[[nodiscard]] absl::StatusOr<Graph> FoldConstants(const Graph& graph, const Context& context);
// LayerNormOnChannelsFirst folds into a LayerNormalization over the last
// axis a Transpose from [N, C, spatial...] to channels last that only it
// reads (NormalizationAttrs::channels_first_input), and a Transpose back to
// channels first that is its only reader (channels_first_output), for GPU
// kernels, which read and write the rows strided instead of copies
// (ConvNeXt's blocks and its channels-first LayerNorms).
[[nodiscard]] absl::StatusOr<Graph> LayerNormOnChannelsFirst(const Graph& graph);
// EliminateDeadNodes drops nodes no graph output depends on.
[[nodiscard]] absl::StatusOr<Graph> EliminateDeadNodes(const Graph& graph);

// Optimize runs RemoveIdentities, EliminateDeadNodes, FoldConstants, the
// pattern passes, FoldBatchNorm, FuseActivations and, with
// `fuse_elementwise`, FuseElementwise (engine/fusion/elementwise_fusion.h;
// reading Transposes in place with `read_transposes`, which also runs
// LayerNormOnChannelsFirst first), in that order.
[[nodiscard]] absl::StatusOr<Graph> Optimize(const Graph& graph, const Context& context,
                                             bool fuse_elementwise = true,
                                             bool read_transposes = false);

// FusionDisabledByEnvironment: $RECQ_FUSION is "off" (Compile then runs
// without FuseElementwise whatever EngineOptions::fuse_elementwise says).
bool FusionDisabledByEnvironment();

}  // namespace recq::internal

#endif  // RECQ_ENGINE_PASSES_H_
