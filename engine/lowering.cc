#include "engine/lowering.h"

#include <CL/cl.h>

#include <algorithm>
#include <array>
#include <memory>
#include <numeric>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "engine/status_macros.h"

namespace recq::internal {

namespace {

using Shape = std::vector<int64_t>;

bool IsAliasOp(OpType op) {
  return op == OpType::kReshape || op == OpType::kFlatten || op == OpType::kIdentity;
}

int64_t Product(const Shape& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < s.size(); ++i) p *= s[i];
  return p;
}

// Where a graph value lives.
struct Storage {
  enum class Kind { kNone, kSlot, kConstant, kTensor };
  Kind kind = Kind::kNone;
  int32_t index = -1;  // slot, constant, or planned tensor index
};

cl_int8 Pad8(const Shape& s, int64_t fill) {
  cl_int8 v;
  size_t lead = 8 - s.size();
  for (size_t i = 0; i < 8; ++i) v.s[i] = static_cast<cl_int>(i < lead ? fill : s[i - lead]);
  return v;
}

// Element strides of `in` broadcast to `out` (0 on broadcast dimensions),
// padded to rank 8.
cl_int8 BroadcastStrides(const Shape& in, const Shape& out) {
  cl_int8 v;
  for (int i = 0; i < 8; ++i) v.s[i] = 0;
  int64_t stride = 1;
  for (size_t k = 0; k < in.size(); ++k) {
    size_t i = in.size() - 1 - k;  // dimension of `in`, from the back
    size_t slot = 7 - k;
    v.s[slot] = static_cast<cl_int>(in[i] == 1 && out[out.size() - 1 - k] != 1 ? 0 : stride);
    stride *= in[i];
  }
  return v;
}

int ActCode(ActivationKind kind) { return static_cast<int>(kind); }

class Lowerer {
 public:
  Lowerer(const Graph& graph, const LoweringTarget& target) : graph_(graph), target_(target) {}

  absl::StatusOr<Lowered> Run() {
    AssignSlotsAndConstants();
    AliasThroughShapeOps();
    FuseResidualAdds();
    PlaceTensors();
    for (size_t n = 0; n < graph_.nodes().size(); ++n) {
      RECQ_RETURN_IF_ERROR(LowerNode(static_cast<int>(n)));
    }
    RECQ_RETURN_IF_ERROR(CopyPinnedOutputs());
    out_.list.unplanned_bytes = unplanned_bytes_;
    return std::move(out_);
  }

 private:
  DispatchList& list() { return out_.list; }

  // --- storage ---

  int Find(int v) {
    while (parent_[v] != v) v = parent_[v] = parent_[parent_[v]];
    return v;
  }

  void AssignSlotsAndConstants() {
    const auto& values = graph_.values();
    parent_.resize(values.size());
    std::iota(parent_.begin(), parent_.end(), 0);
    pin_.assign(values.size(), Storage{});
    for (ValueId id : graph_.inputs()) {
      pin_[id] = {Storage::Kind::kSlot, static_cast<int32_t>(list().slots.size())};
      list().slots.push_back({values[id].name, values[id].desc, true});
    }
    for (ValueId id = 0; id < static_cast<ValueId>(values.size()); ++id) {
      if (values[id].kind == Value::Kind::kConstant) {
        pin_[id] = {Storage::Kind::kConstant, static_cast<int32_t>(list().constants.size())};
        list().constants.push_back(values[id].data);
      }
    }
    for (ValueId id : graph_.outputs()) {
      Storage slot{Storage::Kind::kSlot, static_cast<int32_t>(list().slots.size())};
      list().slots.push_back({values[id].name, values[id].desc, false});
      if (pin_[id].kind == Storage::Kind::kNone) {
        pin_[id] = slot;
      } else {
        // An input or constant that is also an output: copied at the end.
        pinned_outputs_.push_back({id, slot});
      }
    }
  }

  void AliasThroughShapeOps() {
    alias_node_.assign(graph_.nodes().size(), false);
    for (size_t n = 0; n < graph_.nodes().size(); ++n) {
      const Node& node = graph_.nodes()[n];
      if (!IsAliasOp(node.op) || node.fused.kind != ActivationKind::kNone) continue;
      int a = Find(node.inputs[0]);
      int b = Find(node.outputs[0]);
      bool a_pinned = pin_[a].kind != Storage::Kind::kNone;
      bool b_pinned = pin_[b].kind != Storage::Kind::kNone;
      if (a_pinned && b_pinned) continue;  // both ends fixed: a copy
      if (b_pinned) std::swap(a, b);
      parent_[b] = a;  // the root keeps the pin, if any
      alias_node_[n] = true;
    }
  }

