// libFuzzer target for recq::LoadOnnxFromBytes with a structured mutator.
//
// Byte flips mostly produce protobufs that do not parse, so the custom
// mutator parses the input as an onnx.ModelProto, applies one to three
// structural changes (node inputs and outputs renamed, duplicated, missing
// or forming cycles; attributes removed, added or set to zero, negative or
// huge values; dims zero, negative, huge or removed; element types; opset
// imports; initializer data shorter, longer or in the other field; inputs
// turned into initializers; nodes removed, duplicated, reordered or given
// another op type) and serializes it again. One mutation in eight is a
// plain byte-level one, so the parser itself is fuzzed too.
//
// The property checked: LoadOnnxFromBytes returns (OK or an error status)
// without crashing, leaking, or tripping ASan/UBSan, and an imported graph
// has only positive dims and constants of the right size. Build and run with
// scripts/fuzz.sh.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "recq/graph.h"
#include "recq/onnx.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

using Rng = std::mt19937_64;

template <typename T>
T Pick(Rng& rng, std::initializer_list<T> values) {
  return *(values.begin() + rng() % values.size());
}

int64_t InterestingInt(Rng& rng) {
  switch (rng() % 9) {
    case 0:
      return 0;
    case 1:
      return -1;
    case 2:
      return 1;
    case 3:
      return std::numeric_limits<int64_t>::max();
    case 4:
      return std::numeric_limits<int64_t>::min();
    case 5:
      return int64_t{1000000000000};  // 1e12 elements
    case 6:
      return int64_t{1} << 31;
    case 7:
      return static_cast<int64_t>(rng() % 7) - 3;
    default:
      return static_cast<int64_t>(rng() % 64);
  }
}

float InterestingFloat(Rng& rng) {
  switch (rng() % 6) {
    case 0:
      return 0.0f;
    case 1:
      return std::numeric_limits<float>::quiet_NaN();
    case 2:
      return std::numeric_limits<float>::infinity();
    case 3:
      return -1e30f;
    case 4:
      return std::numeric_limits<float>::denorm_min();
    default:
      return static_cast<float>(static_cast<int>(rng() % 200) - 100) / 10.0f;
  }
}

// Every tensor name the graph mentions, plus some that it does not.
std::vector<std::string> Names(const onnx::GraphProto& g, Rng& rng) {
  std::vector<std::string> names = {"", "missing_" + std::to_string(rng() % 4)};
  for (const auto& v : g.input()) names.push_back(v.name());
  for (const auto& v : g.output()) names.push_back(v.name());
  for (const auto& t : g.initializer()) names.push_back(t.name());
  for (const auto& n : g.node()) {
    for (const auto& s : n.input()) names.push_back(s);
    for (const auto& s : n.output()) names.push_back(s);
  }
  return names;
}

const std::string& PickName(const std::vector<std::string>& names, Rng& rng) {
  return names[rng() % names.size()];
}

void MutateDims(onnx::TensorShapeProto* shape, Rng& rng) {
  const int op = static_cast<int>(rng() % 4);
  if (op == 0 || shape->dim_size() == 0) {
    shape->add_dim()->set_dim_value(InterestingInt(rng));
  } else if (op == 1) {
    shape->mutable_dim()->RemoveLast();
  } else if (op == 2) {
    shape->mutable_dim(static_cast<int>(rng() % shape->dim_size()))->set_dim_param("N");
  } else {
    shape->mutable_dim(static_cast<int>(rng() % shape->dim_size()))
        ->set_dim_value(InterestingInt(rng));
  }
}

onnx::ValueInfoProto* PickValueInfo(onnx::GraphProto* g, Rng& rng) {
  const int total = g->input_size() + g->output_size();
  if (total == 0) return g->add_input();
  const int i = static_cast<int>(rng() % total);
  return i < g->input_size() ? g->mutable_input(i) : g->mutable_output(i - g->input_size());
}

