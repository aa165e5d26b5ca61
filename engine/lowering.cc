#include "engine/lowering.h"

#include <CL/cl.h>

#include <algorithm>
#include <numeric>

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

Activation ActivationOfOp(const Node& node) {
  const auto* a = std::get_if<ActivationAttrs>(&node.attrs);
  ActivationAttrs attrs = a ? *a : ActivationAttrs{};
  switch (node.op) {
    case OpType::kRelu:
      return {ActivationKind::kRelu, 0, 0};
    case OpType::kClip:
      return {ActivationKind::kClip, attrs.alpha, attrs.beta};
    case OpType::kLeakyRelu:
      return {ActivationKind::kLeakyRelu, attrs.alpha, 0};
    case OpType::kSigmoid:
      return {ActivationKind::kSigmoid, 0, 0};
    case OpType::kHardSigmoid:
      return {ActivationKind::kHardSigmoid, attrs.alpha, attrs.beta};
    case OpType::kHardSwish:
      return {ActivationKind::kHardSwish, 0, 0};
    default:
      return {};
  }
}

class Lowerer {
 public:
  explicit Lowerer(const Graph& graph) : graph_(graph) {}

  absl::StatusOr<Lowered> Run() {
    AssignSlotsAndConstants();
    AliasThroughShapeOps();
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
        if (id != kNoValue) touch(id, static_cast<int>(n));
      }
      touch(nodes[n].outputs[0], static_cast<int>(n));
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
                 std::initializer_list<size_t> global) {
    Dispatch d;
    d.kernel = Kernel(program, kernel);
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

  absl::Status LowerNode(int n) {
    const Node& node = graph_.nodes()[n];
    if (alias_node_[n]) return absl::OkStatus();
    auto in = [&](size_t i) -> const Shape& { return graph_.value(node.inputs[i]).desc.shape; };
    ValueId y = node.outputs[0];
    const Shape& out = graph_.value(y).desc.shape;
    // Whether the kernel applied node.fused itself.
    bool fused_done = false;
    switch (node.op) {
      case OpType::kConv2D: {
        const auto& a = std::get<Conv2DAttrs>(node.attrs);
        const Shape& x = in(0);
        const Shape& w = in(1);
        Dispatch& d = Emit(node, "conv2d.cl", "conv2d",
                           {size_t(out[3]), size_t(out[2]), size_t(out[0] * out[1])});
        ValueId bias = node.inputs.size() > 2 ? node.inputs[2] : kNoValue;
        d.args = {Arg(node.inputs[0]), Arg(node.inputs[1]), Arg(bias), Arg(y)};
        AddInts(d, {x[1], x[2], x[3], out[1], out[2], out[3], w[2], w[3], a.strides[0],
                    a.strides[1], a.pads[0], a.pads[1], a.dilations[0], a.dilations[1], a.groups});
        AddActivation(d, node.fused);
        fused_done = true;
        break;
      }
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
        EmitActivation(node, node.inputs[0], y, ActivationOfOp(node));
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
  Lowered out_;
  std::vector<int> parent_;
  std::vector<Storage> pin_;
  std::vector<Storage> storage_;
  std::vector<bool> alias_node_;
  std::vector<std::pair<ValueId, Storage>> pinned_outputs_;
  size_t unplanned_bytes_ = 0;
};

}  // namespace

absl::StatusOr<Lowered> Lower(const Graph& graph) { return Lowerer(graph).Run(); }

}  // namespace recq::internal
