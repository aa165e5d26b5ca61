// One kernel dispatch of a lowered graph: what an op's lowering emits
// (recq/op_registry.h) and what every recording backend replays.
//
// A dispatch names a kernel (a program of the kernel library, or a source an
// application registered, plus build options, and an entry point), its
// global and optional local size, and every argument as an internal buffer,
// a binding slot (per-run memory), a constant (weights), scalar bytes, local
// memory, or a null buffer. Arguments never hold cl_mem handles: backends
// resolve them per recording, which is what makes substitution by slot work.
#ifndef RECQ_DISPATCH_H_
#define RECQ_DISPATCH_H_

#include <CL/cl.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace recq {

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

// A kernel by program (a .cl file of the kernel library, or a registered
// source, plus build options) and entry-point name.
struct KernelRef {
  std::string program;
  std::vector<std::string> options;
  std::string name;
};

struct Dispatch {
  int32_t kernel = -1;  // index into the lowered list's kernels
  cl_uint work_dim = 1;
  std::array<size_t, 3> global = {1, 1, 1};
  std::array<size_t, 3> local = {0, 0, 0};  // all 0: the runtime chooses
  std::vector<DispatchArg> args;
  std::string label;  // "<node name>/<kernel variant>", for errors and profiles
  // Work of one run, for profiles (achieved GFLOP/s and GB/s): floating-point
  // operations (an FMA counts 2) and bytes of global memory the dispatch
  // must move at least. The lowering fills bytes with the node's inputs and
  // outputs when the op's lowering leaves it 0.
  double flops = 0;
  double bytes = 0;

  bool has_local() const { return local[0] != 0; }
};

}  // namespace recq

#endif  // RECQ_DISPATCH_H_
