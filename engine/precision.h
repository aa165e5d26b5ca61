// Precision passes: the graph rewrites behind EngineOptions::precision.
#ifndef RECQ_ENGINE_PRECISION_H_
#define RECQ_ENGINE_PRECISION_H_

#include "absl/status/statusor.h"
#include "engine/lowering.h"
#include "recq/context.h"
#include "recq/engine.h"
#include "recq/graph.h"

namespace recq::internal {

// ToHalfStorage retypes a graph for fp16 storage (EngineOptions::Precision::
// kFp16Storage): every float32 intermediate becomes float16; graph inputs and
// outputs keep their types, float32 ones going through a Cast at the edge
// (Preprocess and Cast nodes read a float32 input binding themselves);
// Cast-to-float32 and Preprocess nodes inside the graph produce float16
// instead, and a Cast left converting float16 to float16 becomes an
// Identity (a view: no dispatch). Float32 constants stay float32 in the
// graph (lowering uploads them as half, so weight relayouts read floats)
// except where a typed op (Gather, Where, Concat of views...) reads them:
// those read a float16 copy. Unimplemented naming the node when a float op
// would still produce float32 (all its inputs constants: optimize folds
// those).
[[nodiscard]] absl::StatusOr<Graph> ToHalfStorage(const Graph& graph);

// ApplyPrecision prepares an optimized graph and its lowering target for
// `precision`: kFp16Storage retypes the graph (ToHalfStorage) and sets
// half_storage; kTf32 sets tf32_products. Lowering a compiled engine and
// re-lowering an engine file both go through it.
[[nodiscard]] absl::Status ApplyPrecision(EngineOptions::Precision precision, Graph* graph,
                                          LoweringTarget* target);

// CheckPrecision returns FailedPrecondition for kFp16Compute on a device
// without cl_khr_fp16 (naming both), Unimplemented for kFp16Compute where
// the extension is present (recq has no half-arithmetic kernels), OK
// otherwise.
[[nodiscard]] absl::Status CheckPrecision(EngineOptions::Precision precision,
                                          const DeviceInfo& device);

}  // namespace recq::internal

#endif  // RECQ_ENGINE_PRECISION_H_
