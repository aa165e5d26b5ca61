// The process-wide op registry behind recq/op_registry.h.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "engine/ops/op_table.h"
#include "recq/op_registry.h"

namespace recq {
namespace {

std::string NormalDomain(absl::string_view domain) {
  return domain == "ai.onnx" ? std::string() : std::string(domain);
}

// Ops and mappings are stored behind unique_ptrs: pointers handed out stay
// valid while later registrations grow the containers.
class Registry final : public internal::OpTable {
 public:
  static Registry& Get() {
    static Registry* registry = [] {
      auto* r = new Registry;
      absl::Status s = internal::RegisterBuiltinOps(*r);
      if (!s.ok()) {
        // A built-in op that does not register is a bug in recq itself.
        std::fprintf(stderr, "recq: built-in op registration failed: %s\n", s.ToString().c_str());
        std::abort();
      }
      return r;
    }();
    return *registry;
  }

  absl::Status Add(OpDef def) override {
    if (def.type.name()[0] == '\0')
      return absl::InvalidArgumentError("RegisterOp: the op has no name");
    const std::string name = def.type.name();
    if (!def.infer) {
      return absl::InvalidArgumentError(
          absl::StrCat("RegisterOp: op '", name, "' has no shape inference (infer)"));
    }
    if (def.variants.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("RegisterOp: op '", name, "' has no kernel variant"));
    }
    for (const KernelVariant& v : def.variants) {
      if (v.name.empty() || !v.lower) {
        return absl::InvalidArgumentError(absl::StrCat(
            "RegisterOp: op '", name, "' has a kernel variant without a name or a lowering"));
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (ops_.contains(name)) {
      return absl::AlreadyExistsError(
          absl::StrCat("RegisterOp: op '", name, "' is already registered"));
    }
    for (const OnnxMapping& m : def.onnx) {
      if (absl::Status s = CheckMapping(m); !s.ok()) return s;
    }
    // The key must outlive the caller's string: intern it.
    def.type = OpType::Named(name);
    for (const OnnxMapping& m : def.onnx) AddMappingLocked(m);
    ops_[name] = std::make_unique<OpDef>(std::move(def));
    return absl::OkStatus();
  }

  absl::Status AddOnnx(OnnxMapping mapping) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (absl::Status s = CheckMapping(mapping); !s.ok()) return s;
    AddMappingLocked(std::move(mapping));
    return absl::OkStatus();
  }

  absl::Status AddSource(const std::string& program, std::string source) {
    if (program.size() < 4 || program.compare(program.size() - 3, 3, ".cl") != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("RegisterKernelSource: program name '", program, "' must end in .cl"));
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (!sources_.emplace(program, std::move(source)).second) {
      return absl::AlreadyExistsError(
          absl::StrCat("RegisterKernelSource: '", program, "' is already registered"));
    }
    return absl::OkStatus();
  }

  const std::string* Source(absl::string_view program) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sources_.find(program);
    return it == sources_.end() ? nullptr : &it->second;
  }

  const OpDef* Find(absl::string_view name) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = ops_.find(name);
    return it == ops_.end() ? nullptr : it->second.get();
  }

  const OnnxMapping* FindMapping(absl::string_view domain, absl::string_view op_type,
                                 int64_t opset) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = mappings_.find(Key(domain, op_type));
    if (it == mappings_.end()) return nullptr;
    for (const auto& m : it->second) {
      if (opset >= m->min_opset && opset <= m->max_opset) return m.get();
    }
    return nullptr;
  }

  std::string Opsets(absl::string_view domain, absl::string_view op_type) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = mappings_.find(Key(domain, op_type));
    if (it == mappings_.end()) return "";
    std::vector<std::string> ranges;
    for (const auto& m : it->second) {
      ranges.push_back(m->max_opset >= (1 << 30) ? absl::StrCat(m->min_opset, "+")
                                                 : absl::StrCat(m->min_opset, "-", m->max_opset));
    }
    return absl::StrJoin(ranges, ", ");
  }

  std::vector<const OpDef*> Ops() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<const OpDef*> out;
    for (const auto& [name, def] : ops_) out.push_back(def.get());
    std::sort(out.begin(), out.end(), [](const OpDef* a, const OpDef* b) {
      return absl::string_view(a->type.name()) < absl::string_view(b->type.name());
    });
    return out;
  }

  std::vector<const OnnxMapping*> Mappings() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<const OnnxMapping*> out;
    for (const auto& [key, list] : mappings_) {
      for (const auto& m : list) out.push_back(m.get());
    }
    std::sort(out.begin(), out.end(), [](const OnnxMapping* a, const OnnxMapping* b) {
      return std::tie(a->domain, a->op_type, a->min_opset) <
             std::tie(b->domain, b->op_type, b->min_opset);
    });
    return out;
  }

 private:
  static std::string Key(absl::string_view domain, absl::string_view op_type) {
    return absl::StrCat(NormalDomain(domain), "\n", op_type);
  }

  absl::Status CheckMapping(const OnnxMapping& m) {
    if (m.op_type.empty() || !m.import || m.min_opset > m.max_opset) {
      return absl::InvalidArgumentError(
          absl::StrCat("ONNX mapping '", m.domain, ":", m.op_type,
                       "' needs an op type, an import function and min_opset <= max_opset"));
    }
    auto it = mappings_.find(Key(m.domain, m.op_type));
    if (it == mappings_.end()) return absl::OkStatus();
    for (const auto& other : it->second) {
      if (m.min_opset <= other->max_opset && other->min_opset <= m.max_opset) {
        return absl::AlreadyExistsError(
            absl::StrCat("ONNX op '", m.domain.empty() ? "" : m.domain + ":", m.op_type,
                         "' opsets ", m.min_opset, "-", m.max_opset, " are already imported"));
      }
    }
    return absl::OkStatus();
  }

  void AddMappingLocked(OnnxMapping m) {
    m.domain = NormalDomain(m.domain);
    auto& list = mappings_[Key(m.domain, m.op_type)];
    list.push_back(std::make_unique<OnnxMapping>(std::move(m)));
  }

  std::mutex mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<OpDef>> ops_;
  absl::flat_hash_map<std::string, std::vector<std::unique_ptr<OnnxMapping>>> mappings_;
  absl::flat_hash_map<std::string, std::string> sources_;
};

