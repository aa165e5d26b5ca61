// Import-time evaluation of integer and shape subgraphs (Shape, Gather,
// Unsqueeze, Concat, ConstantOfShape, Range, Cast, Equal, Where, arithmetic
// on constants...): what onnxruntime and TensorRT fold before running a
// model. Values are OnnxConstants; bool results are int64 0/1.
#ifndef RECQ_ENGINE_OPS_CONSTANT_EVAL_H_
#define RECQ_ENGINE_OPS_CONSTANT_EVAL_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "recq/op_registry.h"

namespace recq::internal {

// AllConstant tells whether every present input of the node is a constant,
// and collects them (nullptr for absent ones).
bool AllConstantInputs(OnnxNodeContext& n, std::vector<const OnnxConstant*>* inputs);

// ElementAt reads element i as double / int64 whatever the constant holds
// (floats converted by SaturatingInt64).
double ElementAsDouble(const OnnxConstant& c, int64_t i);
int64_t ElementAsInt(const OnnxConstant& c, int64_t i);
// SaturatingInt64: v truncated toward zero, clamped to int64's range; NaN
// gives 0.
int64_t SaturatingInt64(double v);

// BroadcastConstants applies `f` element-wise with numpy broadcasting for
// node `n`; the result is int64 when `int_result`, else float32.
// InvalidArgument for shapes that do not broadcast (naming them); the
// result's elements are reserved through n.ReserveFolded first.
absl::StatusOr<OnnxConstant> BroadcastConstants(
    OnnxNodeContext& n, absl::Span<const OnnxConstant* const> in, bool int_result,
    const std::function<double(absl::Span<const double>)>& f);

// Numel returns the product of dims (1 for a scalar).
int64_t Numel(const std::vector<int64_t>& dims);

}  // namespace recq::internal

#endif  // RECQ_ENGINE_OPS_CONSTANT_EVAL_H_
