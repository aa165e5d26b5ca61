#include "reference/reference_registry.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace recq::reference {
namespace {

class Registry final : public ReferenceTable {
 public:
  static Registry& Get() {
    static Registry* registry = [] {
      auto* r = new Registry;
      absl::Status s = RegisterBuiltinReferences(*r);
      if (!s.ok()) {
        std::fprintf(stderr, "reference registration failed: %s\n", s.ToString().c_str());
        std::abort();
      }
      return r;
    }();
    return *registry;
  }

  absl::Status Add(OpType op, ReferenceFn fn) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto [it, inserted] =
        fns_.try_emplace(std::string(op.name()), std::make_unique<ReferenceFn>(std::move(fn)));
    if (!inserted) {
      return absl::AlreadyExistsError(absl::StrCat("op '", op.name(), "' already has a reference"));
    }
    return absl::OkStatus();
  }

  const ReferenceFn* Find(OpType op) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = fns_.find(absl::string_view(op.name()));
    return it == fns_.end() ? nullptr : it->second.get();
  }

 private:
  std::mutex mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<ReferenceFn>> fns_;
};

}  // namespace

absl::Status RegisterReferenceOp(OpType op, ReferenceFn fn) {
  return Registry::Get().Add(op, std::move(fn));
}

const ReferenceFn* FindReferenceOp(OpType op) { return Registry::Get().Find(op); }

absl::Status CheckArity(const Node& node, ReferenceInputs inputs, size_t required, size_t max) {
  if (inputs.size() < required || inputs.size() > max) {
    return absl::InvalidArgumentError(absl::StrCat("node '", node.name, "' (", OpTypeName(node.op),
                                                   ") has ", inputs.size(), " inputs, expected ",
                                                   required, " to ", max));
  }
  for (size_t i = 0; i < required; ++i) {
    if (inputs[i] == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node '", node.name, "' (", OpTypeName(node.op), ") lacks required input ", i));
    }
  }
  return absl::OkStatus();
}

}  // namespace recq::reference
