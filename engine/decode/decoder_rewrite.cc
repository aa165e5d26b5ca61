#include "engine/decode/decoder_rewrite.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/decode.h"
#include "engine/ops/layout_attrs.h"
#include "engine/ops/sampling.h"
#include "engine/ops/typed.h"
#include "recq/op_registry.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

constexpr char kExpected[] =
    "expected a GPT-2-style decoder step exported with past key/values (inputs input_ids "
    "[1, 1], attention_mask [1, past + 1], position_ids [1, 1], past_key_values.{i}.key/value "
    "[1, heads, past, head_dim]; outputs logits and present.{i}.key/value, each present the "
    "Concat of its past and the new row along axis 2), imported with past = max_length - 1 "
    "(LoadDecoderOnnx)";

absl::Status Bad(const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("decoder rewrite: ", what, "; ", kExpected));
}

struct Editor {
  std::vector<Value> values;
  std::vector<Node> nodes;
  std::vector<bool> dead;  // per node

  ValueId Find(const std::string& name) const {
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i].name == name) return static_cast<ValueId>(i);
    }
    return kNoValue;
  }
  std::vector<int> Consumers(ValueId id) const {
    std::vector<int> out;
    for (size_t n = 0; n < nodes.size(); ++n) {
      if (dead[n]) continue;
      if (std::find(nodes[n].inputs.begin(), nodes[n].inputs.end(), id) != nodes[n].inputs.end())
        out.push_back(static_cast<int>(n));
    }
    return out;
  }
  ValueId AddValue(std::string name, TensorDesc desc, Value::Kind kind) {
    Value v;
    v.name = std::move(name);
    v.desc = std::move(desc);
    v.kind = kind;
    values.push_back(std::move(v));
    return static_cast<ValueId>(values.size() - 1);
  }
  void AddNode(OpType op, std::string name, std::vector<ValueId> inputs, ValueId output,
               OpAttrs attrs) {
    Node node;
    node.op = op;
    node.name = std::move(name);
    node.inputs = std::move(inputs);
    node.outputs = {output};
    node.attrs = std::move(attrs);
    nodes.push_back(std::move(node));
    dead.push_back(false);
  }
};

// RowSource: the new K or V rows [1, H, S, D] as elements of a tensor
// further up (a packed QKV projection's output), when the Reshapes,
// Transposes and unit-step Slices between them leave each element at
// offset + h * stride_h + s * stride_s + d * stride_d.
struct RowSource {
  ValueId value = kNoValue;
  int64_t offset = 0, stride_h = 0, stride_s = 0, stride_d = 0;
};

std::vector<int64_t> Unravel(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t k = shape.size(); k-- > 0;) {
    idx[k] = flat % shape[k];
    flat /= shape[k];
  }
  return idx;
}

int64_t Ravel(const std::vector<int64_t>& idx, const std::vector<int64_t>& shape) {
  int64_t flat = 0;
  for (size_t k = 0; k < shape.size(); ++k) flat = flat * shape[k] + idx[k];
  return flat;
}

