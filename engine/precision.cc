#include "engine/precision.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "engine/ops/preprocess.h"
#include "engine/ops/typed.h"
#include "recq/device_facts.h"
#include "recq/op_registry.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

// Names a new value after `base`, unique in `values`.
std::string FreshName(const std::vector<Value>& values, const std::string& base) {
  std::string name = base;
  for (int i = 1;
       std::any_of(values.begin(), values.end(), [&](const Value& v) { return v.name == name; });
       ++i) {
    name = absl::StrCat(base, "_", i);
  }
  return name;
}

ValueId AddValue(std::vector<Value>& values, const std::string& base, TensorDesc desc,
                 Value::Kind kind, std::shared_ptr<const HostData> data = nullptr) {
  Value v;
  v.name = FreshName(values, base);
  v.desc = std::move(desc);
  v.kind = kind;
  v.data = std::move(data);
  values.push_back(std::move(v));
  return static_cast<ValueId>(values.size() - 1);
}

Node CastNode(const std::string& name, ValueId from, ValueId to, DataType dtype) {
  Node n;
  n.op = kCast;
  n.name = name;
  n.inputs = {from};
  n.outputs = {to};
  n.attrs = CastAttrs{dtype};
  return n;
}

bool IsTyped(const Node& node) {
  const OpDef* def = FindOp(node.op);
  return def != nullptr && def->typed;
}

}  // namespace

