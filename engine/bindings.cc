#include "recq/bindings.h"

#include "absl/strings/str_cat.h"

namespace recq {

Bindings::Entry& Bindings::Slot(absl::string_view name) {
  for (Entry& entry : entries_) {
    if (entry.name == name) return entry;
  }
  entries_.emplace_back();
  entries_.back().name = std::string(name);
  return entries_.back();
}

void Bindings::Set(absl::string_view name, cl_mem mem) {
  Entry& entry = Slot(name);
  entry = Entry{entry.name, mem, false, nullptr, 0, 0, Tensor()};
}

void Bindings::Set(absl::string_view name, const Tensor& tensor) {
  Set(name, tensor.mem());
  Slot(name).tensor = tensor;
}

void Bindings::SetNv12(absl::string_view name, cl_mem y, cl_mem uv) {
  Set(absl::StrCat(name, "/y"), y);
  Set(absl::StrCat(name, "/uv"), uv);
}

void Bindings::SetSvm(absl::string_view name, void* allocation, size_t bytes, size_t offset) {
  Entry& entry = Slot(name);
  entry = Entry{entry.name, nullptr, true, allocation, bytes, offset, Tensor()};
}

cl_mem Bindings::Get(absl::string_view name) const {
  for (const Entry& entry : entries_) {
    if (entry.name == name) return entry.mem;
  }
  return nullptr;
}

}  // namespace recq
