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

#include "recq/tensor.h"

namespace recq::internal {

struct DispatchArg {
  enum class Kind { kInternal, kSlot, kConstant, kScalar, kLocal, kNull };
  Kind kind = Kind::kNull;
  int32_t index = -1;          // internal buffer, slot or constant index
  std::vector<uint8_t> bytes;  // kScalar
  size_t local_bytes = 0;      // kLocal

  static DispatchArg Internal(int32_t i) { return {Kind::kInternal, i, {}, 0}; }
  static DispatchArg Slot(int32_t i) { return {Kind::kSlot, i, {}, 0}; }
  static DispatchArg Constant(int32_t i) { return {Kind::kConstant, i, {}, 0}; }
  static DispatchArg Null() { return {Kind::kNull, -1, {}, 0}; }
  static DispatchArg Local(size_t bytes) { return {Kind::kLocal, -1, {}, bytes}; }
  template <typename T>
  static DispatchArg Scalar(const T& value) {
    DispatchArg arg{Kind::kScalar, -1, std::vector<uint8_t>(sizeof(T)), 0};
    std::memcpy(arg.bytes.data(), &value, sizeof(T));
    return arg;
  }
};

// A kernel by program (a .cl file of the kernel library plus build options)
// and entry-point name.
struct KernelRef {
  std::string program;
  std::vector<std::string> options;
  std::string name;
};

struct Dispatch {
  int32_t kernel = -1;  // index into DispatchList::kernels
  cl_uint work_dim = 1;
  std::array<size_t, 3> global = {1, 1, 1};
  std::array<size_t, 3> local = {0, 0, 0};  // all 0: the runtime chooses
  std::vector<DispatchArg> args;
  std::string label;  // "<node name>/<kernel>", for errors and profiles

  bool has_local() const { return local[0] != 0; }
};

// A per-run tensor bound by name.
struct Slot {
  std::string name;
  TensorDesc desc;
  bool is_input = true;
};

struct DispatchList {
  std::vector<KernelRef> kernels;
  std::vector<Dispatch> dispatches;
  std::vector<Slot> slots;                    // inputs first, then outputs
  std::vector<size_t> internal_buffer_bytes;  // planned buffers, one per index
  std::vector<std::shared_ptr<const std::vector<float>>> constants;
  size_t unplanned_bytes = 0;  // sum of intermediate tensors before planning
};

}  // namespace recq::internal

#endif  // RECQ_ENGINE_DISPATCH_LIST_H_