  // FuseResidualAdds finds each pointwise conv (no fused activation) whose
  // only use is an Add of equal shapes right after it (MobileNet V2's
  // projection + residual): the conv (conv2d_pointwise_gpu, or
  // conv2d_pointwise for the CPU variants) then adds the other operand and
  // applies the Add's activation itself, and the Add and the conv's own
  // output disappear. One dispatch and one tensor pass fewer.
  void FuseResidualAdds() {
    const auto& nodes = graph_.nodes();
    residual_add_of_.assign(nodes.size(), -1);
    fused_into_conv_.assign(nodes.size(), false);
    fused_away_.assign(graph_.values().size(), false);
    std::vector<int> uses(graph_.values().size(), 0);
    for (const Node& node : nodes) {
      for (ValueId id : node.inputs) {
        if (id != kNoValue) ++uses[id];
      }
    }
    for (ValueId id : graph_.outputs()) ++uses[id];
    for (size_t n = 0; n + 1 < nodes.size(); ++n) {
      const Node& conv = nodes[n];
      const Node& add = nodes[n + 1];
      if (conv.op != OpType::kConv2D || add.op != OpType::kAdd || alias_node_[n + 1]) continue;
      if (conv.fused.kind != ActivationKind::kNone) continue;
      if (ChooseConvVariant(conv) != ConvVariant::kPointwise) continue;
      const ValueId v = conv.outputs[0];
      if (uses[v] != 1 || pin_[Find(v)].kind != Storage::Kind::kNone) continue;
      if (add.inputs.size() != 2 || (add.inputs[0] == v) == (add.inputs[1] == v)) continue;
      const Shape& shape = graph_.value(v).desc.shape;
      if (graph_.value(add.inputs[0]).desc.shape != shape ||
          graph_.value(add.inputs[1]).desc.shape != shape ||
          graph_.value(add.outputs[0]).desc.shape != shape) {
        continue;
      }
      residual_add_of_[n] = static_cast<int>(n + 1);
      fused_into_conv_[n + 1] = true;
      fused_away_[v] = true;
    }
  }

  void PlaceTensors() {
    const auto& values = graph_.values();
    const auto& nodes = graph_.nodes();
    // One planned tensor per unpinned class of intermediates.
    absl::flat_hash_map<int, int> tensor_of_root;
    std::vector<TensorLifetime> lifetimes;
    auto touch = [&](ValueId id, int step) {
      int root = Find(id);
      if (pin_[root].kind != Storage::Kind::kNone) return;
      auto [it, inserted] = tensor_of_root.try_emplace(root, static_cast<int>(lifetimes.size()));
      if (inserted) {
        lifetimes.push_back({values[root].desc.ByteSize(), step, step});
        unplanned_bytes_ += values[root].desc.ByteSize();
      }
      TensorLifetime& life = lifetimes[it->second];
      life.first = std::min(life.first, step);
      life.last = std::max(life.last, step);
    };
    for (size_t n = 0; n < nodes.size(); ++n) {
      for (ValueId id : nodes[n].inputs) {
        if (id != kNoValue && !fused_away_[id]) touch(id, static_cast<int>(n));
      }
      if (residual_add_of_[n] >= 0) {
        // The conv writes the Add's output: it is live from the conv on, so
        // it never shares memory with the conv's inputs.
        touch(nodes[residual_add_of_[n]].outputs[0], static_cast<int>(n));
      } else if (!fused_away_[nodes[n].outputs[0]]) {
        touch(nodes[n].outputs[0], static_cast<int>(n));
      }
    }
    out_.plan = PlanMemory(lifetimes);
    list().internal_buffer_bytes = out_.plan.buffer_bytes;
    storage_.assign(values.size(), Storage{});
    for (ValueId id = 0; id < static_cast<ValueId>(values.size()); ++id) {
      int root = Find(id);
      if (pin_[root].kind != Storage::Kind::kNone) {
        storage_[id] = pin_[root];
      } else if (auto it = tensor_of_root.find(root); it != tensor_of_root.end()) {
        storage_[id] = {Storage::Kind::kTensor, out_.plan.buffer_of[it->second]};
      }
    }
  }

  DispatchArg Arg(ValueId id) const {
    if (id == kNoValue) return DispatchArg::Null();
    const Storage& s = storage_[id];
    switch (s.kind) {
      case Storage::Kind::kSlot:
        return DispatchArg::Slot(s.index);
      case Storage::Kind::kConstant:
        return DispatchArg::Constant(s.index);
      case Storage::Kind::kTensor:
        return DispatchArg::Internal(s.index);
      case Storage::Kind::kNone:
        break;
    }
    return DispatchArg::Null();
  }

  // --- dispatches ---

  int32_t Kernel(const std::string& program, const std::string& name) {
    for (size_t i = 0; i < list().kernels.size(); ++i) {
      const KernelRef& k = list().kernels[i];
      if (k.program == program && k.name == name) return static_cast<int32_t>(i);
    }
    list().kernels.push_back({program, {}, name});
    return static_cast<int32_t>(list().kernels.size() - 1);
  }

  Dispatch& Emit(const Node& node, const std::string& program, const std::string& kernel,
                 std::initializer_list<size_t> global, std::vector<std::string> options = {}) {
    Dispatch d;
    d.kernel = options.empty() ? Kernel(program, kernel)
                               : KernelWithOptions(program, kernel, std::move(options));
    d.work_dim = static_cast<cl_uint>(global.size());
    std::copy(global.begin(), global.end(), d.global.begin());
    d.label = absl::StrCat(node.name, "/", kernel);
    list().dispatches.push_back(std::move(d));
    return list().dispatches.back();
  }

  static void AddInts(Dispatch& d, std::initializer_list<int64_t> values) {
    for (int64_t v : values) d.args.push_back(DispatchArg::Scalar(static_cast<cl_int>(v)));
  }
  static void AddActivation(Dispatch& d, const Activation& act) {
    d.args.push_back(DispatchArg::Scalar(static_cast<cl_int>(ActCode(act.kind))));
    d.args.push_back(DispatchArg::Scalar(act.alpha));
    d.args.push_back(DispatchArg::Scalar(act.beta));
  }

