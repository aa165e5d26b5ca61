// The importer's side of OnnxNodeContext: one onnx.NodeProto, and the state
// of the graph being built that op import functions add to.
#ifndef RECQ_ENGINE_ONNX_ONNX_NODE_H_
#define RECQ_ENGINE_ONNX_ONNX_NODE_H_

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
#include "engine/onnx/onnx_tensor.h"
#include "engine/ops/onnx_emitter.h"
#include "onnx/onnx_pb.h"
#include "recq/op_registry.h"

namespace recq::onnx_import {

// The initializers' host data shared by the imports of one parsed model
// (recq::OnnxModel): the first import to read an initializer stores it.
struct SharedInitializers {
  std::mutex mu;
  absl::flat_hash_map<std::string, std::shared_ptr<const HostData>> data;  // guarded by mu
};

// What the importer has built so far.
struct ImportState {
  std::vector<Value> values;
  std::vector<Node> nodes;
  std::vector<ValueId> inputs;
  absl::flat_hash_map<std::string, ValueId> ids;  // names with a recq value
  // Initializers and folded Constants; a node map: FindConstant adds to it
  // while an op holds pointers to entries it returned before.
  absl::node_hash_map<std::string, OnnxConstant> consts;
  // Float32 initializers whose elements are in raw_data: checked when they
  // are collected, decoded only when an op reads their values (FindConstant
  // moves them to `consts`). Input() copies their bytes straight into the
  // graph's constant: the weights are copied once, not three times.
  absl::flat_hash_map<std::string, const onnx::TensorProto*> raw_initializers;
  absl::flat_hash_set<std::string> used;  // names any node or output reads
  absl::flat_hash_set<std::string> graph_outputs;
  // The static shapes the model declares for graph outputs and value_info
  // entries (every dimension a value > 0).
  absl::flat_hash_map<std::string, std::vector<int64_t>> declared_shapes;
  std::string external_dir;  // where external tensor data is read from
  int64_t fold_budget = 0;   // elements folds may still compute
  // Initializers and Constant node outputs: values no input shape changes.
  absl::flat_hash_set<std::string> initializer_names;
  SharedInitializers* shared = nullptr;  // not owned; null: nothing shared

  ValueId AddValue(Value v);
  bool HasConstant(const std::string& name) const {
    return consts.contains(name) || raw_initializers.contains(name);
  }
  // FindConstant returns constant `name`, decoded; nullptr if there is none.
  absl::StatusOr<const OnnxConstant*> FindConstant(const std::string& name);
};

// InitializerError is `status` (an initializer's check or decode failing)
// with its message prefixed "initializer: ".
absl::Status InitializerError(const absl::Status& status);

// ToConstant converts a decoded tensor.
OnnxConstant ToConstant(HostTensorData data);

// StaticShapeOf returns the shape `info` declares for a tensor when every
// dimension is a value > 0, else nullopt.
std::optional<std::vector<int64_t>> StaticShapeOf(const onnx::ValueInfoProto& info);

class NodeContext final : public OnnxNodeContext, public internal::OnnxNodeEmitter {
 public:
  NodeContext(ImportState& state, const onnx::NodeProto& proto, std::string name, int64_t opset)
      : state_(state), proto_(proto), name_(std::move(name)), opset_(opset) {}

  const std::string& name() const override { return name_; }
  const std::string& op_type() const override { return proto_.op_type(); }
  int64_t opset() const override { return opset_; }
  int num_inputs() const override { return proto_.input_size(); }
  int num_outputs() const override { return proto_.output_size(); }
  const std::string& output_name(int i) const override {
    static const std::string kNone;
    return i >= 0 && i < proto_.output_size() ? proto_.output(i) : kNone;
  }

  absl::StatusOr<ValueId> Input(int i, bool optional) override;
  absl::StatusOr<const OnnxConstant*> ConstantInput(int i) override;
  const TensorDesc& desc(ValueId id) const override { return state_.values[id].desc; }
  const std::string& value_name(ValueId id) const override { return state_.values[id].name; }

  bool HasAttr(absl::string_view name) const override { return Attr(name) != nullptr; }
  absl::StatusOr<int64_t> Int(absl::string_view name, int64_t def) const override;
  absl::StatusOr<float> Float(absl::string_view name, float def) const override;
  absl::StatusOr<std::vector<int64_t>> Ints(absl::string_view name) const override;
  absl::StatusOr<std::vector<float>> Floats(absl::string_view name) const override;
  absl::StatusOr<std::string> String(absl::string_view name, const std::string& def) const override;
  absl::StatusOr<OnnxConstant> Tensor(absl::string_view name) const override;
  std::vector<std::string> AttrNames() const override;
  absl::Status CheckAttrs(std::initializer_list<const char*> known) const override;
  bool OutputUsed(int i) const override;

  absl::Status Emit(OpType op, std::vector<ValueId> inputs, OpAttrs attrs) override {
    return EmitOutput(0, op, std::move(inputs), std::move(attrs));
  }
  absl::Status EmitOutput(int output, OpType op, std::vector<ValueId> inputs,
                          OpAttrs attrs) override;
  absl::Status ReserveFolded(int64_t elements) override;
  absl::Status DefineConstant(OnnxConstant value) override;
  // internal::OnnxNodeEmitter
  absl::StatusOr<ValueId> EmitValue(OpType op, std::vector<ValueId> inputs, OpAttrs attrs,
                                    absl::string_view suffix) override;
  absl::StatusOr<ValueId> AddConstantValue(OnnxConstant value, absl::string_view suffix) override;
  absl::StatusOr<std::vector<std::string>> Strings(absl::string_view name) const override;
  std::optional<std::vector<int64_t>> DeclaredShape(int output) const override;

 private:
  const onnx::AttributeProto* Attr(absl::string_view name) const;
  // FirstOutputName returns the first non-empty output name (values the
  // node emits are named after it), or nullptr.
  const std::string* FirstOutputName() const;
  // AddNode infers `op`'s output, adds it as value `out_name` and the node
  // writing it; returns the value.
  absl::StatusOr<ValueId> AddNode(const std::string& out_name, OpType op,
                                  std::vector<ValueId> inputs, OpAttrs attrs);

  ImportState& state_;
  const onnx::NodeProto& proto_;
  std::string name_;
  int64_t opset_;
};

}  // namespace recq::onnx_import

#endif  // RECQ_ENGINE_ONNX_ONNX_NODE_H_