void MutateAttribute(onnx::NodeProto* node, Rng& rng) {
  static const char* kNames[] = {"kernel_shape", "strides",   "pads",  "dilations", "group",
                                 "axis",         "perm",      "shape", "alpha",     "beta",
                                 "transA",       "transB",    "min",   "max",       "epsilon",
                                 "auto_pad",     "ceil_mode", "value", "axes",      "allowzero"};
  if (node->attribute_size() == 0 || rng() % 4 == 0) {
    auto* a = node->add_attribute();
    a->set_name(kNames[rng() % std::size(kNames)]);
    switch (rng() % 4) {
      case 0:
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(InterestingInt(rng));
        break;
      case 1:
        a->set_type(onnx::AttributeProto::INTS);
        for (int k = static_cast<int>(rng() % 6); k > 0; --k) a->add_ints(InterestingInt(rng));
        break;
      case 2:
        a->set_type(onnx::AttributeProto::FLOAT);
        a->set_f(InterestingFloat(rng));
        break;
      default:
        a->set_type(onnx::AttributeProto::STRING);
        a->set_s(Pick<const char*>(rng, {"SAME_UPPER", "VALID", "NOTSET", "bogus", ""}));
        break;
    }
    return;
  }
  auto* a = node->mutable_attribute(static_cast<int>(rng() % node->attribute_size()));
  switch (rng() % 7) {
    case 0:
      node->mutable_attribute()->DeleteSubrange(static_cast<int>(rng() % node->attribute_size()),
                                                1);
      break;
    case 1:
      a->set_i(InterestingInt(rng));
      break;
    case 2:
      if (a->ints_size() > 0) {
        a->set_ints(static_cast<int>(rng() % a->ints_size()), InterestingInt(rng));
      } else {
        a->add_ints(InterestingInt(rng));
      }
      break;
    case 3:
      if (a->ints_size() > 0 && rng() % 2) {
        a->mutable_ints()->RemoveLast();
      } else {
        a->add_ints(InterestingInt(rng));
      }
      break;
    case 4:
      a->set_f(InterestingFloat(rng));
      break;
    case 5:
      a->set_type(static_cast<onnx::AttributeProto::AttributeType>(rng() % 14));
      break;
    default:
      if (a->has_t()) {
        auto* t = a->mutable_t();
        if (t->dims_size() > 0) {
          t->set_dims(static_cast<int>(rng() % t->dims_size()), InterestingInt(rng));
        } else {
          t->add_dims(InterestingInt(rng));
        }
      } else {
        a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
        a->mutable_t()->add_dims(InterestingInt(rng));
        a->mutable_t()->add_float_data(1.0f);
      }
      break;
  }
}

void MutateInitializer(onnx::TensorProto* t, Rng& rng) {
  switch (rng() % 7) {
    case 0:
      if (t->dims_size() > 0) {
        t->set_dims(static_cast<int>(rng() % t->dims_size()), InterestingInt(rng));
      } else {
        t->add_dims(InterestingInt(rng));
      }
      break;
    case 1:  // data shorter than the dims say
      if (t->float_data_size() > 0) {
        t->mutable_float_data()->Truncate(static_cast<int>(rng() % t->float_data_size()));
      } else {
        t->set_raw_data(t->raw_data().substr(0, rng() % (t->raw_data().size() + 1)));
      }
      break;
    case 2:  // longer
      for (int k = static_cast<int>(rng() % 9); k > 0; --k)
        t->add_float_data(InterestingFloat(rng));
      break;
    case 3:  // both fields, or raw bytes that are not a whole number of floats
      t->set_raw_data(std::string(rng() % 13, '\x01'));
      break;
    case 4:
      t->set_data_type(static_cast<int32_t>(rng() % 18));
      break;
    case 5:
      t->set_data_location(onnx::TensorProto::EXTERNAL);
      break;
    default:
      t->clear_dims();
      break;
  }
}