  void EmitActivation(const Node& node, ValueId x, ValueId y, const Activation& act) {
    const TensorDesc& desc = graph_.value(y).desc;
    Dispatch& d = Emit(node, "elementwise.cl", "activation", {size_t(desc.NumElements())});
    d.args = {Arg(x), Arg(y)};
    AddActivation(d, act);
  }

  void EmitCopy(const Node& node, DispatchArg from, DispatchArg to, int64_t elements) {
    Dispatch& d = Emit(node, "elementwise.cl", "copy", {size_t(elements)});
    d.args = {std::move(from), std::move(to)};
  }

  // --- Conv2D ---

  // The conv kernels of the library, chosen by shape in ChooseConvVariant.
  enum class ConvVariant {
    kGeneric,       // conv2d.cl: one work-item per output, any attributes
    kPointwise,     // conv2d_pointwise.cl: 1x1 as a register-blocked GEMM
    kDepthwise3x3,  // conv2d_3x3.cl: 3x3 per channel, stride 1 or 2, left pad 1
    kDense3x3       // conv2d_3x3.cl: 3x3, groups 1, stride 1 or 2, left pad 1
  };

  // ChooseConvVariant returns the fastest kernel able to run `node`.
  ConvVariant ChooseConvVariant(const Node& node) const {
    const auto& a = std::get<Conv2DAttrs>(node.attrs);
    const Shape& x = graph_.value(node.inputs[0]).desc.shape;
    const Shape& w = graph_.value(node.inputs[1]).desc.shape;
    const Shape& out = graph_.value(node.outputs[0]).desc.shape;
    const bool constant_weights = graph_.value(node.inputs[1]).kind == Value::Kind::kConstant;
    const bool unit_dilation = a.dilations[0] == 1 && a.dilations[1] == 1;
    const bool shifts_3x3 = w[2] == 3 && w[3] == 3 && unit_dilation &&
                            a.strides[0] == a.strides[1] &&
                            (a.strides[0] == 1 || a.strides[0] == 2) && a.pads[1] == 1;
    if (a.groups == 1 && w[2] == 1 && w[3] == 1 && a.strides[0] == 1 && a.strides[1] == 1 &&
        a.pads[0] == 0 && a.pads[1] == 0 && a.pads[2] == 0 && a.pads[3] == 0 && constant_weights) {
      return ConvVariant::kPointwise;
    }
    if (a.groups == x[1] && out[1] == x[1] && shifts_3x3) return ConvVariant::kDepthwise3x3;
    if (a.groups == 1 && shifts_3x3 && constant_weights) return ConvVariant::kDense3x3;
    return ConvVariant::kGeneric;
  }

  // Kernel with build options; kernels differing in options are distinct.
  int32_t KernelWithOptions(const std::string& program, const std::string& name,
                            std::vector<std::string> options) {
    for (size_t i = 0; i < list().kernels.size(); ++i) {
      const KernelRef& k = list().kernels[i];
      if (k.program == program && k.name == name && k.options == options) {
        return static_cast<int32_t>(i);
      }
    }
    list().kernels.push_back({program, std::move(options), name});
    return static_cast<int32_t>(list().kernels.size() - 1);
  }

  // Sets `d`'s global size to `global` rounded up to multiples of `local`.
  static void SetRange(Dispatch& d, std::array<size_t, 3> global, std::array<size_t, 3> local) {
    d.work_dim = 3;
    for (int i = 0; i < 3; ++i) {
      d.local[i] = local[i];
      d.global[i] = (global[i] + local[i] - 1) / local[i] * local[i];
    }
  }

  // WorkGroupFor returns a local size of about `target` work-items (fewer
  // when the range is smaller), filling dimension 0, then 1, then 2: PoCL
  // runs a work-group as one loop, so its per-group cost is paid once per
  // `target` work-items while 2 cores still get many groups each.
  static std::array<size_t, 3> WorkGroupFor(std::array<size_t, 3> global, size_t target) {
    std::array<size_t, 3> local = {1, 1, 1};
    size_t left = std::max<size_t>(target, 1);
    for (int i = 0; i < 3; ++i) {
      local[i] = std::max<size_t>(1, std::min(global[i], left));
      left = std::max<size_t>(1, left / local[i]);
    }
    return local;
  }

  static size_t CeilDiv(int64_t a, int64_t b) { return static_cast<size_t>((a + b - 1) / b); }

  // Pointwise weights [OC][C] repacked as [ceil(OC/ocb)][C][ocb], zero past OC.
  int32_t PackPointwiseWeights(ValueId w, int64_t oc, int64_t c, int64_t ocb) {
    const std::vector<float>& src = *graph_.value(w).data;
    auto packed = std::make_shared<std::vector<float>>(CeilDiv(oc, ocb) * ocb * c, 0.0f);
    for (int64_t o = 0; o < oc; ++o) {
      for (int64_t i = 0; i < c; ++i) {
        (*packed)[((o / ocb) * c + i) * ocb + o % ocb] = src[o * c + i];
      }
    }
    return StorePackedWeights(w, std::move(packed));
  }

  // Dense 3x3 weights [OC][C][3][3] repacked as [ceil(OC/8)][C][3][3][8],
  // zero past OC.
  int32_t PackDense3x3Weights(ValueId w, int64_t oc, int64_t c) {
    const std::vector<float>& src = *graph_.value(w).data;
    auto packed = std::make_shared<std::vector<float>>(CeilDiv(oc, 8) * 8 * c * 9, 0.0f);
    for (int64_t o = 0; o < oc; ++o) {
      for (int64_t i = 0; i < c * 9; ++i) {
        (*packed)[((o / 8) * c * 9 + i) * 8 + o % 8] = src[o * c * 9 + i];
      }
    }
    return StorePackedWeights(w, std::move(packed));
  }

