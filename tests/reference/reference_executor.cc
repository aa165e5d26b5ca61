#include "reference/reference_executor.h"

#include "reference/reference_registry.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <utility>
#include <variant>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace recq::reference {
namespace {

absl::StatusOr<HostTensor> Evaluate(const Node& node, ReferenceInputs in) {
  const ReferenceFn* fn = FindReferenceOp(node.op);
  if (fn == nullptr) {
    return absl::UnimplementedError(absl::StrCat("node '", node.name, "': op '", node.op.name(),
                                                 "' has no reference implementation"));
  }
  return (*fn)(node, in);
}

}  // namespace

absl::StatusOr<HostTensor> RunNode(const Node& node, absl::Span<const HostTensor* const> inputs) {
  absl::StatusOr<HostTensor> out = Evaluate(node, inputs);
  if (!out.ok()) {
    if (out.status().code() != absl::StatusCode::kInvalidArgument) return out.status();
    // Op-level messages do not know the node; add it.
    return absl::InvalidArgumentError(absl::StrCat("node '", node.name, "' (", OpTypeName(node.op),
                                                   "): ", out.status().message()));
  }
  ApplyActivation(node.fused, *out);
  return out;
}

absl::StatusOr<absl::flat_hash_map<std::string, HostTensor>> RunReference(
    const Graph& graph, const absl::flat_hash_map<std::string, HostTensor>& inputs) {
  const std::vector<Value>& values = graph.values();
  std::vector<std::optional<HostTensor>> computed(values.size());

  std::vector<std::string> input_names;
  for (ValueId id : graph.inputs()) input_names.push_back(values[id].name);
  for (const auto& [name, tensor] : inputs) {
    bool known = false;
    for (const std::string& n : input_names) known = known || n == name;
    if (!known) {
      return absl::InvalidArgumentError(absl::StrCat(
          "'", name, "' is not an input of the graph (inputs: ", absl::StrJoin(input_names, ", "),
          ")"));
    }
  }
  for (ValueId id : graph.inputs()) {
    const Value& v = values[id];
    auto it = inputs.find(v.name);
    if (it == inputs.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("missing input '", v.name, "' of shape ", ShapeString(v.desc.shape)));
    }
    const HostTensor& t = it->second;
    if (t.shape != v.desc.shape) {
      return absl::InvalidArgumentError(absl::StrCat("input '", v.name, "' has shape ",
                                                     ShapeString(t.shape), ", the graph expects ",
                                                     ShapeString(v.desc.shape)));
    }
    if (static_cast<int64_t>(t.data.size()) != NumElements(t.shape)) {
      return absl::InvalidArgumentError(absl::StrCat("input '", v.name, "' has ", t.data.size(),
                                                     " elements, its shape ", ShapeString(t.shape),
                                                     " needs ", NumElements(t.shape)));
    }
    computed[id] = t;
  }
  for (size_t id = 0; id < values.size(); ++id) {
    const Value& v = values[id];
    if (v.kind != Value::Kind::kConstant) continue;
    if (v.data == nullptr || static_cast<int64_t>(v.data->size()) != NumElements(v.desc.shape)) {
      return absl::InvalidArgumentError(
          absl::StrCat("constant '", v.name, "' has ", v.data == nullptr ? 0 : v.data->size(),
                       " elements, its shape ", ShapeString(v.desc.shape), " needs ",
                       NumElements(v.desc.shape)));
    }
    std::vector<float> data(v.data->size());
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(v.data->at(i));
    computed[id] = HostTensor{v.desc.shape, std::move(data), v.desc.dtype};
  }

  for (const Node& node : graph.nodes()) {
    std::vector<const HostTensor*> in;
    for (ValueId id : node.inputs) {
      if (id == kNoValue) {
        in.push_back(nullptr);
        continue;
      }
      if (id < 0 || static_cast<size_t>(id) >= values.size() || !computed[id].has_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat("node '", node.name, "' reads value ", id, " before it is computed"));
      }
      in.push_back(&*computed[id]);
    }
    if (node.outputs.size() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node '", node.name, "' has ", node.outputs.size(), " outputs; every recq op has one"));
    }
    absl::StatusOr<HostTensor> out = RunNode(node, in);
    if (!out.ok()) return out.status();
    const Value& ov = values[node.outputs[0]];
    if (out->shape != ov.desc.shape) {
      return absl::InternalError(
          absl::StrCat("node '", node.name, "' (", OpTypeName(node.op),
                       "): the reference computes shape ", ShapeString(out->shape), " for '",
                       ov.name, "' but the graph infers ", ShapeString(ov.desc.shape)));
    }
    out->dtype = ov.desc.dtype;
    computed[node.outputs[0]] = *std::move(out);
  }

  absl::flat_hash_map<std::string, HostTensor> outputs;
  for (ValueId id : graph.outputs()) {
    if (!computed[id].has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph output '", values[id].name, "' is never computed"));
    }
    outputs[values[id].name] = *computed[id];
  }
  return outputs;
}