std::mutex& InternMutex() {
  static std::mutex* mu = new std::mutex;
  return *mu;
}

}  // namespace

OpType OpType::Named(absl::string_view name) {
  // A node-based set: an element's c_str() stays put as the set grows.
  static auto* names = new std::set<std::string, std::less<>>;
  std::lock_guard<std::mutex> lock(InternMutex());
  auto it = names->find(name);
  if (it == names->end()) it = names->insert(std::string(name)).first;
  return OpType(it->c_str());
}

absl::Status RegisterOp(OpDef def) { return Registry::Get().Add(std::move(def)); }
absl::Status RegisterOnnxMapping(OnnxMapping mapping) {
  return Registry::Get().AddOnnx(std::move(mapping));
}
absl::Status RegisterKernelSource(const std::string& program, std::string source) {
  return Registry::Get().AddSource(program, std::move(source));
}
const OpDef* FindOp(OpType type) { return Registry::Get().Find(type.name()); }
const OnnxMapping* FindOnnxMapping(absl::string_view domain, absl::string_view op_type,
                                   int64_t opset) {
  return Registry::Get().FindMapping(domain, op_type, opset);
}
std::string OnnxOpsetsOf(absl::string_view domain, absl::string_view op_type) {
  return Registry::Get().Opsets(domain, op_type);
}
std::vector<const OpDef*> RegisteredOps() { return Registry::Get().Ops(); }
std::vector<const OnnxMapping*> RegisteredOnnxMappings() { return Registry::Get().Mappings(); }

std::string KernelParamsString(const KernelParams& params) {
  return absl::StrJoin(params, ",", absl::PairFormatter("="));
}

absl::StatusOr<KernelParams> ParseKernelParams(absl::string_view text) {
  KernelParams params;
  if (text.empty()) return params;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(item, absl::MaxSplits('=', 1));
    int64_t value = 0;
    if (kv.first.empty() || !absl::SimpleAtoi(kv.second, &value) ||
        !params.emplace(std::string(kv.first), value).second) {
      return absl::InvalidArgumentError(absl::StrCat("kernel parameters '", text, "': item '", item,
                                                     "' is not a new name=integer"));
    }
  }
  return params;
}

namespace internal {
// RegisteredKernelSource returns a source given to RegisterKernelSource, or
// nullptr (used by the kernel library).
const std::string* RegisteredKernelSource(absl::string_view program) {
  return Registry::Get().Source(program);
}
}  // namespace internal

HostData OnnxConstant::ToHostData() const {
  const DataType t = type();
  switch (t) {
    case DataType::kFloat32:
      return HostData(floats);
    case DataType::kFloat16: {
      std::vector<uint16_t> bits(floats.size());
      for (size_t i = 0; i < floats.size(); ++i) bits[i] = FloatToHalf(floats[i]);
      return HostData(t, std::move(bits));
    }
    case DataType::kInt64:
      return HostData(ints);
    case DataType::kFloat64:
      if (doubles.size() == floats.size()) return HostData(doubles);
      return HostData(std::vector<double>(floats.begin(), floats.end()));
    default: {
      std::vector<double> values(ints.begin(), ints.end());
      return HostData::FromDoubles(t, values);
    }
  }
}

absl::Status OnnxNodeContext::Invalid(absl::string_view what) const {
  return absl::InvalidArgumentError(absl::StrCat("node '", name(), "' (", op_type(), "): ", what));
}
absl::Status OnnxNodeContext::Unsupported(absl::string_view what) const {
  return absl::UnimplementedError(absl::StrCat("node '", name(), "' (", op_type(), "): ", what));
}
absl::Status OnnxNodeContext::CheckOnlyFirstOutputUsed() const {
  for (int i = 1; i < num_outputs(); ++i) {
    if (OutputUsed(i)) {
      return Unsupported(absl::StrCat("output ", i, " ('", output_name(i),
                                      "') is used, but only the first output is supported"));
    }
  }
  return absl::OkStatus();
}

}  // namespace recq
