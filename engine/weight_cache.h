// WeightCache: device copies of constants shared by several engines of one
// context (the buckets of a ShapedEngine, recq/shaped_engine.h).
//
// An engine compiled with a cache (CompileEngineState's `weights`) takes
// each constant's buffer from it instead of uploading its own: by the
// HostData's identity first (imports of one OnnxModel share initializers),
// then by content (a pass or an op's lowering that derives the same
// constant again, such as a transposed weight, makes a new HostData with
// equal bytes). Thread-safe; the buffers live as long as the cache or an
// engine holding them.
#ifndef RECQ_ENGINE_WEIGHT_CACHE_H_
#define RECQ_ENGINE_WEIGHT_CACHE_H_

#include <CL/cl.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "backends/opencl/cl_handle.h"
#include "recq/data_type.h"

namespace recq::internal {

class WeightCache {
 public:
  // Get returns a new reference to a read-only buffer of `context` holding
  // `data` (at least 4 bytes, zero-padded), uploading it the first time.
  [[nodiscard]] absl::StatusOr<cl::UniqueMem> Get(cl_context context,
                                                  const std::shared_ptr<const HostData>& data);

  // Bytes uploaded so far (each distinct constant once), and the requests
  // answered without an upload.
  size_t uploaded_bytes() const;
  size_t uploads() const;
  size_t hits() const;

 private:
  struct Entry {
    std::shared_ptr<const HostData> data;
    cl::UniqueMem mem;
  };
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Entry>> entries_;                    // guarded by mu_
  absl::flat_hash_map<const HostData*, Entry*> by_identity_;       // guarded by mu_
  absl::flat_hash_map<uint64_t, std::vector<Entry*>> by_content_;  // guarded by mu_
  size_t uploaded_bytes_ = 0;
  size_t hits_ = 0;
};

// UploadConstant creates a read-only buffer of `context` holding `data`
// (at least 4 bytes, zero-padded); `*bytes` gets its size.
[[nodiscard]] absl::StatusOr<cl::UniqueMem> UploadConstant(cl_context context, const HostData& data,
                                                           size_t* bytes);

}  // namespace recq::internal

#endif  // RECQ_ENGINE_WEIGHT_CACHE_H_
