// Bindings: the per-run memory of a recording, by tensor name.
//
// A binding is any cl_mem of the recording's context: the user's own buffer
// (zero copy, like OpenVINO's remote tensors) or a recq Tensor. Bindings
// holds handles only; it neither retains nor validates them. Validation
// happens at Recording::Enqueue, which checks every name, size and context.
// The memory must stay alive until the run that uses it has completed.
#ifndef RECQ_BINDINGS_H_
#define RECQ_BINDINGS_H_

#include <CL/cl.h>

#include <string>
#include <utility>
#include <vector>
#include "absl/strings/string_view.h"

#include "recq/tensor.h"

namespace recq {

class Bindings {
 public:
  // Set binds `name` to `mem`, replacing an earlier binding of that name.
  void Set(absl::string_view name, cl_mem mem);
  void Set(absl::string_view name, const Tensor& tensor) { Set(name, tensor.mem()); }
  // Get returns the memory bound to `name`, or nullptr.
  cl_mem Get(absl::string_view name) const;
  void Clear() { entries_.clear(); }

  const std::vector<std::pair<std::string, cl_mem>>& entries() const { return entries_; }

 private:
  // A handful of entries: a vector beats a hash map here.
  std::vector<std::pair<std::string, cl_mem>> entries_;
};

}  // namespace recq

#endif  // RECQ_BINDINGS_H_