  // StorePackedWeights returns the constant index of `packed`, a relayout of
  // constant `w`: it takes `w`'s place when nothing else reads `w` (so the
  // original is not uploaded too), else it is added.
  int32_t StorePackedWeights(ValueId w, std::shared_ptr<std::vector<float>> packed) {
    int uses = 0;
    for (const Node& n : graph_.nodes())
      uses += static_cast<int>(std::count(n.inputs.begin(), n.inputs.end(), w));
    const bool is_output =
        std::find(graph_.outputs().begin(), graph_.outputs().end(), w) != graph_.outputs().end();
    if (uses == 1 && !is_output && storage_[w].kind == Storage::Kind::kConstant) {
      list().constants[storage_[w].index] = std::move(packed);
      return storage_[w].index;
    }
    list().constants.push_back(std::move(packed));
    return static_cast<int32_t>(list().constants.size() - 1);
  }

  static size_t RoundUp(size_t a, size_t b) { return (a + b - 1) / b * b; }

  // GroupForRow returns the smallest power of two >= n, within [lo, hi]
  // and at most the device's maximum work-group size.
  size_t GroupForRow(int64_t n, size_t lo, size_t hi) const {
    size_t g = lo;
    while (g < static_cast<size_t>(n) && g < hi) g *= 2;
    while (target_.max_work_group_size != 0 && g > target_.max_work_group_size && g > 1) g /= 2;
    return g;
  }

  // GpuGroup caps a local size of the flattened GPU kernels by the device.
  size_t GpuGroup(size_t want) const {
    size_t g = want;
    while (target_.max_work_group_size != 0 && g > target_.max_work_group_size && g > 1) g /= 2;
    return g;
  }

  // How conv2d_pointwise_gpu splits one layer: output channels per
  // work-item, slices of C per output, local size along the outputs.
  struct PointwiseGpuShape {
    int64_t ocb = 1;
    int64_t ks = 1;
    size_t lx = 128;
  };

  // ChoosePointwiseGpu: a work-item's time is about its serial loop over C
  // (H200: 1x1 layers of 16-960 channels measured 6-20 us, rising with the
  // loop, nearly flat in the item count), so C is split into slices of at
  // most about 24 channels, summed in local memory, while the items stay
  // below what the device holds at once (about 2048 per compute unit).
  // Four output channels per item measured best or within noise of it.
  PointwiseGpuShape ChoosePointwiseGpu(int64_t n, int64_t hw, int64_t oc, int64_t c) const {
    const size_t units = target_.compute_units != 0 ? target_.compute_units : 16;
    const size_t fill = units * 2048;
    // Slices of 12, 16, 32 or 48 channels measured no better in sum.
    const int64_t loop = 24;
    const size_t max_ks = std::min<size_t>(32, GpuGroup(256) / 8);
    PointwiseGpuShape s;
    // Four channels per item unless that pads a small OC much.
    s.ocb = oc >= 16 || oc % 4 == 0 ? 4 : oc % 2 == 0 ? 2 : 1;
    const size_t items = static_cast<size_t>(n * hw) * CeilDiv(oc, s.ocb);
    while (size_t(s.ks) < max_ks && c > loop * s.ks && items * s.ks * 2 <= fill) s.ks *= 2;
    s.lx = GpuGroup(256) / s.ks;
    return s;
  }

  // What a conv writes: its own output and activation, or, for a pointwise
  // conv that FuseResidualAdds paired with an Add, the Add's output and
  // activation and the Add's other operand as a residual.
  struct ConvOutput {
    ValueId y = kNoValue;
    ValueId residual = kNoValue;
    Activation act;
  };

  ConvOutput ConvOutputOf(const Node& node) const {
    ConvOutput o{node.outputs[0], kNoValue, node.fused};
    const int index = static_cast<int>(&node - graph_.nodes().data());
    if (residual_add_of_[index] >= 0) {
      const Node& add = graph_.nodes()[residual_add_of_[index]];
      o.y = add.outputs[0];
      o.residual = add.inputs[0] == node.outputs[0] ? add.inputs[1] : add.inputs[0];
      o.act = add.fused;
    }
    return o;
  }

