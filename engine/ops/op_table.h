// How built-in op files register themselves.
//
// Each file under engine/ops/ that defines ops ends with
//
//   RECQ_REGISTER_OPS(Conv2D) {
//     RECQ_RETURN_IF_ERROR(table.Add(MakeConv2D()));
//     return absl::OkStatus();
//   }
//
// The build scans engine/ops/*.cc for RECQ_REGISTER_OPS(...) and generates
// the one table that calls every such function before the registry is first
// used (cmake/RegistryTable.cmake): adding an op file is all it takes.
#ifndef RECQ_ENGINE_OPS_OP_TABLE_H_
#define RECQ_ENGINE_OPS_OP_TABLE_H_

#include "absl/status/status.h"
#include "recq/op_registry.h"

namespace recq::internal {

// OpTable is the registry as built-in registration functions see it.
class OpTable {
 public:
  virtual ~OpTable() = default;
  [[nodiscard]] virtual absl::Status Add(OpDef def) = 0;
  [[nodiscard]] virtual absl::Status AddOnnx(OnnxMapping mapping) = 0;
};

// RegisterBuiltinOps calls every RECQ_REGISTER_OPS function (generated).
[[nodiscard]] absl::Status RegisterBuiltinOps(OpTable& table);

}  // namespace recq::internal

#define RECQ_REGISTER_OPS(family) \
  absl::Status RecqRegisterOps_##family(::recq::internal::OpTable& table)

#endif  // RECQ_ENGINE_OPS_OP_TABLE_H_