void MutateGraph(onnx::ModelProto* model, Rng& rng) {
  onnx::GraphProto* g = model->mutable_graph();
  const std::vector<std::string> names = Names(*g, rng);
  const int nodes = g->node_size();
  switch (rng() % 14) {
    case 0:  // node input: another tensor, missing, empty, or a later output (cycle)
      if (nodes > 0) {
        auto* n = g->mutable_node(static_cast<int>(rng() % nodes));
        if (n->input_size() == 0 || rng() % 4 == 0) {
          n->add_input(PickName(names, rng));
        } else {
          n->set_input(static_cast<int>(rng() % n->input_size()), PickName(names, rng));
        }
      }
      break;
    case 1:  // node output: duplicate another name, or drop one
      if (nodes > 0) {
        auto* n = g->mutable_node(static_cast<int>(rng() % nodes));
        if (n->output_size() > 0 && rng() % 3 == 0) {
          n->mutable_output()->RemoveLast();
        } else if (n->output_size() > 0) {
          n->set_output(static_cast<int>(rng() % n->output_size()), PickName(names, rng));
        } else {
          n->add_output(PickName(names, rng));
        }
      }
      break;
    case 2:
      if (nodes > 0) MutateAttribute(g->mutable_node(static_cast<int>(rng() % nodes)), rng);
      break;
    case 3:  // dims of a graph input or output
      MutateDims(PickValueInfo(g, rng)->mutable_type()->mutable_tensor_type()->mutable_shape(),
                 rng);
      break;
    case 4:  // element type
      PickValueInfo(g, rng)->mutable_type()->mutable_tensor_type()->set_elem_type(
          static_cast<int32_t>(rng() % 18));
      break;
    case 5:  // opset imports
      if (model->opset_import_size() == 0 || rng() % 3 == 0) {
        auto* o = model->add_opset_import();
        o->set_domain(Pick<const char*>(rng, {"", "ai.onnx", "com.microsoft"}));
        o->set_version(InterestingInt(rng));
      } else if (rng() % 2) {
        model->mutable_opset_import(static_cast<int>(rng() % model->opset_import_size()))
            ->set_version(Pick<int64_t>(rng, {0, 1, 6, 7, 11, 13, 17, 18, 1000, -3}));
      } else {
        model->mutable_opset_import()->RemoveLast();
      }
      break;
    case 6:
      if (g->initializer_size() > 0) {
        MutateInitializer(g->mutable_initializer(static_cast<int>(rng() % g->initializer_size())),
                          rng);
      }
      break;
    case 7:  // a graph input becomes an initializer with (maybe wrong-sized) data
      if (g->input_size() > 0) {
        const auto& in = g->input(static_cast<int>(rng() % g->input_size()));
        auto* t = g->add_initializer();
        t->set_name(in.name());
        t->set_data_type(onnx::TensorProto::FLOAT);
        int64_t count = 1;
        for (const auto& d : in.type().tensor_type().shape().dim()) {
          t->add_dims(d.dim_value());
          if (d.dim_value() > 0) count *= std::min<int64_t>(d.dim_value(), 4096);
          count = std::min<int64_t>(count, 4096);
        }
        if (rng() % 3 == 0) count += static_cast<int64_t>(rng() % 3) - 1;
        for (int64_t k = 0; k < std::min<int64_t>(count, 4096); ++k) {
          t->add_float_data(static_cast<float>(k % 5) - 2.0f);
        }
      }
      break;
    case 8:  // remove a node
      if (nodes > 0) g->mutable_node()->DeleteSubrange(static_cast<int>(rng() % nodes), 1);
      break;
    case 9:  // duplicate a node (duplicate output names)
      if (nodes > 0) *g->add_node() = g->node(static_cast<int>(rng() % nodes));
      break;
    case 10:  // reorder: breaks topological order
      if (nodes > 1) {
        g->mutable_node()->SwapElements(static_cast<int>(rng() % nodes),
                                        static_cast<int>(rng() % nodes));
      }
      break;
    case 11:  // another op type
      if (nodes > 0) {
        g->mutable_node(static_cast<int>(rng() % nodes))
            ->set_op_type(Pick<const char*>(rng, {"Conv",
                                                  "Relu",
                                                  "Gemm",
                                                  "MaxPool",
                                                  "AveragePool",
                                                  "GlobalAveragePool",
                                                  "Add",
                                                  "Mul",
                                                  "Sub",
                                                  "Div",
                                                  "BatchNormalization",
                                                  "Concat",
                                                  "Reshape",
                                                  "Transpose",
                                                  "Softmax",
                                                  "Flatten",
                                                  "Clip",
                                                  "MatMul",
                                                  "Constant",
                                                  "Identity",
                                                  "Dropout",
                                                  "HardSwish",
                                                  "LeakyRelu",
                                                  "Unknown",
                                                  ""}));
      }
      break;
    case 12:  // graph outputs: missing, duplicated or removed
      if (g->output_size() > 0 && rng() % 2) {
        g->mutable_output()->RemoveLast();
      } else {
        auto* o = g->add_output();
        o->set_name(PickName(names, rng));
        o->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
      }
      break;
    default:  // graph inputs: duplicated name or removed
      if (g->input_size() > 0 && rng() % 2) {
        *g->add_input() = g->input(static_cast<int>(rng() % g->input_size()));
      } else if (g->input_size() > 0) {
        g->mutable_input()->DeleteSubrange(static_cast<int>(rng() % g->input_size()), 1);
      }
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Import-time folding is bounded by a budget; the default (2^28
  // elements) is for real models and takes minutes under ASan, so the
  // fuzzer checks the budget's enforcement with a small one.
  recq::OnnxOptions options;
  options.max_folded_elements = int64_t{1} << 20;
  absl::StatusOr<recq::Graph> graph = recq::LoadOnnxFromBytes(
      absl::string_view(reinterpret_cast<const char*>(data), size), options);
  if (graph.ok()) {
    // An imported graph passed validation: every dim positive, and every
    // constant holds exactly as many floats as its shape says.
    for (const recq::Value& v : graph->values()) {
      for (int64_t d : v.desc.shape) {
        if (d <= 0) __builtin_trap();
      }
      if (v.kind == recq::Value::Kind::kConstant &&
          (v.data == nullptr || static_cast<int64_t>(v.data->size()) != v.desc.NumElements())) {
        __builtin_trap();
      }
    }
  }
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  Rng rng(seed);
  onnx::ModelProto model;
  if (rng() % 8 == 0 || !model.ParseFromArray(data, static_cast<int>(size))) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
  for (int k = 1 + static_cast<int>(rng() % 3); k > 0; --k) MutateGraph(&model, rng);
  std::string out;
  if (!model.SerializeToString(&out) || out.size() > max_size) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
  std::copy(out.begin(), out.end(), data);
  return out.size();
}