  // LowerConv2DGpu lowers a conv to the GPU variants of conv2d_gpu.cl; a
  // pointwise conv that FuseResidualAdds paired with an Add writes the Add's
  // output.
  void LowerConv2DGpu(const Node& node) {
    const auto& a = std::get<Conv2DAttrs>(node.attrs);
    const Shape& x = graph_.value(node.inputs[0]).desc.shape;
    const Shape& w = graph_.value(node.inputs[1]).desc.shape;
    const Shape& out = graph_.value(node.outputs[0]).desc.shape;
    const ValueId bias = node.inputs.size() > 2 ? node.inputs[2] : kNoValue;
    const auto [y, residual, act] = ConvOutputOf(node);
    Dispatch d;
    d.label = absl::StrCat(node.name, "/");
    const size_t outputs = static_cast<size_t>(Product(out, 0, 4));
    if (ChooseConvVariant(node) == ConvVariant::kPointwise) {
      const int64_t hw = out[2] * out[3];
      const PointwiseGpuShape s = ChoosePointwiseGpu(out[0], hw, out[1], x[1]);
      d.kernel = KernelWithOptions(
          "conv2d_gpu.cl", "conv2d_pointwise_gpu",
          {absl::StrCat("-DRECQ_PW_OCB=", s.ocb), absl::StrCat("-DRECQ_PW_KS=", s.ks),
           absl::StrCat("-DRECQ_PW_LX=", s.lx)});
      const size_t items = size_t(out[0]) * CeilDiv(out[1], s.ocb) * size_t(hw);
      d.work_dim = 2;
      d.global = {RoundUp(items, s.lx), size_t(s.ks), 1};
      d.local = {s.lx, size_t(s.ks), 1};
      d.args = {Arg(node.inputs[0]),
                DispatchArg::Constant(PackPointwiseWeights(node.inputs[1], out[1], x[1], s.ocb)),
                Arg(bias), Arg(residual), Arg(y)};
      AddInts(d, {x[0], x[1], hw, out[1]});
      absl::StrAppend(&d.label, "conv2d_pointwise_gpu");
    } else if (a.groups == x[1] && out[1] == x[1]) {
      d.kernel = KernelWithOptions(
          "conv2d_gpu.cl", "conv2d_depthwise_gpu",
          {absl::StrCat("-DRECQ_DW_KH=", w[2]), absl::StrCat("-DRECQ_DW_KW=", w[3])});
      const size_t local = GpuGroup(128);
      d.work_dim = 1;
      d.global = {RoundUp(outputs, local), 1, 1};
      d.local = {local, 1, 1};
      d.args = {Arg(node.inputs[0]), Arg(node.inputs[1]), Arg(bias), Arg(y)};
      AddInts(d, {x[0], x[1], x[2], x[3], out[2], out[3], a.strides[0], a.strides[1], a.pads[0],
                  a.pads[1], a.dilations[0], a.dilations[1]});
      absl::StrAppend(&d.label, "conv2d_depthwise_gpu");
    } else {
      // Channels per item share the input loads (the 3-channel stem: 4 per
      // item measured 10-11 us on the H200, 19-23 us with one, 13 with 8).
      const int64_t per_group = out[1] / a.groups;
      int64_t ocb = per_group % 4 == 0 ? 4 : per_group % 2 == 0 ? 2 : 1;
      d.kernel = KernelWithOptions(
          "conv2d_gpu.cl", "conv2d_direct_gpu",
          {absl::StrCat("-DRECQ_DG_KH=", w[2]), absl::StrCat("-DRECQ_DG_KW=", w[3]),
           absl::StrCat("-DRECQ_DG_OCB=", ocb)});
      const size_t local = GpuGroup(128);
      d.work_dim = 1;
      d.global = {RoundUp(outputs / ocb, local), 1, 1};
      d.local = {local, 1, 1};
      d.args = {Arg(node.inputs[0]), Arg(node.inputs[1]), Arg(bias), Arg(y)};
      AddInts(d, {x[0], x[1], x[2], x[3], out[1], out[2], out[3], a.strides[0], a.strides[1],
                  a.pads[0], a.pads[1], a.dilations[0], a.dilations[1], a.groups});
      absl::StrAppend(&d.label, "conv2d_direct_gpu");
    }
    AddActivation(d, act);
    list().dispatches.push_back(std::move(d));
  }

