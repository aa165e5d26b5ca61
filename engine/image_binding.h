// Validation of image2d bindings (recq/preprocess.h) at Enqueue.
#ifndef RECQ_ENGINE_IMAGE_BINDING_H_
#define RECQ_ENGINE_IMAGE_BINDING_H_

#include <CL/cl.h>

#include "absl/status/status.h"
#include "engine/dispatch_list.h"

namespace recq::internal {

// MemObjectTypeName renders "a buffer", "an image2d"... for messages.
const char* MemObjectTypeName(cl_mem_object_type type);

// CheckImageBinding checks that `mem` (of type `type`) is an image2d of the
// format and size image slot `slot` declares ([1, H, W, C]: CL_R, CL_RG or
// CL_RGBA of half the width, CL_RGBA or CL_BGRA for C = 1, 2, 4;
// CL_UNORM_INT8 for uint8, CL_FLOAT for float32) and readable by kernels;
// InvalidArgument naming the binding otherwise.
[[nodiscard]] absl::Status CheckImageBinding(const Slot& slot, cl_mem mem, cl_mem_object_type type);

}  // namespace recq::internal

#endif  // RECQ_ENGINE_IMAGE_BINDING_H_
