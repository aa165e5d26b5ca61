// Bindings: the per-run memory of a recording, by tensor name.
//
// A binding is any cl_mem of the recording's context: the user's own buffer
// (zero copy, like OpenVINO's remote tensors), a recq Tensor, or, for an
// input declared as an image2d or an NV12 frame (recq/preprocess.h), the
// user's image2d or the frame's planes (SetNv12). Bindings
// holds handles only; it neither retains nor validates them. Validation
// happens at Recording::Enqueue, which checks every name, size (an image's
// width, height and format) and context.
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
  // SetNv12 binds the two planes of an NV12 frame to an input preprocessed
  // as ColorFormat::kNv12TwoPlane (recq/preprocess.h): `y` to "NAME/y" and
  // `uv` to "NAME/uv". Both are buffers ([N, H, W, 1] and [N, H/2, W/2, 2]
  // u8) or both image2d (CL_R W x H and CL_RG W/2 x H/2, or CL_RGBA W/4 x
  // H/2 with two UV pairs a texel where CL_RG is missing), as the input
  // declares. A single-plane NV12 frame (one buffer, UV rows at the declared
  // uv_offset) and an image2d of another colour format bind with Set(NAME,
  // mem) like any buffer; Enqueue checks each against the declaration
  // (image or buffer, channel order and type, width and height, context).
  void SetNv12(absl::string_view name, cl_mem y, cl_mem uv);
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
