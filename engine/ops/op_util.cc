#include "engine/ops/op_util.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace recq::internal {

absl::Status Bad(OpType op, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(OpTypeName(op), ": ", what));
}

std::string S(const Shape& s) { return absl::StrCat("[", absl::StrJoin(s, ","), "]"); }

absl::Status CheckInputCount(OpType op, InferInputs in, size_t required, size_t max) {
  if (in.size() < required || in.size() > max) {
    return Bad(op, absl::StrCat("takes ", required == max ? "" : "between ", required,
                                required == max ? "" : absl::StrCat(" and ", max), " inputs, got ",
                                in.size()));
  }
  for (size_t i = 0; i < required; ++i) {
    if (in[i] == nullptr) return Bad(op, absl::StrCat("input ", i, " is required"));
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> NormalizeAxis(OpType op, int64_t axis, int64_t rank, bool allow_rank) {
  int64_t hi = allow_rank ? rank : rank - 1;
  if (axis < -rank || axis > hi) {
    return Bad(op, absl::StrCat("axis ", axis, " is out of range for rank ", rank));
  }
  return axis < 0 ? axis + rank : axis;
}

absl::StatusOr<Shape> Broadcast(OpType op, const Shape& a, const Shape& b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      return Bad(op, absl::StrCat("shapes ", S(a), " and ", S(b), " do not broadcast"));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

absl::StatusOr<int64_t> WindowOutput(OpType op, int64_t in, int64_t pad_begin, int64_t pad_end,
                                     int64_t kernel, int64_t stride, int64_t dilation,
                                     bool ceil_mode) {
  constexpr int64_t kMax = int64_t{1} << 31;
  if (stride <= 0 || dilation <= 0 || kernel <= 0 || pad_begin < 0 || pad_end < 0 ||
      stride > kMax || dilation > kMax || kernel > kMax || pad_begin > kMax || pad_end > kMax) {
    return Bad(op,
               "kernel, strides and dilations must be positive and pads non-negative, all "
               "below 2^31");
  }
  int64_t span = (kernel - 1) * dilation + 1;
  int64_t room = in + pad_begin + pad_end - span;
  if (room < 0) {
    return Bad(op, absl::StrCat("window of ", span, " does not fit input ", in, " with pads ",
                                pad_begin, "+", pad_end));
  }
  int64_t out = (ceil_mode ? (room + stride - 1) / stride : room / stride) + 1;
  // A window must start inside the input or the leading padding.
  if (ceil_mode && (out - 1) * stride >= in + pad_begin) --out;
  return out;
}

const Shape& ShapeOf(const LoweringContext& ctx, ValueId id) {
  return ctx.graph().value(id).desc.shape;
}

int64_t Product(const Shape& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < s.size(); ++i) p *= s[i];
  return p;
}

Dispatch MakeDispatch(LoweringContext& ctx, const std::string& program, const std::string& kernel,
                      std::initializer_list<size_t> global, std::vector<std::string> options) {
  Dispatch d;
  d.kernel = ctx.Kernel(program, kernel, std::move(options));
  d.work_dim = static_cast<cl_uint>(global.size());
  std::copy(global.begin(), global.end(), d.global.begin());
  d.label = kernel;
  return d;
}

void AddInts(Dispatch& d, std::initializer_list<int64_t> values) {
  for (int64_t v : values) d.args.push_back(DispatchArg::Scalar(static_cast<cl_int>(v)));
}

void AddActivation(Dispatch& d, const Activation& act) {
  d.args.push_back(DispatchArg::Scalar(static_cast<cl_int>(act.kind)));
  d.args.push_back(DispatchArg::Scalar(act.alpha));
  d.args.push_back(DispatchArg::Scalar(act.beta));
}

std::string FixedActivationOption(const Activation& act) {
  return absl::StrCat("-DRECQ_ACT_FIXED=", static_cast<int>(act.kind));
}

void AddFusedActivation(LoweringContext& ctx, Dispatch& d, const Node& node) {
  AddActivation(d, node.fused);
  ctx.MarkActivationApplied();
}

cl_int8 Pad8(const Shape& s, int64_t fill) {
  cl_int8 v;
  size_t lead = 8 - s.size();
  for (size_t i = 0; i < 8; ++i) v.s[i] = static_cast<cl_int>(i < lead ? fill : s[i - lead]);
  return v;
}

Shape RowMajor(const Shape& s) {
  Shape strides(s.size());
  int64_t stride = 1;
  for (size_t i = s.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= s[i];
  }
  return strides;
}

cl_int8 BroadcastStrides(const Shape& in, const Shape& out) {
  return BroadcastStrides(in, RowMajor(in), out);
}

cl_int8 BroadcastStrides(const Shape& in, const Shape& strides, const Shape& out) {
  cl_int8 v;
  for (int i = 0; i < 8; ++i) v.s[i] = 0;
  for (size_t k = 0; k < in.size(); ++k) {
    size_t i = in.size() - 1 - k;  // dimension of `in`, from the back
    size_t slot = 7 - k;
    v.s[slot] = static_cast<cl_int>(in[i] == 1 && out[out.size() - 1 - k] != 1 ? 0 : strides[i]);
  }
  return v;
}

std::vector<int64_t> TransposePerm(const TransposeAttrs& a, size_t rank) {
  std::vector<int64_t> perm = a.perm;
  if (perm.empty()) {
    perm.resize(rank);
    for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(rank - 1 - i);
  }
  return perm;
}

Shape Permuted(const Shape& shape, const std::vector<int64_t>& perm) {
  if (perm.empty()) return shape;
  Shape t(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) t[i] = shape[size_t(perm[i])];
  return t;
}

std::vector<int64_t> ChannelsLastPerm(size_t rank) {
  std::vector<int64_t> perm = {0};
  for (size_t d = 2; d < rank; ++d) perm.push_back(static_cast<int64_t>(d));
  perm.push_back(1);
  return perm;
}

std::vector<int64_t> ChannelsFirstPerm(size_t rank) {
  std::vector<int64_t> perm = {0, static_cast<int64_t>(rank) - 1};
  for (size_t d = 1; d + 1 < rank; ++d) perm.push_back(static_cast<int64_t>(d));
  return perm;
}

void SetRange(Dispatch& d, std::array<size_t, 3> global, std::array<size_t, 3> local) {
  d.work_dim = 3;
  for (int i = 0; i < 3; ++i) {
    d.local[i] = local[i];
    d.global[i] = (global[i] + local[i] - 1) / local[i] * local[i];
  }
}

std::array<size_t, 3> WorkGroupFor(std::array<size_t, 3> global, size_t target) {
  std::array<size_t, 3> local = {1, 1, 1};
  size_t left = std::max<size_t>(target, 1);
  for (int i = 0; i < 3; ++i) {
    local[i] = std::max<size_t>(1, std::min(global[i], left));
    left = std::max<size_t>(1, left / local[i]);
  }
  return local;
}

size_t GroupForRow(const DeviceFacts& device, int64_t n, size_t lo, size_t hi) {
  size_t g = lo;
  while (g < static_cast<size_t>(n) && g < hi) g *= 2;
  while (device.max_work_group_size != 0 && g > device.max_work_group_size && g > 1) g /= 2;
  return g;
}

size_t GpuGroup(const DeviceFacts& device, size_t want) {
  size_t g = want;
  while (device.max_work_group_size != 0 && g > device.max_work_group_size && g > 1) g /= 2;
  return g;
}

absl::StatusOr<int64_t> Param(const LoweringContext& ctx, const Node& node, const std::string& name,
                              int64_t heuristic, std::initializer_list<int64_t> allowed) {
  const int64_t value = ctx.ParamOr(name, heuristic);
  if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return value;
  return absl::InvalidArgumentError(absl::StrCat("node '", node.name, "': kernel parameter ", name,
                                                 "=", value, " is not one of ",
                                                 absl::StrJoin(allowed, ", ")));
}

absl::StatusOr<int64_t> ParamInRange(const LoweringContext& ctx, const Node& node,
                                     const std::string& name, int64_t heuristic, int64_t lo,
                                     int64_t hi) {
  const int64_t value = ctx.ParamOr(name, heuristic);
  if (value >= lo && value <= hi) return value;
  return absl::InvalidArgumentError(absl::StrCat("node '", node.name, "': kernel parameter ", name,
                                                 "=", value, " is not in [", lo, ", ", hi, "]"));
}

std::vector<KernelParams> ParamSpace(
    const KernelParams& heuristic,
    const std::vector<std::pair<std::string, std::vector<int64_t>>>& values) {
  std::vector<KernelParams> space = {heuristic};
  auto add = [&space](const KernelParams& p) {
    if (std::find(space.begin(), space.end(), p) == space.end()) space.push_back(p);
  };
  for (const auto& [name, options] : values) {
    for (int64_t v : options) {
      KernelParams p = heuristic;
      p[name] = v;
      add(p);
    }
  }
  std::vector<KernelParams> product = {KernelParams{}};
  for (const auto& [name, options] : values) {
    std::vector<KernelParams> next;
    for (const KernelParams& p : product) {
      for (int64_t v : options) {
        KernelParams q = p;
        q[name] = v;
        next.push_back(std::move(q));
      }
    }
    product = std::move(next);
  }
  for (const KernelParams& p : product) add(p);
  return space;
}

void EmitActivation(LoweringContext& ctx, ValueId x, ValueId y, const Activation& act) {
  const TensorDesc& desc = ctx.graph().value(y).desc;
  Dispatch& d =
      ctx.Emit(MakeDispatch(ctx, "activation.cl", "activation", {size_t(desc.NumElements())}));
  d.args = {ctx.Arg(x), ctx.Arg(y)};
  AddActivation(d, act);
}

void EmitCopy(LoweringContext& ctx, DispatchArg from, DispatchArg to, int64_t elements) {
  Dispatch& d = ctx.Emit(MakeDispatch(ctx, "copy.cl", "copy", {size_t(elements)}));
  d.args = {std::move(from), std::move(to)};
}

void EmitCopyOf(LoweringContext& ctx, DispatchArg from, DispatchArg to, const TensorDesc& desc) {
  const size_t bytes = desc.ByteSize();
  const bool words = bytes % 4 == 0;
  Dispatch& d = ctx.Emit(MakeDispatch(ctx, "copy.cl", words ? "copy_words" : "copy_bytes",
                                      {words ? bytes / 4 : bytes}));
  d.args = {std::move(from), std::move(to)};
}

absl::Status Unsupported(const Node& node, const std::string& what) {
  return absl::UnimplementedError(absl::StrCat("node '", node.name, "' (", OpTypeName(node.op),
                                               "): ", what, " is not supported"));
}

}  // namespace recq::internal
