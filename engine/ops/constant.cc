// ONNX Constant: defines a value at import from its one attribute (value,
// value_float(s) or value_int(s)); no recq op runs it.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

absl::Status Import(OnnxNodeContext& n) {
  if (n.num_outputs() != 1 || n.output_name(0).empty()) {
    return n.Invalid("must have exactly one output");
  }
  const std::vector<std::string> attrs = n.AttrNames();
  if (attrs.size() != 1) return n.Invalid("must have exactly one value attribute");
  const std::string& name = attrs[0];
  OnnxConstant data;
  if (name == "value") {
    RECQ_ASSIGN_OR_RETURN(data, n.Tensor("value"));
  } else if (name == "value_float") {
    RECQ_ASSIGN_OR_RETURN(float f, n.Float(name, 0.0f));
    data.floats = {f};
  } else if (name == "value_floats") {
    RECQ_ASSIGN_OR_RETURN(data.floats, n.Floats(name));
    data.dims = {static_cast<int64_t>(data.floats.size())};
  } else if (name == "value_int") {
    data.is_float = false;
    RECQ_ASSIGN_OR_RETURN(int64_t i, n.Int(name, 0));
    data.ints = {i};
  } else if (name == "value_ints") {
    data.is_float = false;
    RECQ_ASSIGN_OR_RETURN(data.ints, n.Ints(name));
    data.dims = {static_cast<int64_t>(data.ints.size())};
  } else {
    return n.Unsupported(absl::StrCat("attribute '", name, "' is not supported"));
  }
  return n.DefineConstant(std::move(data));
}

}  // namespace

RECQ_REGISTER_OPS(Constant) { return table.AddOnnx({"", "Constant", 1, kOnnxOpsetMax, Import}); }

}  // namespace recq::internal