RowSource FindRowSource(const Editor& e, ValueId row) {
  const std::vector<int64_t>& rs = e.values[row].desc.shape;
  const int64_t heads = rs[1], rows = rs[2], dim = rs[3];
  std::vector<int64_t> at(static_cast<size_t>(heads * rows * dim));
  for (size_t i = 0; i < at.size(); ++i) at[i] = static_cast<int64_t>(i);
  RowSource best;
  ValueId cur = row;
  for (int step = 0; step < 16; ++step) {
    int producer = -1;
    for (size_t n = 0; n < e.nodes.size(); ++n) {
      if (!e.dead[n] && e.nodes[n].outputs[0] == cur) producer = static_cast<int>(n);
    }
    if (producer < 0) break;
    const Node& n = e.nodes[producer];
    if (n.inputs.size() != 1 || n.fused.kind != ActivationKind::kNone) break;
    const ValueId in = n.inputs[0];
    const std::vector<int64_t>& out_shape = e.values[cur].desc.shape;
    const std::vector<int64_t>& in_shape = e.values[in].desc.shape;
    if (e.values[in].desc.dtype != DataType::kFloat32) break;
    const OpDef* def = FindOp(n.op);
    if (def != nullptr && def->is_view) {
      // The flat index is unchanged.
    } else if (n.op == OpType::kTranspose) {
      const auto* a = n.attrs.get_if<TransposeAttrs>();
      std::vector<int64_t> perm = a != nullptr ? a->perm : std::vector<int64_t>{};
      if (perm.empty()) {
        for (size_t k = in_shape.size(); k-- > 0;) perm.push_back(static_cast<int64_t>(k));
      }
      if (perm.size() != in_shape.size()) break;
      for (int64_t& flat : at) {
        const std::vector<int64_t> o = Unravel(flat, out_shape);
        std::vector<int64_t> i(in_shape.size());
        for (size_t k = 0; k < perm.size(); ++k) i[static_cast<size_t>(perm[k])] = o[k];
        flat = Ravel(i, in_shape);
      }
    } else if (n.op == OpType("Slice")) {
      const auto* a = n.attrs.get_if<SliceAttrs>();
      if (a == nullptr || a->ends.size() != a->starts.size()) break;
      std::vector<int64_t> begin(in_shape.size(), 0);
      bool ok = true;
      for (size_t k = 0; k < a->starts.size() && ok; ++k) {
        int64_t axis = a->axes.empty() ? static_cast<int64_t>(k) : a->axes[k];
        if (axis < 0) axis += static_cast<int64_t>(in_shape.size());
        ok = axis >= 0 && axis < static_cast<int64_t>(in_shape.size()) &&
             (a->steps.empty() || a->steps[k] == 1);
        if (!ok) break;
        const int64_t d = in_shape[axis];
        int64_t b = a->starts[k] < 0 ? a->starts[k] + d : a->starts[k];
        begin[axis] = std::min(std::max<int64_t>(b, 0), d);
      }
      if (!ok) break;
      for (int64_t& flat : at) {
        std::vector<int64_t> i = Unravel(flat, out_shape);
        for (size_t k = 0; k < i.size(); ++k) i[k] += begin[k];
        flat = Ravel(i, in_shape);
      }
    } else {
      break;
    }
    cur = in;
    // Affine in (h, s, d)?
    const int64_t sd = dim > 1 ? at[1] - at[0] : 0;
    const int64_t ss = rows > 1 ? at[dim] - at[0] : 0;
    const int64_t sh = heads > 1 ? at[rows * dim] - at[0] : 0;
    bool affine = sd >= 0 && ss >= 0 && sh >= 0;
    for (int64_t h = 0; h < heads && affine; ++h) {
      for (int64_t r = 0; r < rows && affine; ++r) {
        for (int64_t d = 0; d < dim && affine; ++d)
          affine = at[(h * rows + r) * dim + d] == at[0] + h * sh + r * ss + d * sd;
      }
    }
    if (affine) best = {cur, at[0], sh, ss, sd};
  }
  return best;
}

int64_t ConcatAxis(const Node& node) {
  const ConcatAttrs* a = node.attrs.get_if<ConcatAttrs>();
  return a != nullptr ? a->axis : 0;
}

