#include "recq/bindings.h"

namespace recq {

void Bindings::Set(absl::string_view name, cl_mem mem) {
  for (auto& entry : entries_) {
    if (entry.first == name) {
      entry.second = mem;
      return;
    }
  }
  entries_.emplace_back(std::string(name), mem);
}

cl_mem Bindings::Get(absl::string_view name) const {
  for (const auto& entry : entries_) {
    if (entry.first == name) return entry.second;
  }
  return nullptr;
}

}  // namespace recq