  // LowerConv2D lowers a conv to the CPU variants (or, for the GPU target,
  // LowerConv2DGpu); a pointwise conv that FuseResidualAdds paired with an
  // Add writes the Add's output (only kPointwise convs are paired).
  void LowerConv2D(const Node& node) {
    if (target_.gpu) {
      LowerConv2DGpu(node);
      return;
    }
    const auto& a = std::get<Conv2DAttrs>(node.attrs);
    const Shape& x = graph_.value(node.inputs[0]).desc.shape;
    const Shape& w = graph_.value(node.inputs[1]).desc.shape;
    const Shape& out = graph_.value(node.outputs[0]).desc.shape;
    const auto [y, residual, act] = ConvOutputOf(node);
    ValueId bias = node.inputs.size() > 2 ? node.inputs[2] : kNoValue;
    Dispatch d;
    d.label = absl::StrCat(node.name, "/");
    switch (ChooseConvVariant(node)) {
      case ConvVariant::kPointwise: {
        const int64_t hw = out[2] * out[3];
        // float16 (PoCL's fastest width, DESIGN.md) unless HW is below 16.
        const int64_t vw = hw >= 16 ? 16 : 8;
        // 8 output channels per item measured as fast as 16 on PoCL 3.1.
        const int64_t ocb = 8;
        d.kernel = KernelWithOptions(
            "conv2d_pointwise.cl", "conv2d_pointwise",
            {absl::StrCat("-DRECQ_PW_VW=", vw), absl::StrCat("-DRECQ_PW_OCB=", ocb)});
        // 16 items per group measured best (vs 1, 4, 64) on PoCL 3.1.
        const std::array<size_t, 3> range = {CeilDiv(hw, vw), CeilDiv(out[1], ocb), size_t(out[0])};
        SetRange(d, range, WorkGroupFor(range, 16));
        d.args = {Arg(node.inputs[0]),
                  DispatchArg::Constant(PackPointwiseWeights(node.inputs[1], out[1], x[1], ocb)),
                  Arg(bias), Arg(residual), Arg(y)};
        AddInts(d, {x[0], x[1], hw, out[1]});
        absl::StrAppend(&d.label, "conv2d_pointwise");
        break;
      }
      case ConvVariant::kDepthwise3x3: {
        // float16 strips measured 1.6x faster than float8 where OW >= 16.
        const int64_t vw = out[3] >= 16 ? 16 : 8;
        d.kernel = KernelWithOptions(
            "conv2d_3x3.cl", "conv2d_depthwise3x3",
            {absl::StrCat("-DRECQ_C3_STRIDE=", a.strides[0]), absl::StrCat("-DRECQ_C3_VW=", vw)});
        // Little work per item: large groups where there are enough items.
        const std::array<size_t, 3> range = {CeilDiv(out[3], vw), size_t(out[2]),
                                             size_t(out[0] * out[1])};
        const size_t items = range[0] * range[1] * range[2];
        SetRange(d, range, WorkGroupFor(range, std::clamp<size_t>(items / 128, 16, 256)));
        d.args = {Arg(node.inputs[0]), Arg(node.inputs[1]), Arg(bias), Arg(y)};
        AddInts(d, {x[0], x[1], x[2], x[3], out[2], out[3], a.pads[0]});
        absl::StrAppend(&d.label, "conv2d_depthwise3x3");
        break;
      }
      case ConvVariant::kDense3x3: {
        const int64_t vw = 8;
        d.kernel = KernelWithOptions(
            "conv2d_3x3.cl", "conv2d_dense3x3",
            {absl::StrCat("-DRECQ_C3_STRIDE=", a.strides[0]), absl::StrCat("-DRECQ_C3_VW=", vw)});
        // Much work per item: one-item groups measured as good as larger ones.
        SetRange(d, {CeilDiv(out[3], vw), size_t(out[2]), size_t(out[0]) * CeilDiv(out[1], 8)},
                 {1, 1, 1});
        d.args = {Arg(node.inputs[0]),
                  DispatchArg::Constant(PackDense3x3Weights(node.inputs[1], out[1], x[1])),
                  Arg(bias), Arg(y)};
        AddInts(d, {x[0], x[1], x[2], x[3], out[1], out[2], out[3], a.pads[0]});
        absl::StrAppend(&d.label, "conv2d_dense3x3");
        break;
      }
      case ConvVariant::kGeneric:
        d.kernel = Kernel("conv2d.cl", "conv2d");
        d.work_dim = 3;
        d.global = {size_t(out[3]), size_t(out[2]), size_t(out[0] * out[1])};
        d.args = {Arg(node.inputs[0]), Arg(node.inputs[1]), Arg(bias), Arg(y)};
        AddInts(d, {x[1], x[2], x[3], out[1], out[2], out[3], w[2], w[3], a.strides[0],
                    a.strides[1], a.pads[0], a.pads[1], a.dilations[0], a.dilations[1], a.groups});
        absl::StrAppend(&d.label, "conv2d");
        break;
    }
    AddActivation(d, act);
    list().dispatches.push_back(std::move(d));
  }