absl::StatusOr<Graph> ToHalfStorage(const Graph& graph) {
  std::vector<Value> values = graph.values();
  std::vector<Node> nodes = graph.nodes();
  const std::vector<ValueId> inputs = graph.inputs();
  const std::vector<ValueId> outputs = graph.outputs();
  const size_t original_nodes = nodes.size();
  std::vector<Node> edge_casts;
  absl::flat_hash_set<ValueId> keep_f32;  // float32 graph outputs

  // Outputs: the producer writes a float16 twin; a Cast writes the output.
  for (ValueId out : outputs) {
    Value& v = values[out];
    if (v.kind != Value::Kind::kIntermediate || v.desc.dtype != DataType::kFloat32 ||
        keep_f32.contains(out)) {
      continue;
    }
    keep_f32.insert(out);
    TensorDesc half = v.desc;
    half.dtype = DataType::kFloat16;
    const std::string name = v.name;
    const ValueId twin =
        AddValue(values, absl::StrCat(name, "/f16"), half, Value::Kind::kIntermediate);
    for (size_t n = 0; n < original_nodes; ++n) {
      for (ValueId& id : nodes[n].inputs) id = id == out ? twin : id;
      for (ValueId& id : nodes[n].outputs) id = id == out ? twin : id;
    }
    edge_casts.push_back(CastNode(absl::StrCat(name, "/to_f32"), twin, out, DataType::kFloat32));
  }

  // Inputs: consumers other than Preprocess read a float16 copy.
  for (ValueId in : inputs) {
    const Value v = values[in];
    if (v.desc.dtype != DataType::kFloat32) continue;
    ValueId twin = kNoValue;
    for (size_t n = 0; n < original_nodes; ++n) {
      // Preprocess and Cast read any element type: they read the binding.
      if (nodes[n].op == kPreprocess || nodes[n].op == kCast) continue;
      for (ValueId& id : nodes[n].inputs) {
        if (id != in) continue;
        if (twin == kNoValue) {
          TensorDesc half = v.desc;
          half.dtype = DataType::kFloat16;
          twin = AddValue(values, absl::StrCat(v.name, "/f16"), half, Value::Kind::kIntermediate);
          edge_casts.push_back(
              CastNode(absl::StrCat(v.name, "/to_f16"), in, twin, DataType::kFloat16));
        }
        id = twin;
      }
    }
  }

  // Intermediates become float16.
  for (size_t id = 0; id < values.size(); ++id) {
    Value& v = values[id];
    if (v.kind == Value::Kind::kIntermediate && v.desc.dtype == DataType::kFloat32 &&
        !keep_f32.contains(static_cast<ValueId>(id))) {
      v.desc.dtype = DataType::kFloat16;
    }
  }

  // Nodes that make float32 of their own accord make float16; typed ops
  // read float16 copies of float32 constants.
  std::vector<ValueId> half_copy(values.size(), kNoValue);
  for (size_t n = 0; n < original_nodes; ++n) {
    Node& node = nodes[n];
    if (node.op == kCast) {
      const CastAttrs* a = node.attrs.get_if<CastAttrs>();
      if (a != nullptr && a->to == DataType::kFloat32) node.attrs = CastAttrs{DataType::kFloat16};
    } else if (node.op == kPreprocess) {
      const PreprocessAttrs* a = node.attrs.get_if<PreprocessAttrs>();
      if (a != nullptr && a->model.dtype == DataType::kFloat32) {
        PreprocessAttrs half = *a;
        half.model.dtype = DataType::kFloat16;
        node.attrs = std::move(half);
      }
    }
    const bool typed = IsTyped(node);
    bool any_half_input = false;
    for (ValueId& id : node.inputs) {
      if (id == kNoValue) continue;
      const Value& v = values[id];
      if (v.kind != Value::Kind::kConstant || v.desc.dtype != DataType::kFloat32) {
        any_half_input |= v.desc.dtype == DataType::kFloat16;
        continue;
      }
      if (!typed) continue;
      if (half_copy[id] == kNoValue) {
        const std::vector<float>& f = *v.data->float_vector();
        std::vector<uint16_t> h(f.size());
        for (size_t i = 0; i < f.size(); ++i) h[i] = FloatToHalf(f[i]);
        TensorDesc desc = v.desc;
        desc.dtype = DataType::kFloat16;
        const std::string base = absl::StrCat(v.name, "/f16");
        half_copy[id] =
            AddValue(values, base, std::move(desc), Value::Kind::kConstant,
                     std::make_shared<const HostData>(DataType::kFloat16, std::move(h)));
        half_copy.resize(values.size(), kNoValue);
      }
      id = half_copy[id];
      any_half_input = true;
    }
    if (!typed && !any_half_input && values[node.outputs[0]].desc.dtype == DataType::kFloat16) {
      return absl::UnimplementedError(
          absl::StrCat("node '", node.name, "' (", node.op.name(),
                       ") reads only float32 constants; fp16 storage needs them folded first ",
                       "(EngineOptions::optimize)"));
    }
  }

  // A Cast from float16 to float16 (an output conversion the application
  // asked for, now a no-op) becomes a view.
  for (size_t n = 0; n < original_nodes; ++n) {
    Node& node = nodes[n];
    if (node.op != kCast || values[node.inputs[0]].desc.dtype != DataType::kFloat16) continue;
    const CastAttrs* a = node.attrs.get_if<CastAttrs>();
    if (a != nullptr && a->to == DataType::kFloat16) {
      node.op = OpType::kIdentity;
      node.attrs = OpAttrs();
    }
  }

  for (Node& cast : edge_casts) nodes.push_back(std::move(cast));
  return Graph::Create(std::move(values), std::move(nodes), inputs, outputs);
}

absl::Status ApplyPrecision(EngineOptions::Precision precision, Graph* graph,
                            LoweringTarget* target) {
  if (precision == EngineOptions::Precision::kFp16Storage) {
    RECQ_ASSIGN_OR_RETURN(*graph, ToHalfStorage(*graph));
    target->half_storage = true;
  }
  target->tf32_products = precision == EngineOptions::Precision::kTf32;
  return absl::OkStatus();
}

absl::Status CheckPrecision(EngineOptions::Precision precision, const DeviceInfo& device) {
  if (precision != EngineOptions::Precision::kFp16Compute) return absl::OkStatus();
  if (!DeviceFactsFromInfo(device).fp16) {
    return absl::FailedPreconditionError(
        absl::StrCat("precision fp16-compute needs cl_khr_fp16, which device '", device.name,
                     "' does not list; use fp16 storage (EngineOptions::Precision::kFp16Storage, ",
                     "--precision=fp16): half storage with float arithmetic, core OpenCL"));
  }
  return absl::UnimplementedError(absl::StrCat(
      "precision fp16-compute: device '", device.name,
      "' lists cl_khr_fp16, but recq has no half-arithmetic kernels yet; use fp16 storage"));
}

}  // namespace recq::internal
