#include "engine/weight_cache.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "backends/opencl/cl_error.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

uint64_t ContentHash(const HostData& data) {
  return absl::HashOf(static_cast<int>(data.dtype()),
                      absl::string_view(static_cast<const char*>(data.bytes()), data.byte_size()));
}

bool SameContent(const HostData& a, const HostData& b) {
  return a.dtype() == b.dtype() && a.byte_size() == b.byte_size() &&
         (a.byte_size() == 0 || std::memcmp(a.bytes(), b.bytes(), a.byte_size()) == 0);
}

}  // namespace

absl::StatusOr<cl::UniqueMem> UploadConstant(cl_context context, const HostData& data,
                                             size_t* bytes) {
  // An empty constant still gets a (minimal) buffer to bind.
  *bytes = std::max<size_t>(data.byte_size(), sizeof(float));
  std::vector<uint8_t> padded;
  const void* host = data.bytes();
  if (data.byte_size() < *bytes) {
    padded.assign(*bytes, 0);
    if (data.byte_size() != 0) std::memcpy(padded.data(), host, data.byte_size());
    host = padded.data();
  }
  cl_int err = CL_SUCCESS;
  cl::UniqueMem mem(clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, *bytes,
                                   const_cast<void*>(host), &err));
  RECQ_RETURN_IF_ERROR(
      cl::CheckCl(err, absl::StrCat("clCreateBuffer(weights, ", *bytes, " bytes)")));
  return mem;
}

absl::StatusOr<cl::UniqueMem> WeightCache::Get(cl_context context,
                                               const std::shared_ptr<const HostData>& data) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry* entry = nullptr;
  if (auto it = by_identity_.find(data.get()); it != by_identity_.end()) entry = it->second;
  if (entry == nullptr) {
    std::vector<Entry*>& same_hash = by_content_[ContentHash(*data)];
    for (Entry* e : same_hash) {
      if (SameContent(*e->data, *data)) entry = e;
    }
    if (entry == nullptr) {
      size_t bytes = 0;
      RECQ_ASSIGN_OR_RETURN(cl::UniqueMem mem, UploadConstant(context, *data, &bytes));
      entries_.push_back(std::make_unique<Entry>(Entry{data, std::move(mem)}));
      entry = entries_.back().get();
      same_hash.push_back(entry);
      uploaded_bytes_ += bytes;
    } else {
      ++hits_;
    }
    // The entry keeps its first HostData alive; this one is an alias of it
    // only while `data` lives, so key it by identity only if it is the same.
    if (entry->data == data) by_identity_[data.get()] = entry;
  } else {
    ++hits_;
  }
  return cl::UniqueMem::RetainFrom(entry->mem.get());
}

size_t WeightCache::uploaded_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return uploaded_bytes_;
}

size_t WeightCache::uploads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

size_t WeightCache::hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hits_;
}

}  // namespace recq::internal