HostTensor RandomTensor(std::vector<int64_t> shape, uint64_t seed, float lo, float hi) {
  HostTensor t{std::move(shape), {}};
  t.data.resize(NumElements(t.shape));
  // mt19937_64's output sequence is fixed by the standard; the mapping to
  // floats is done here, because std distributions differ between libraries.
  std::mt19937_64 gen(seed);
  const double range = static_cast<double>(hi) - lo;
  for (float& v : t.data) {
    const double unit = static_cast<double>(gen() >> 11) * 0x1.0p-53;  // [0, 1)
    v = static_cast<float>(lo + range * unit);
    if (v >= hi) v = lo;  // rounding to float may reach hi
  }
  return t;
}

CompareResult Compare(absl::Span<const float> actual, absl::Span<const float> expected, float atol,
                      float rtol) {
  CompareResult r;
  r.actual_size = actual.size();
  r.expected_size = expected.size();
  r.atol = atol;
  r.rtol = rtol;
  const size_t n = std::min(actual.size(), expected.size());
  for (size_t i = 0; i < n; ++i) {
    const double a = actual[i];
    const double e = expected[i];
    bool fail;
    if (std::isnan(a) || std::isnan(e)) {
      fail = true;
      r.max_abs_err = std::numeric_limits<double>::infinity();
      r.max_rel_err = std::numeric_limits<double>::infinity();
    } else if (a == e) {
      fail = false;  // also equal infinities
    } else {
      const double err = std::fabs(a - e);
      r.max_abs_err = std::max(r.max_abs_err, err);
      if (e != 0.0) r.max_rel_err = std::max(r.max_rel_err, err / std::fabs(e));
      fail = !(err <= static_cast<double>(atol) + static_cast<double>(rtol) * std::fabs(e));
    }
    if (fail) {
      if (r.failures == 0) {
        r.first_failure = static_cast<int64_t>(i);
        r.first_actual = actual[i];
        r.first_expected = expected[i];
      }
      ++r.failures;
    }
  }
  return r;
}

std::string CompareResult::ToString() const {
  if (actual_size != expected_size) {
    return absl::StrCat("size mismatch: actual has ", actual_size, " elements, expected ",
                        expected_size);
  }
  if (failures == 0) {
    return absl::StrCat("all ", actual_size, " elements match (max abs err ", max_abs_err,
                        ", max rel err ", max_rel_err, ")");
  }
  // %.9g shows every float digit, so a 1-ulp difference is visible.
  return absl::StrFormat(
      "%d of %d elements differ (atol %g, rtol %g); first at index %d: actual %.9g, expected "
      "%.9g; max abs err %g, max rel err %g",
      failures, actual_size, atol, rtol, first_failure, first_actual, first_expected, max_abs_err,
      max_rel_err);
}

std::string IndexString(absl::Span<const int64_t> shape, int64_t index) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] > 0) {
      idx[d] = index % shape[d];
      index /= shape[d];
    }
  }
  return ShapeString(idx);
}

}  // namespace recq::reference