// MergeDuplicates drops nodes that compute what an earlier node computes:
// the same op, no attributes and no fused activation, and the same inputs
// (constants compared by type, shape and bytes). Their readers read the
// earlier node's output. Exporters repeat the attention mask's Where(mask,
// 0, min) in every layer, each with its own copies of the constants.
void MergeDuplicates(Editor& e, const std::vector<ValueId>& outputs) {
  const size_t count = e.values.size();
  std::vector<ValueId> canon(count);
  std::map<std::string, ValueId> constants;
  for (size_t i = 0; i < count; ++i) {
    canon[i] = static_cast<ValueId>(i);
    const Value& v = e.values[i];
    if (v.kind != Value::Kind::kConstant || v.data == nullptr) continue;
    std::string key = v.desc.ToString();
    key.push_back('|');
    key.append(static_cast<const char*>(v.data->bytes()), v.data->byte_size());
    canon[i] = constants.emplace(std::move(key), static_cast<ValueId>(i)).first->second;
  }
  std::vector<ValueId> repl(count);
  for (size_t i = 0; i < count; ++i) repl[i] = static_cast<ValueId>(i);
  auto resolve = [&](ValueId id) {
    while (id != kNoValue && repl[id] != id) id = repl[id];
    return id;
  };
  std::map<std::string, ValueId> seen;
  for (size_t n = 0; n < e.nodes.size(); ++n) {
    if (e.dead[n]) continue;
    Node& node = e.nodes[n];
    for (ValueId& id : node.inputs) id = resolve(id);
    if (!node.attrs.empty() || node.fused.kind != ActivationKind::kNone) continue;
    const ValueId out = node.outputs[0];
    if (std::find(outputs.begin(), outputs.end(), out) != outputs.end()) continue;
    std::string key = node.op.name();
    for (ValueId id : node.inputs) absl::StrAppend(&key, ",", id == kNoValue ? -1 : canon[id]);
    auto [it, added] = seen.emplace(std::move(key), out);
    if (added) continue;
    repl[out] = it->second;
    e.dead[n] = true;
  }
  for (size_t n = 0; n < e.nodes.size(); ++n) {
    for (ValueId& id : e.nodes[n].inputs) id = resolve(id);
  }
}

// Compact drops dead nodes and values nothing refers to, then validates.
absl::StatusOr<Graph> Compact(Editor& e, std::vector<ValueId> inputs,
                              std::vector<ValueId> outputs) {
  std::vector<Node> nodes;
  std::vector<bool> used(e.values.size(), false);
  for (size_t n = 0; n < e.nodes.size(); ++n) {
    if (e.dead[n]) continue;
    for (ValueId id : e.nodes[n].inputs) {
      if (id != kNoValue) used[id] = true;
    }
    for (ValueId id : e.nodes[n].outputs) used[id] = true;
    nodes.push_back(std::move(e.nodes[n]));
  }
  for (ValueId id : inputs) used[id] = true;
  for (ValueId id : outputs) used[id] = true;
  std::vector<ValueId> remap(e.values.size(), kNoValue);
  std::vector<Value> values;
  for (size_t i = 0; i < e.values.size(); ++i) {
    if (!used[i]) continue;
    remap[i] = static_cast<ValueId>(values.size());
    values.push_back(std::move(e.values[i]));
  }
  for (Node& node : nodes) {
    for (ValueId& id : node.inputs) {
      if (id != kNoValue) id = remap[id];
    }
    for (ValueId& id : node.outputs) id = remap[id];
  }
  for (ValueId& id : inputs) id = remap[id];
  for (ValueId& id : outputs) id = remap[id];
  return Graph::Create(std::move(values), std::move(nodes), std::move(inputs), std::move(outputs));
}

}  // namespace

