// LoadDecoderOnnx (recq/generator.h): a decoder with past key/values
// imported at the static shapes of one decode step.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/decode/decoder_rewrite.h"
#include "onnx/onnx_pb.h"
#include "recq/generator.h"
#include "recq/onnx.h"
#include "recq/status_macros.h"

namespace recq {

namespace {

onnx::NodeProto* AddNode(onnx::GraphProto& g, const std::string& op, std::vector<std::string> in,
                         const std::string& out) {
  onnx::NodeProto* n = g.add_node();
  n->set_op_type(op);
  n->set_name(out);
  for (std::string& i : in) n->add_input(std::move(i));
  n->add_output(out);
  return n;
}

void AddInt64(onnx::GraphProto& g, const std::string& name, std::vector<int64_t> dims,
              int64_t value) {
  onnx::TensorProto* t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  t->add_int64_data(value);
}

// ShiftCausalMask makes transformers' causal mask follow the position: the
// exported mask compares each key index with the query's cache position,
// LessOrEqual(kv_idx, q_idx), q_idx = past + i, which the import folds
// for past = max_length - seq. The rewritten step writes its rows at the
// device-side position instead, so q_idx becomes q_idx + (position_ids[0]
// - q_idx[0]): query i sees the keys up to position + i. The edit does not
// depend on seq, so one edited model serves every prefill size.
absl::Status ShiftCausalMask(onnx::ModelProto& model) {
  onnx::GraphProto& g = *model.mutable_graph();
  int found = -1;
  for (int i = 0; i < g.node_size(); ++i) {
    if (g.node(i).op_type() != "LessOrEqual") continue;
    if (found >= 0) {
      return absl::InvalidArgumentError(
          "LoadDecoderOnnx: the decoder has more than one LessOrEqual node; with seq > 1 it "
          "expects one causal mask LessOrEqual(kv_idx, q_idx) as transformers exports it");
    }
    found = i;
  }
  if (found < 0 || g.node(found).input_size() != 2) {
    return absl::InvalidArgumentError(
        "LoadDecoderOnnx: the decoder has no causal mask LessOrEqual(kv_idx, q_idx); with seq > 1 "
        "it expects transformers' mask (seq = 1 needs none)");
  }
  const std::string q = g.node(found).input(1);
  AddInt64(g, "recq.zero", {}, 0);
  AddInt64(g, "recq.flat", {1}, -1);
  AddNode(g, "Gather", {"position_ids", "recq.zero"}, "recq.position0")
      ->add_attribute()
      ->CopyFrom([] {
        onnx::AttributeProto a;
        a.set_name("axis");
        a.set_type(onnx::AttributeProto::INT);
        a.set_i(1);
        return a;
      }());
  AddNode(g, "Reshape", {q, "recq.flat"}, "recq.q_flat");
  AddNode(g, "Gather", {"recq.q_flat", "recq.zero"}, "recq.past");
  AddNode(g, "Sub", {"recq.position0", "recq.past"}, "recq.shift");
  AddNode(g, "Add", {q, "recq.shift"}, "recq.q_idx");
  // The new nodes go before the LessOrEqual (nodes are in topological order).
  onnx::NodeProto* le = g.mutable_node(found);
  le->set_input(1, "recq.q_idx");
  for (int k = 0; k < 5; ++k) {
    for (int i = g.node_size() - 1; i > found; --i) g.mutable_node()->SwapElements(i, i - 1);
  }
  return absl::OkStatus();
}

absl::Status CheckSizes(int64_t max_length, int64_t seq) {
  if (max_length < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("LoadDecoderOnnx: max_length is ", max_length, "; expected at least 2"));
  }
  if (seq < 1 || seq >= max_length) {
    return absl::InvalidArgumentError(
        absl::StrCat("LoadDecoderOnnx: seq is ", seq, "; expected 1..", max_length - 1));
  }
  return absl::OkStatus();
}

// StepOptions: the import's shapes for `seq` new tokens over a past of
// max_length - seq rows.
absl::StatusOr<OnnxOptions> StepOptions(const onnx::ModelProto& model, const std::string& path,
                                        int64_t max_length, int64_t seq) {
  OnnxOptions options;
  options.external_data_dir = std::filesystem::path(path).parent_path().string();
  if (options.external_data_dir.empty()) options.external_data_dir = ".";
  std::vector<std::string> initializers;
  for (const onnx::TensorProto& t : model.graph().initializer()) initializers.push_back(t.name());
  for (const onnx::ValueInfoProto& v : model.graph().input()) {
    const std::string& name = v.name();
    if (std::find(initializers.begin(), initializers.end(), name) != initializers.end()) continue;
    const auto& dims = v.type().tensor_type().shape().dim();
    if (name == "input_ids" || name == "position_ids") {
      options.input_shapes[name] = {1, seq};
    } else if (name == "attention_mask") {
      options.input_shapes[name] = {1, max_length};
    } else if (dims.size() == 4 && absl::StrContains(name, "past")) {
      // [batch, heads, past, head_dim]: heads and head_dim are fixed.
      std::vector<int64_t> shape = {1, 0, max_length - seq, 0};
      for (int i : {1, 3}) {
        if (!dims[i].has_dim_value()) {
          return absl::InvalidArgumentError(
              absl::StrCat("LoadDecoderOnnx: input '", name, "' has a symbolic dimension ", i,
                           "; expected [batch, heads, past, head_dim] with fixed heads and "
                           "head_dim"));
        }
        shape[i] = dims[i].dim_value();
      }
      options.input_shapes[name] = shape;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "LoadDecoderOnnx: unexpected input '", name,
          "'; expected input_ids, attention_mask, position_ids and past_key_values.{i}.key/value"));
    }
  }
  return options;
}

