// The backend-neutral dispatch list: the seam between the engine and the
// recording backends.
//
// Each dispatch names a kernel, its global (and optional local) size, and
// every argument as an internal buffer, a binding slot (per-run memory), a
// constant (weights), scalar bytes, local memory, or a null buffer. Backends
// turn the list into their native recording; they never see graph values.
#ifndef RECQ_ENGINE_DISPATCH_LIST_H_
#define RECQ_ENGINE_DISPATCH_LIST_H_

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "recq/dispatch.h"
#include "recq/tensor.h"

namespace recq::internal {

using ::recq::Dispatch;
using ::recq::DispatchArg;
using ::recq::KernelRef;

// A per-run tensor bound by name.
struct Slot {
  std::string name;
  TensorDesc desc;
  bool is_input = true;
  // Bound to an image2d of [1, H, W, C] (recq/preprocess.h: CL_R, CL_RG,
  // CL_RGBA or CL_BGRA for C = 1, 2, 4; CL_UNORM_INT8 for uint8, CL_FLOAT
  // for float32) rather than a buffer.
  bool image = false;
};

// Where a slot is used: dispatch index and argument index.
struct ArgUse {
  uint32_t dispatch;
  uint32_t arg;
};

struct DispatchList {
  std::vector<KernelRef> kernels;
  std::vector<Dispatch> dispatches;
  std::vector<Slot> slots;                    // inputs first, then outputs
  std::vector<size_t> internal_buffer_bytes;  // planned buffers, one per index
  std::vector<std::shared_ptr<const HostData>> constants;
  size_t unplanned_bytes = 0;  // sum of intermediate tensors before planning
};

}  // namespace recq::internal

#endif  // RECQ_ENGINE_DISPATCH_LIST_H_
