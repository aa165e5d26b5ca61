#include "recq/bindings.h"

#include "absl/strings/str_cat.h"

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

void Bindings::SetNv12(absl::string_view name, cl_mem y, cl_mem uv) {
  Set(absl::StrCat(name, "/y"), y);
  Set(absl::StrCat(name, "/uv"), uv);
}

cl_mem Bindings::Get(absl::string_view name) const {
  for (const auto& entry : entries_) {
    if (entry.first == name) return entry.second;
  }
  return nullptr;
}

}  // namespace recq