absl::StatusOr<DecodeGraph> RewriteDecoder(const Graph& graph, int64_t max_length,
                                           const DecodeSampler& sampler, int64_t rows) {
  if (max_length < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_length is ", max_length, "; expected at least 2"));
  }
  if (rows < 1 || rows >= max_length) {
    return absl::InvalidArgumentError(
        absl::StrCat("rows is ", rows, "; expected 1..", max_length - 1));
  }
  const bool prefill = rows > 1;
  SampleAttrs sample;
  sample.mode = static_cast<SampleMode>(sampler.mode);
  sample.temperature = sampler.temperature;
  sample.k = std::max<int64_t>(sampler.k, 1);
  sample.p = sampler.p;
  sample.seed = static_cast<int64_t>(sampler.seed);
  if (sampler.mode != DecodeSampler::Mode::kGreedy) {
    RECQ_RETURN_IF_ERROR(CheckSampleAttrs(sample));
  }
  const int64_t L = max_length;
  Editor e;
  e.values = graph.values();
  e.nodes = graph.nodes();
  e.dead.assign(e.nodes.size(), false);
  std::vector<ValueId> outputs = graph.outputs();

  // The three step inputs.
  struct StepInput {
    const char* name;
    std::vector<int64_t> shape;
    DecodeAttrs::Which which;
  };
  const StepInput step_inputs[] = {{"input_ids", {1, rows}, DecodeAttrs::Which::kToken},
                                   {"position_ids", {1, rows}, DecodeAttrs::Which::kPosition},
                                   {"attention_mask", {1, L}, DecodeAttrs::Which::kMask}};
  std::vector<ValueId> step_values;
  for (const StepInput& in : step_inputs) {
    ValueId id = e.Find(in.name);
    if (id == kNoValue || e.values[id].kind != Value::Kind::kInput) {
      return Bad(absl::StrCat("the graph has no input '", in.name, "'"));
    }
    const TensorDesc want{in.shape, DataType::kInt64};
    if (e.values[id].desc != want) {
      return Bad(absl::StrCat("input '", in.name, "' is ", e.values[id].desc.ToString(),
                              "; for max_length ", L, " and ", rows, " new tokens it must be ",
                              want.ToString()));
    }
    step_values.push_back(id);
  }

  // The state and control.
  const ValueId control =
      e.AddValue(kDecodeControlName, {{kDecodeControlSize}, DataType::kInt64}, Value::Kind::kInput);
  const ValueId state = e.AddValue(kDecodeStateName, {{kDecodeStateHeader + L}, DataType::kInt64},
                                   Value::Kind::kIntermediate);
  DecodeAttrs base{L};
  base.rows = rows;
  e.AddNode(kDecodeBegin, "recq.decode_begin", {control}, state, base);
  for (size_t i = 0; i < step_values.size(); ++i) {
    ValueId id = step_values[i];
    e.values[id].kind = Value::Kind::kIntermediate;
    DecodeAttrs a = base;
    a.which = step_inputs[i].which;
    e.AddNode(kDecodeInputs, absl::StrCat("recq.", step_inputs[i].name), {state}, id, a);
  }

  // The past inputs and their Concats.
  DecodeGraph out;
  out.max_length = L;
  for (ValueId past : graph.inputs()) {
    if (std::find(step_values.begin(), step_values.end(), past) != step_values.end()) continue;
    const Value& pv = e.values[past];
    if (pv.desc.dtype != DataType::kFloat32 || pv.desc.shape.size() != 4 || pv.desc.shape[0] != 1 ||
        pv.desc.shape[2] != L - rows) {
      return Bad(absl::StrCat("input '", pv.name, "' is ", pv.desc.ToString(),
                              ", not a past of [1, heads, ", L - rows, ", head_dim] float32"));
    }
    ValueId cur = past;
    int concat = -1;
    for (;;) {
      std::vector<int> users = e.Consumers(cur);
      if (users.size() != 1) {
        return Bad(absl::StrCat("'", e.values[cur].name, "' (from past input '", pv.name,
                                "') is read by ", users.size(), " nodes, not by one Concat"));
      }
      const Node& node = e.nodes[users[0]];
      const bool pass_through =
          node.op == OpType::kIdentity || (node.op == OpType::kConcat && node.inputs.size() == 1);
      if (pass_through) {
        e.dead[users[0]] = true;
        cur = node.outputs[0];
        continue;
      }
      const int64_t axis = node.op == OpType::kConcat ? ConcatAxis(node) : 0;
      if (node.op != OpType::kConcat || node.inputs.size() != 2 || node.inputs[0] != cur ||
          (axis != 2 && axis != -2)) {
        return Bad(absl::StrCat("past input '", pv.name, "' reaches node '", node.name, "' (",
                                node.op.name(), "), not a Concat(past, new, axis=2)"));
      }
      concat = users[0];
      break;
    }
    Node& node = e.nodes[concat];
    const ValueId present = node.outputs[0];
    const ValueId row = node.inputs[1];
    const TensorDesc want{{1, pv.desc.shape[1], L, pv.desc.shape[3]}, DataType::kFloat32};
    if (e.values[present].desc != want || e.values[row].desc.shape.size() != 4 ||
        e.values[row].desc.shape[2] != rows) {
      return Bad(absl::StrCat("node '", node.name, "' appends ", e.values[row].desc.ToString(),
                              " to past '", pv.name, "' giving ", e.values[present].desc.ToString(),
                              "; expected ", rows, " row(s) giving ", want.ToString()));
    }
    node.op = kKvCacheWrite;
    node.inputs = {row, state};
    DecodeAttrs attrs = base;
    const RowSource src = FindRowSource(e, row);
    if (src.value != kNoValue) {
      // Read the row where the projection wrote it; the copies that made
      // it contiguous go unread (dead-node removal drops them).
      node.inputs[0] = src.value;
      attrs.heads = want.shape[1];
      attrs.dim = want.shape[3];
      attrs.offset = src.offset;
      attrs.stride_h = src.stride_h;
      attrs.stride_s = src.stride_s;
      attrs.stride_d = src.stride_d;
    }
    node.attrs = attrs;
    if (std::find(outputs.begin(), outputs.end(), present) == outputs.end()) {
      outputs.push_back(present);
    }
    out.caches.push_back(e.values[present].name);
    out.cache_bytes += static_cast<int64_t>(want.ByteSize());
  }
  if (out.caches.empty()) return Bad("the graph has no past_key_values inputs");

  // The logits and the sampler.
  ValueId logits = e.Find("logits");
  if (logits == kNoValue || std::find(outputs.begin(), outputs.end(), logits) == outputs.end()) {
    return Bad("the graph has no output 'logits'");
  }
  const TensorDesc& ld = e.values[logits].desc;
  if (ld.dtype != DataType::kFloat32 || ld.shape.size() < 2 ||
      (!prefill && ld.NumElements() != ld.shape.back())) {
    return Bad(
        absl::StrCat("output 'logits' is ", ld.ToString(), "; expected [1, 1, vocab] float32"));
  }
  out.vocab = ld.shape.back();
  if (prefill) {
    // No logits: the decode step processes the prompt's last token and
    // samples. Dropping the output lets dead-node removal drop the last
    // layer's MLP rows and the LM head.
    if (ld.NumElements() != rows * ld.shape.back()) {
      return Bad(absl::StrCat("output 'logits' is ", ld.ToString(), "; expected [1, ", rows,
                              ", vocab] float32"));
    }
    outputs.erase(std::find(outputs.begin(), outputs.end(), logits));
    std::vector<ValueId> inputs = {state, control};
    for (ValueId id : outputs) inputs.push_back(id);  // the caches: ordered after their writes
    const ValueId done =
        e.AddValue(kDecodeTokenName, {{1}, DataType::kInt64}, Value::Kind::kIntermediate);
    e.AddNode(kDecodePrefillAdvance, "recq.prefill_advance", std::move(inputs), done, base);
    outputs.push_back(state);
    outputs.push_back(done);
    MergeDuplicates(e, outputs);
    RECQ_ASSIGN_OR_RETURN(out.graph, Compact(e, {control}, std::move(outputs)));
    return out;
  }
  out.logits = "logits";
  std::vector<int64_t> ids_shape(ld.shape.begin(), ld.shape.end() - 1);
  const ValueId ids = e.AddValue("recq.sampled", TensorDesc{ids_shape, DataType::kInt64},
                                 Value::Kind::kIntermediate);
  if (sampler.mode == DecodeSampler::Mode::kGreedy) {
    e.AddNode(kDecodeArgMax, "recq.sample", {logits}, ids, DecodeAttrs{L});
  } else {
    // Sample's counter-based stream is indexed by the position: every step
    // draws anew, and a sequence is the same on every run and backend.
    const ValueId step =
        e.AddValue("recq.step", TensorDesc{{1}, DataType::kInt64}, Value::Kind::kIntermediate);
    e.AddNode(kDecodeInputs, "recq.step", {state}, step, DecodeAttrs{L, DecodeAttrs::Which::kStep});
    e.AddNode(kSample, "recq.sample", {logits, step}, ids, sample);
  }
  const ValueId token =
      e.AddValue(kDecodeTokenName, {{1}, DataType::kInt64}, Value::Kind::kIntermediate);
  e.AddNode(kDecodeAdvance, "recq.decode_advance", {ids, state, control}, token, DecodeAttrs{L});
  outputs.push_back(state);
  outputs.push_back(token);

  MergeDuplicates(e, outputs);
  RECQ_ASSIGN_OR_RETURN(out.graph, Compact(e, {control}, std::move(outputs)));
  return out;
}

}  // namespace recq::internal
