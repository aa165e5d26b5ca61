#include "engine/backend_registry.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"

namespace recq::internal {
namespace {

class Table final : public BackendTable {
 public:
  absl::Status Add(BackendEntry entry) override {
    if (entry.name.empty() || !entry.probe || !entry.create) {
      return absl::InvalidArgumentError(
          absl::StrCat("backend '", entry.name, "': an entry needs a name, a probe and a factory"));
    }
    if (entry.id == Backend::kAuto || entry.name == "auto") {
      return absl::InvalidArgumentError(
          absl::StrCat("backend '", entry.name, "': 'auto' is not a backend of its own"));
    }
    for (const BackendEntry& other : entries) {
      if (other.id == entry.id || other.name == entry.name) {
        return absl::InvalidArgumentError(
            absl::StrCat("backend '", entry.name, "' is registered twice (as '", other.name,
                         "' too): each enum value and name belongs to one backend"));
      }
    }
    entries.push_back(std::move(entry));
    return absl::OkStatus();
  }
  std::vector<BackendEntry> entries;
};

}  // namespace

const std::vector<BackendEntry>& BackendEntries() {
  static const std::vector<BackendEntry>* entries = [] {
    Table table;
    if (absl::Status s = RegisterBuiltinBackends(table); !s.ok()) {
      std::fprintf(stderr, "recq: backend registration failed: %s\n", s.ToString().c_str());
      std::abort();
    }
    std::sort(table.entries.begin(), table.entries.end(),
              [](const BackendEntry& a, const BackendEntry& b) { return a.id < b.id; });
    return new std::vector<BackendEntry>(std::move(table.entries));
  }();
  return *entries;
}

const BackendEntry* FindBackend(Backend id) {
  for (const BackendEntry& entry : BackendEntries()) {
    if (entry.id == id) return &entry;
  }
  return nullptr;
}

const BackendEntry* FindBackendByName(absl::string_view name) {
  for (const BackendEntry& entry : BackendEntries()) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

absl::StatusOr<BackendChoice> ChooseBackend(const Context& context, Backend requested) {
  if (requested != Backend::kAuto) {
    const BackendEntry* entry = FindBackend(requested);
    if (entry == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("no backend is registered for value ", static_cast<int>(requested)));
    }
    absl::StatusOr<BackendProbe> probe = entry->probe(context);
    if (!probe.ok()) {
      return absl::UnavailableError(
          absl::StrCat("backend '", entry->name, "' is unavailable: ", probe.status().message()));
    }
    return BackendChoice{entry, probe->detail.empty()
                                    ? "requested"
                                    : absl::StrCat("requested (", probe->detail, ")")};
  }
  // Highest priority first; equal priorities in enum order.
  std::vector<const BackendEntry*> order;
  for (const BackendEntry& entry : BackendEntries()) {
    if (entry.auto_priority > 0) order.push_back(&entry);
  }
  std::stable_sort(order.begin(), order.end(), [](const BackendEntry* a, const BackendEntry* b) {
    return a->auto_priority > b->auto_priority;
  });
  std::string passed_over;
  for (const BackendEntry* entry : order) {
    absl::StatusOr<BackendProbe> probe = entry->probe(context);
    if (probe.ok() && probe->auto_eligible) {
      std::string reason = absl::StrCat("auto: ", entry->name);
      if (!probe->detail.empty()) absl::StrAppend(&reason, " (", probe->detail, ")");
      absl::StrAppend(&reason, passed_over);
      return BackendChoice{entry, std::move(reason)};
    }
    absl::StrAppend(&passed_over, "; ", entry->name, ": ",
                    probe.ok() ? probe->auto_declined : probe.status().message());
  }
  return absl::UnavailableError(absl::StrCat("auto: no registered backend can record on device '",
                                             context.device_info().name, "'", passed_over));
}

}  // namespace recq::internal