absl::StatusOr<std::string> ReadModel(const std::string& path, onnx::ModelProto& model) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open '", path, "'"));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!model.ParseFromString(bytes)) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not an ONNX model"));
  }
  return bytes;
}

}  // namespace

absl::StatusOr<Graph> LoadDecoderOnnx(const std::string& path, int64_t max_length, int64_t seq) {
  RECQ_RETURN_IF_ERROR(CheckSizes(max_length, seq));
  onnx::ModelProto model;
  RECQ_ASSIGN_OR_RETURN(std::string bytes, ReadModel(path, model));
  RECQ_ASSIGN_OR_RETURN(OnnxOptions options, StepOptions(model, path, max_length, seq));
  if (seq > 1) {
    RECQ_RETURN_IF_ERROR(ShiftCausalMask(model));
    bytes.clear();
    if (!model.SerializeToString(&bytes)) {
      return absl::InternalError(absl::StrCat("LoadDecoderOnnx: cannot serialize '", path, "'"));
    }
  }
  model = onnx::ModelProto();
  return LoadOnnxFromBytes(bytes, options);
}

namespace internal {

absl::StatusOr<std::vector<Graph>> LoadDecoderSteps(const std::string& path, int64_t max_length,
                                                    const std::vector<int64_t>& seqs) {
  for (int64_t seq : seqs) RECQ_RETURN_IF_ERROR(CheckSizes(max_length, seq));
  RECQ_RETURN_IF_ERROR(CheckSizes(max_length, 1));
  onnx::ModelProto model;
  RECQ_ASSIGN_OR_RETURN(std::string bytes, ReadModel(path, model));
  std::vector<Graph> out;
  RECQ_ASSIGN_OR_RETURN(OnnxOptions options, StepOptions(model, path, max_length, 1));
  RECQ_ASSIGN_OR_RETURN(Graph decode, LoadOnnxFromBytes(bytes, options));
  out.push_back(std::move(decode));
  if (seqs.empty()) return out;
  // One parse of the shifted model for every prefill size: its imports
  // share the initializers' HostData.
  RECQ_RETURN_IF_ERROR(ShiftCausalMask(model));
  bytes.clear();
  if (!model.SerializeToString(&bytes)) {
    return absl::InternalError(absl::StrCat("LoadDecoderOnnx: cannot serialize '", path, "'"));
  }
  RECQ_ASSIGN_OR_RETURN(OnnxModel shifted, OnnxModel::FromBytes(bytes, options.external_data_dir));
  bytes.clear();
  for (int64_t seq : seqs) {
    RECQ_ASSIGN_OR_RETURN(OnnxOptions o, StepOptions(model, path, max_length, seq));
    RECQ_ASSIGN_OR_RETURN(Graph g, shifted.Import(o));
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace internal

}  // namespace recq
