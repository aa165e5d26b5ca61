// The CPU references by op: each op's reference lives in its own file under
// tests/reference/ops/ and registers an evaluator under the op's OpType, the
// same key the engine's op registry uses; the reference executor looks ops up
// here and never switches on op types.
//
//   RECQ_REGISTER_REFERENCE(Softmax) {
//     return table.Add(OpType::kSoftmax, [](const Node& node, ReferenceInputs in)
//                                            -> absl::StatusOr<HostTensor> { ... });
//   }
//
// The build scans tests/reference/ops/*.cc for RECQ_REGISTER_REFERENCE(...)
// (cmake/RegistryTable.cmake). Tests of custom ops register theirs with
// RegisterReferenceOp.
#ifndef RECQ_TESTS_REFERENCE_REFERENCE_REGISTRY_H_
#define RECQ_TESTS_REFERENCE_REFERENCE_REGISTRY_H_

#include <functional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "recq/graph.h"
#include "reference/reference_ops.h"

namespace recq::reference {

using ReferenceInputs = absl::Span<const HostTensor* const>;
// Evaluates one node on its inputs (nullptr for an absent optional input),
// without its fused activation.
using ReferenceFn =
    std::function<absl::StatusOr<HostTensor>(const Node& node, ReferenceInputs inputs)>;

class ReferenceTable {
 public:
  virtual ~ReferenceTable() = default;
  [[nodiscard]] virtual absl::Status Add(OpType op, ReferenceFn fn) = 0;
};

// RegisterReferenceOp adds `fn` for `op`; AlreadyExists if one is there.
[[nodiscard]] absl::Status RegisterReferenceOp(OpType op, ReferenceFn fn);
// FindReferenceOp returns the evaluator of `op`, or nullptr.
const ReferenceFn* FindReferenceOp(OpType op);

// RegisterBuiltinReferences calls every RECQ_REGISTER_REFERENCE (generated).
[[nodiscard]] absl::Status RegisterBuiltinReferences(ReferenceTable& table);

// Helpers for evaluators.

// CheckArity checks required <= inputs <= max and the required are present.
absl::Status CheckArity(const Node& node, ReferenceInputs inputs, size_t required, size_t max);
// Optional returns input i, or nullptr.
inline const HostTensor* Optional(ReferenceInputs inputs, size_t i) {
  return i < inputs.size() ? inputs[i] : nullptr;
}
// AttrsOf returns the node's T (a default one if it carries none), or
// InvalidArgument if it carries another kind.
template <typename T>
absl::StatusOr<T> AttrsOf(const Node& node) {
  if (const T* attrs = node.attrs.get_if<T>()) return *attrs;
  if (node.attrs.empty()) return T{};
  return absl::InvalidArgumentError("node '" + node.name + "' (" + OpTypeName(node.op) +
                                    ") carries attributes of the wrong kind");
}

}  // namespace recq::reference

#define RECQ_REGISTER_REFERENCE(family) \
  absl::Status RecqRegisterReference_##family(::recq::reference::ReferenceTable& table)

#endif  // RECQ_TESTS_REFERENCE_REFERENCE_REGISTRY_H_
