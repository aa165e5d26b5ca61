// OnnxNodeEmitter: what an op's import needs to lower one ONNX node to a
// few graph nodes (a 1-D Conv as a reshape, the 2-D Conv and a reshape
// back). recq's ONNX importer gives every import function a context that
// is also an OnnxNodeEmitter; EmitterOf finds it. It is internal: custom
// ops see OnnxNodeContext only (recq/op_registry.h).
#ifndef RECQ_ENGINE_OPS_ONNX_EMITTER_H_
#define RECQ_ENGINE_OPS_ONNX_EMITTER_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "recq/op_registry.h"

namespace recq::internal {

class OnnxNodeEmitter {
 public:
  virtual ~OnnxNodeEmitter() = default;
  // EmitValue adds a node of `op` writing a new value named after the
  // node's first named output and `suffix`, and returns the value.
  [[nodiscard]] virtual absl::StatusOr<ValueId> EmitValue(OpType op, std::vector<ValueId> inputs,
                                                          OpAttrs attrs,
                                                          absl::string_view suffix) = 0;
  // AddConstantValue adds `value` as a constant named the same way.
  [[nodiscard]] virtual absl::StatusOr<ValueId> AddConstantValue(OnnxConstant value,
                                                                 absl::string_view suffix) = 0;
  // Strings reads a list-of-strings attribute (empty when absent;
  // InvalidArgument naming the node when it has another type).
  [[nodiscard]] virtual absl::StatusOr<std::vector<std::string>> Strings(
      absl::string_view name) const = 0;
  // DeclaredShape returns the static shape the model declares for the
  // node's output `output` (as a graph output or in value_info), or
  // nullopt when it declares none or one with unknown dimensions.
  virtual std::optional<std::vector<int64_t>> DeclaredShape(int output) const = 0;
};

// EmitterOf returns the emitter of `n`, or nullptr when its importer has
// none.
inline OnnxNodeEmitter* EmitterOf(OnnxNodeContext& n) { return dynamic_cast<OnnxNodeEmitter*>(&n); }

}  // namespace recq::internal

#endif  // RECQ_ENGINE_OPS_ONNX_EMITTER_H_
