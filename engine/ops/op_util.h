// Helpers shared by the op files under engine/ops/: shape checks for
// inference, and launch-shape and argument helpers for lowering.
#ifndef RECQ_ENGINE_OPS_OP_UTIL_H_
#define RECQ_ENGINE_OPS_OP_UTIL_H_

#include <CL/cl.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "recq/op_registry.h"

namespace recq::internal {

using Shape = std::vector<int64_t>;

// The newest default-domain opset whose semantics the built-in ONNX
// mappings follow.
inline constexpr int64_t kOnnxOpsetMax = 21;

// --- inference ---

// Bad returns InvalidArgument "<Op>: <what>".
absl::Status Bad(OpType op, const std::string& what);
// S renders a shape as "[1,3,224,224]".
std::string S(const Shape& s);

// AttrsOf returns the op's attribute struct: the held T, a default T when
// the node carries none, InvalidArgument when it carries another kind.
template <typename T>
absl::StatusOr<const T*> AttrsOf(OpType op, const OpAttrs& attrs) {
  if (attrs.empty()) {
    static const T kDefault{};
    return &kDefault;
  }
  if (const T* a = attrs.get_if<T>()) return a;
  return Bad(op, "attributes of the wrong kind for this op");
}

// AttrsOr returns the node's T, or a default T when it carries none (the
// node passed inference, so it carries no other kind).
template <typename T>
const T& AttrsOr(const Node& node) {
  static const T kDefault{};
  const T* a = node.attrs.get_if<T>();
  return a ? *a : kDefault;
}

// CheckInputCount checks required <= count <= max and that the required
// inputs are present.
absl::Status CheckInputCount(OpType op, InferInputs in, size_t required, size_t max);
// NormalizeAxis maps axis in [-rank, rank) (or [-rank, rank] with
// allow_rank) to a non-negative one.
absl::StatusOr<int64_t> NormalizeAxis(OpType op, int64_t axis, int64_t rank, bool allow_rank);
// Broadcast returns the numpy broadcast of two shapes.
absl::StatusOr<Shape> Broadcast(OpType op, const Shape& a, const Shape& b);
// WindowOutput returns a sliding window's output size along one dimension.
absl::StatusOr<int64_t> WindowOutput(OpType op, int64_t in, int64_t pad_begin, int64_t pad_end,
                                     int64_t kernel, int64_t stride, int64_t dilation,
                                     bool ceil_mode);

// --- lowering ---

const Shape& ShapeOf(const LoweringContext& ctx, ValueId id);
int64_t Product(const Shape& s, size_t begin, size_t end);
inline size_t CeilDiv(int64_t a, int64_t b) { return static_cast<size_t>((a + b - 1) / b); }
inline size_t RoundUp(size_t a, size_t b) { return (a + b - 1) / b * b; }

// MakeDispatch returns a dispatch of `kernel` in `program` over `global`,
// labelled with the kernel's name.
Dispatch MakeDispatch(LoweringContext& ctx, const std::string& program, const std::string& kernel,
                      std::initializer_list<size_t> global, std::vector<std::string> options = {});

void AddInts(Dispatch& d, std::initializer_list<int64_t> values);
// AddActivation appends the (code, alpha, beta) arguments of the kernels'
// fused activation epilogue (RECQ_ACT_* in kernels/common/common.cl).
void AddActivation(Dispatch& d, const Activation& act);

// FixedActivationOption: the build option that fixes the activation a
// kernel's recq_activate calls apply (common.cl's RECQ_ACT_FIXED), for
// kernels that apply `act` in unrolled loops.
std::string FixedActivationOption(const Activation& act);

// AddFusedActivation appends the node's own fused activation and tells the
// context the kernel applies it.
void AddFusedActivation(LoweringContext& ctx, Dispatch& d, const Node& node);

// Pad8 pads a shape to rank 8 in front with `fill`.
cl_int8 Pad8(const Shape& s, int64_t fill);
// RowMajor returns the element strides of a contiguous tensor of shape `s`.
Shape RowMajor(const Shape& s);
// BroadcastStrides returns the element strides of `in` broadcast to `out`
// (0 on broadcast dimensions), padded to rank 8; with `strides`, of a view
// of shape `in` whose dimensions step by those (else `in` is contiguous).
cl_int8 BroadcastStrides(const Shape& in, const Shape& out);
cl_int8 BroadcastStrides(const Shape& in, const Shape& strides, const Shape& out);
// TransposePerm returns a Transpose's permutation of rank `rank` (an empty
// perm reverses the dimensions).
std::vector<int64_t> TransposePerm(const TransposeAttrs& a, size_t rank);
// Permuted returns `shape` transposed by `perm` (dimension i of the result
// is shape[perm[i]]; `shape` as it is where `perm` is empty).
Shape Permuted(const Shape& shape, const std::vector<int64_t>& perm);
// ChannelsLastPerm: the permutation from [N, C, spatial...] to
// [N, spatial..., C] at `rank`; ChannelsFirstPerm: its inverse.
std::vector<int64_t> ChannelsLastPerm(size_t rank);
std::vector<int64_t> ChannelsFirstPerm(size_t rank);

// SetRange sets `d`'s global size to `global` rounded up to multiples of
// `local`, in 3 dimensions.
void SetRange(Dispatch& d, std::array<size_t, 3> global, std::array<size_t, 3> local);
// WorkGroupFor returns a local size of about `target` work-items (fewer when
// the range is smaller), filling dimension 0, then 1, then 2: PoCL runs a
// work-group as one loop, so its per-group cost is paid once per `target`
// work-items while 2 cores still get many groups each.
std::array<size_t, 3> WorkGroupFor(std::array<size_t, 3> global, size_t target);
// GroupForRow returns the smallest power of two >= n, within [lo, hi] and at
// most the device's maximum work-group size.
size_t GroupForRow(const DeviceFacts& device, int64_t n, size_t lo, size_t hi);
// GpuGroup caps a local size of the flattened GPU kernels by the device.
size_t GpuGroup(const DeviceFacts& device, size_t want);

// Param returns the parameter `name` chosen for the node being lowered
// (LoweringContext::params()), or `heuristic` when none was chosen.
// InvalidArgument naming the node and the allowed values when the chosen
// value is not in `allowed`.
[[nodiscard]] absl::StatusOr<int64_t> Param(const LoweringContext& ctx, const Node& node,
                                            const std::string& name, int64_t heuristic,
                                            std::initializer_list<int64_t> allowed);

// The same for a parameter that may take any value in [lo, hi].
[[nodiscard]] absl::StatusOr<int64_t> ParamInRange(const LoweringContext& ctx, const Node& node,
                                                   const std::string& name, int64_t heuristic,
                                                   int64_t lo, int64_t hi);

// ParamSpace lists a variant's tuning space: `heuristic` first, then every
// set that changes one parameter of it to another of its `values`, then the
// rest of the cross product of `values`, without repeats. Each parameter of
// `heuristic` must have an entry in `values`.
std::vector<KernelParams> ParamSpace(
    const KernelParams& heuristic,
    const std::vector<std::pair<std::string, std::vector<int64_t>>>& values);

// EmitActivation emits the element-wise activation kernel x -> y.
void EmitActivation(LoweringContext& ctx, ValueId x, ValueId y, const Activation& act);
// EmitCopy emits a copy of `elements` floats.
void EmitCopy(LoweringContext& ctx, DispatchArg from, DispatchArg to, int64_t elements);
// EmitCopyOf emits a copy of a tensor of `desc`, of any element type.
void EmitCopyOf(LoweringContext& ctx, DispatchArg from, DispatchArg to, const TensorDesc& desc);

// Unsupported returns Unimplemented "node 'n' (Op): <what> is not supported".
absl::Status Unsupported(const Node& node, const std::string& what);

}  // namespace recq::internal

#endif  // RECQ_ENGINE_OPS_OP_UTIL_H_