  absl::Status LowerNode(int n) {
    const Node& node = graph_.nodes()[n];
    if (alias_node_[n] || fused_into_conv_[n]) return absl::OkStatus();
    auto in = [&](size_t i) -> const Shape& { return graph_.value(node.inputs[i]).desc.shape; };
    ValueId y = node.outputs[0];
    const Shape& out = graph_.value(y).desc.shape;
    // Whether the kernel applied node.fused itself.
    bool fused_done = false;
    switch (node.op) {
      case OpType::kConv2D:
        LowerConv2D(node);
        fused_done = true;
        break;
      case OpType::kBatchNorm: {
        const auto& a = std::get<BatchNormAttrs>(node.attrs);
        const Shape& x = in(0);
        Dispatch& d = Emit(node, "batchnorm.cl", "batchnorm", {size_t(Product(x, 0, x.size()))});
        d.args = {Arg(node.inputs[0]), Arg(node.inputs[1]), Arg(node.inputs[2]),
                  Arg(node.inputs[3]), Arg(node.inputs[4]), Arg(y)};
        AddInts(d, {x[1], Product(x, 2, x.size())});
        d.args.push_back(DispatchArg::Scalar(a.epsilon));
        AddActivation(d, node.fused);
        fused_done = true;
        break;
      }
      case OpType::kRelu:
      case OpType::kClip:
      case OpType::kLeakyRelu:
      case OpType::kSigmoid:
      case OpType::kHardSigmoid:
      case OpType::kHardSwish:
        EmitActivation(node, node.inputs[0], y, ActivationOfNode(node));
        break;
      case OpType::kAdd:
      case OpType::kSub:
      case OpType::kMul:
      case OpType::kDiv: {
        int op = node.op == OpType::kAdd   ? 0
                 : node.op == OpType::kSub ? 1
                 : node.op == OpType::kMul ? 2
                                           : 3;
        size_t count = size_t(Product(out, 0, out.size()));
        if (in(0) == out && in(1) == out) {
          Dispatch& d = Emit(node, "elementwise.cl", "binary_same", {count});
          d.args = {Arg(node.inputs[0]), Arg(node.inputs[1]), Arg(y)};
          AddInts(d, {op});
          AddActivation(d, node.fused);
        } else {
          if (out.size() > 8) return Unsupported(node, "broadcasting beyond rank 8");
          Dispatch& d = Emit(node, "elementwise.cl", "binary_broadcast", {count});
          d.args = {Arg(node.inputs[0]), Arg(node.inputs[1]), Arg(y)};
          AddInts(d, {op});
          d.args.push_back(DispatchArg::Scalar(Pad8(out, 1)));
          d.args.push_back(DispatchArg::Scalar(BroadcastStrides(in(0), out)));
          d.args.push_back(DispatchArg::Scalar(BroadcastStrides(in(1), out)));
          AddActivation(d, node.fused);
        }
        fused_done = true;
        break;
      }
      case OpType::kMaxPool:
      case OpType::kAveragePool: {
        const auto& a = std::get<PoolAttrs>(node.attrs);
        const Shape& x = in(0);
        bool max = node.op == OpType::kMaxPool;
        Dispatch& d = Emit(node, "pool.cl", max ? "max_pool" : "avg_pool",
                           {size_t(out[3]), size_t(out[2]), size_t(out[0] * out[1])});
        d.args = {Arg(node.inputs[0]), Arg(y)};
        AddInts(d, {x[2], x[3], out[2], out[3], a.kernel[0], a.kernel[1], a.strides[0],
                    a.strides[1], a.pads[0], a.pads[1]});
        if (!max) AddInts(d, {a.pads[2], a.pads[3]});
        AddInts(d, {a.dilations[0], a.dilations[1]});
        if (!max) AddInts(d, {a.count_include_pad ? 1 : 0});
        AddActivation(d, node.fused);
        fused_done = true;
        break;
      }
      case OpType::kGlobalAveragePool: {
        const Shape& x = in(0);
        const int64_t inner = Product(x, 2, x.size());
        if (target_.gpu) {
          const size_t local = GroupForRow(inner, 32, 256);
          Dispatch& d = Emit(node, "pool.cl", "global_avg_pool_rows", {size_t(x[0] * x[1]) * local},
                             {absl::StrCat("-DRECQ_GAP_LOCAL=", local)});
          d.local = {local, 1, 1};
          d.args = {Arg(node.inputs[0]), Arg(y)};
          AddInts(d, {inner});
          AddActivation(d, node.fused);
          fused_done = true;
          break;
        }
        Dispatch& d = Emit(node, "pool.cl", "global_avg_pool", {size_t(x[0] * x[1])});
        d.args = {Arg(node.inputs[0]), Arg(y)};
        AddInts(d, {Product(x, 2, x.size())});
        AddActivation(d, node.fused);
        fused_done = true;
        break;
      }
      case OpType::kGemm: {
        const auto& a = std::get<GemmAttrs>(node.attrs);
        int64_t m = out[0], nn = out[1];
        int64_t k = a.trans_a ? in(0)[0] : in(0)[1];
        ValueId c = node.inputs.size() > 2 ? node.inputs[2] : kNoValue;
        int64_t c_sm = 0, c_sn = 0;
        if (c != kNoValue) {
          Shape cs = graph_.value(c).desc.shape;
          while (cs.size() < 2) cs.insert(cs.begin(), 1);
          c_sm = cs[0] == 1 ? 0 : cs[1];
          c_sn = cs[1] == 1 ? 0 : 1;
        }
        if (target_.gpu && !a.trans_a && a.trans_b) {
          const size_t local = GroupForRow(k / 4, 32, 64);
          Dispatch& d = Emit(node, "gemm.cl", "gemm_rowdot", {size_t(nn) * local, size_t(m)},
                             {absl::StrCat("-DRECQ_GEMM_LOCAL=", local)});
          d.local = {local, 1, 1};
          d.args = {Arg(node.inputs[0]), Arg(node.inputs[1]), Arg(c), Arg(y)};
          AddInts(d, {m, nn, k});
          d.args.push_back(DispatchArg::Scalar(a.alpha));
          d.args.push_back(DispatchArg::Scalar(a.beta));
          AddInts(d, {c_sm, c_sn});
          AddActivation(d, node.fused);
          fused_done = true;
          break;
        }
        Dispatch& d = Emit(node, "gemm.cl", "gemm", {size_t(nn), size_t(m)});
        d.args = {Arg(node.inputs[0]), Arg(node.inputs[1]), Arg(c), Arg(y)};
        AddInts(d, {m, nn, k, a.trans_a ? 1 : 0, a.trans_b ? 1 : 0});
        d.args.push_back(DispatchArg::Scalar(a.alpha));
        d.args.push_back(DispatchArg::Scalar(a.beta));
        AddInts(d, {c_sm, c_sn});
        AddActivation(d, node.fused);
        fused_done = true;
        break;
      }
      case OpType::kMatMul: {
        Shape a = in(0), b = in(1);
        if (a.size() == 1) a.insert(a.begin(), 1);
        if (b.size() == 1) b.push_back(1);
        int64_t m = a[a.size() - 2], k = a.back(), nn = b.back();
        Shape ab(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
        size_t rank = std::max(ab.size(), bb.size());
        if (rank > 8) return Unsupported(node, "more than 8 batch dimensions");
        Shape batch(rank);
        for (size_t i = 0; i < rank; ++i) {
          int64_t da = i < rank - ab.size() ? 1 : ab[i - (rank - ab.size())];
          int64_t db = i < rank - bb.size() ? 1 : bb[i - (rank - bb.size())];
          batch[i] = std::max(da, db);
        }
        cl_int8 sa = BroadcastStrides(ab, batch), sb = BroadcastStrides(bb, batch);
        for (int i = 0; i < 8; ++i) {
          sa.s[i] *= static_cast<cl_int>(m * k);
          sb.s[i] *= static_cast<cl_int>(k * nn);
        }
        Dispatch& d = Emit(node, "gemm.cl", "matmul",
                           {size_t(nn), size_t(m), size_t(Product(batch, 0, batch.size()))});
        d.args = {Arg(node.inputs[0]), Arg(node.inputs[1]), Arg(y)};
        AddInts(d, {m, nn, k});
        d.args.push_back(DispatchArg::Scalar(Pad8(batch, 1)));
        d.args.push_back(DispatchArg::Scalar(sa));
        d.args.push_back(DispatchArg::Scalar(sb));
        break;
      }
      case OpType::kFlatten:
      case OpType::kReshape:
      case OpType::kIdentity:
        // Not aliased: both ends are bound per run or constant, or an
        // activation is fused.
        if (node.fused.kind != ActivationKind::kNone) {
          EmitActivation(node, node.inputs[0], y, node.fused);
          fused_done = true;
        } else {
          EmitCopy(node, Arg(node.inputs[0]), Arg(y), Product(out, 0, out.size()));
        }
        break;
      case OpType::kTranspose: {
        const auto& a = std::get<TransposeAttrs>(node.attrs);
        const Shape& x = in(0);
        if (x.size() > 8) return Unsupported(node, "rank above 8");
        std::vector<int64_t> perm = a.perm;
        if (perm.empty()) {
          perm.resize(x.size());
          std::iota(perm.rbegin(), perm.rend(), 0);
        }
        Shape in_strides(x.size());
        int64_t stride = 1;
        for (size_t i = x.size(); i-- > 0;) {
          in_strides[i] = stride;
          stride *= x[i];
        }
        Shape permuted(x.size());
        for (size_t i = 0; i < x.size(); ++i) permuted[i] = in_strides[perm[i]];
        Dispatch& d =
            Emit(node, "elementwise.cl", "gather_strided", {size_t(Product(out, 0, out.size()))});
        d.args = {Arg(node.inputs[0]), Arg(y)};
        d.args.push_back(DispatchArg::Scalar(Pad8(out, 1)));
        d.args.push_back(DispatchArg::Scalar(Pad8(permuted, 0)));
        break;
      }
      case OpType::kConcat: {
        const auto& a = std::get<ConcatAttrs>(node.attrs);
        int64_t axis = a.axis < 0 ? a.axis + static_cast<int64_t>(out.size()) : a.axis;
        int64_t outer = Product(out, 0, axis);
        int64_t inner = Product(out, axis + 1, out.size());
        int64_t offset = 0;
        for (size_t i = 0; i < node.inputs.size(); ++i) {
          int64_t inner_x = in(i)[axis] * inner;
          Dispatch& d = Emit(node, "elementwise.cl", "concat_copy", {size_t(outer * inner_x)});
          d.args = {Arg(node.inputs[i]), Arg(y)};
          AddInts(d, {inner_x, out[axis] * inner, offset});
          offset += inner_x;
        }
        break;
      }
      case OpType::kSoftmax: {
        const auto& a = std::get<SoftmaxAttrs>(node.attrs);
        int64_t axis = a.axis < 0 ? a.axis + static_cast<int64_t>(out.size()) : a.axis;
        int64_t outer = Product(out, 0, axis);
        int64_t dim = a.coerce_to_2d ? Product(out, axis, out.size()) : out[axis];
        int64_t inner = a.coerce_to_2d ? 1 : Product(out, axis + 1, out.size());
        if (target_.gpu && inner == 1) {
          const size_t local = GroupForRow(dim, 32, 256);
          Dispatch& d = Emit(node, "softmax.cl", "softmax_rows", {size_t(outer) * local},
                             {absl::StrCat("-DRECQ_SM_LOCAL=", local)});
          d.local = {local, 1, 1};
          d.args = {Arg(node.inputs[0]), Arg(y)};
          AddInts(d, {dim});
          break;
        }
        Dispatch& d = Emit(node, "softmax.cl", "softmax", {size_t(outer * inner)});
        d.args = {Arg(node.inputs[0]), Arg(y)};
        AddInts(d, {dim, inner});
        break;
      }
    }
    if (!fused_done && node.fused.kind != ActivationKind::kNone) {
      EmitActivation(node, y, y, node.fused);
    }
    return absl::OkStatus();
  }

  absl::Status CopyPinnedOutputs() {
    for (const auto& [id, slot] : pinned_outputs_) {
      Node node{
          OpType::kIdentity, absl::StrCat("output:", graph_.value(id).name), {id}, {id}, {}, {}};
      EmitCopy(node, Arg(id), DispatchArg::Slot(slot.index), graph_.value(id).desc.NumElements());
    }
    return absl::OkStatus();
  }

  absl::Status Unsupported(const Node& node, const std::string& what) {
    return absl::UnimplementedError(absl::StrCat("node '", node.name, "' (", OpTypeName(node.op),
                                                 "): ", what, " is not supported"));
  }

  const Graph& graph_;
  const LoweringTarget target_;
  Lowered out_;
  std::vector<int> parent_;
  std::vector<Storage> pin_;
  std::vector<Storage> storage_;
  std::vector<bool> alias_node_;
  // FuseResidualAdds: per conv node, the index of the Add it absorbs (-1:
  // none); per node, whether a conv absorbed it; per value, whether it is a
  // conv output that no longer exists.
  std::vector<int> residual_add_of_;
  std::vector<bool> fused_into_conv_;
  std::vector<bool> fused_away_;
  std::vector<std::pair<ValueId, Storage>> pinned_outputs_;
  size_t unplanned_bytes_ = 0;
};

}  // namespace

absl::StatusOr<Lowered> Lower(const Graph& graph, const LoweringTarget& target) {
  return Lowerer(graph, target).Run();
}

}  // namespace recq::internal
