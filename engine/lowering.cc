// Lowering's framework: where each value lives (binding slots, constants,
// planned intermediates, aliases through views), which kernel variant runs
// each node, and the pairing of a residual Add with the op before it. What
// each op emits lives in its op file under engine/ops/.
#include "engine/lowering.h"

#include <CL/cl.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "engine/ops/op_util.h"
#include "recq/math_op_attrs.h"
#include "recq/status_macros.h"

namespace recq::internal {

namespace {

// Where a graph value lives.
struct Storage {
  enum class Kind { kNone, kSlot, kConstant, kTensor };
  Kind kind = Kind::kNone;
  int32_t index = -1;  // slot, constant, or planned tensor index
};

class Lowerer final : public LoweringContext {
 public:
  Lowerer(const Graph& graph, const LoweringTarget& target) : graph_(graph), target_(target) {}

  absl::StatusOr<Lowered> Run() {
    RECQ_RETURN_IF_ERROR(ResolveOps());
    AssignSlotsAndConstants();
    AliasThroughViews();
    RECQ_RETURN_IF_ERROR(PairResidualAdds());
    RECQ_RETURN_IF_ERROR(PlaceTensors());
    for (size_t n = 0; n < graph_.nodes().size(); ++n) {
      RECQ_RETURN_IF_ERROR(LowerNode(static_cast<int>(n)));
    }
    CopyPinnedOutputs();
    out_.list.unplanned_bytes = unplanned_bytes_;
    return std::move(out_);
  }

  // --- LoweringContext ---

  const Graph& graph() const override { return graph_; }
  const DeviceFacts& device() const override { return target_; }
  bool relaxed_fp32() const override { return target_.tf32_products || target_.half_storage; }

  DispatchArg Scratch() const override {
    const int n = current_ != nullptr ? static_cast<int>(current_ - graph_.nodes().data()) : -1;
    if (n < 0 || scratch_of_[n] < 0) return DispatchArg::Null();
    return DispatchArg::Internal(scratch_of_[n]);
  }

  DispatchArg Arg(ValueId id) const override {
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

  int32_t Kernel(const std::string& program, const std::string& name,
                 std::vector<std::string> options) override {
    if (target_.half_storage) options.push_back(kHalfStorageOption);
    if (target_.tf32_products && target_.MatrixUnits()) options.push_back(kTf32ProductsOption);
    for (size_t i = 0; i < list().kernels.size(); ++i) {
      const KernelRef& k = list().kernels[i];
      if (k.program == program && k.name == name && k.options == options) {
        return static_cast<int32_t>(i);
      }
    }
    list().kernels.push_back({program, std::move(options), name});
    return static_cast<int32_t>(list().kernels.size() - 1);
  }

  Dispatch& Emit(Dispatch dispatch) override {
    dispatch.label = absl::StrCat(current_->name, "/", dispatch.label);
    // Chosen parameters are part of the label: profiles show them and engine
    // files carry them.
    if (current_params_ != nullptr && !current_params_->empty()) {
      absl::StrAppend(&dispatch.label, "[", KernelParamsString(*current_params_), "]");
    }
    if (dispatch.bytes == 0) {
      for (ValueId id : current_->inputs) {
        if (id != kNoValue) dispatch.bytes += double(graph_.value(id).desc.ByteSize());
      }
      for (ValueId id : current_->outputs)
        dispatch.bytes += double(graph_.value(id).desc.ByteSize());
    }
    list().dispatches.push_back(std::move(dispatch));
    return list().dispatches.back();
  }

  using LoweringContext::AddConstant;
  using LoweringContext::ReplaceConstant;
  DispatchArg AddConstant(std::shared_ptr<const HostData> data) override {
    list().constants.push_back(std::move(data));
    return DispatchArg::Constant(static_cast<int32_t>(list().constants.size() - 1));
  }

  DispatchArg ReplaceConstant(ValueId id, std::shared_ptr<const HostData> data) override {
    data = Stored(std::move(data));
    int uses = 0;
    for (const Node& n : graph_.nodes()) {
      uses += static_cast<int>(std::count(n.inputs.begin(), n.inputs.end(), id));
    }
    const bool is_output =
        std::find(graph_.outputs().begin(), graph_.outputs().end(), id) != graph_.outputs().end();
    if (uses == 1 && !is_output && storage_[id].kind == Storage::Kind::kConstant) {
      list().constants[storage_[id].index] = std::move(data);
      return DispatchArg::Constant(storage_[id].index);
    }
    return AddConstant(std::move(data));
  }

  // PairedIndex: `node`'s index in the graph once the pairing pass has
  // sized its per-node tables (PairResidualAdds), else -1.
  int PairedIndex(const Node* node) const {
    const int index = node != nullptr ? static_cast<int>(node - graph_.nodes().data()) : -1;
    return index >= 0 && index < static_cast<int>(residual_add_of_.size()) ? index : -1;
  }

  Output OutputOf(const Node& node) const override {
    Output o{node.outputs[0], kNoValue, node.fused};
    const int index = PairedIndex(&node);
    if (index >= 0 && residual_add_of_[index] >= 0) {
      const Node& add = graph_.nodes()[residual_add_of_[index]];
      o.y = add.outputs[0];
      o.residual = OtherOperand(add, read_by_add_[index]);
      o.activation = add.fused;
      if (residual_after_of_[index] >= 0) {
        const Node& add2 = graph_.nodes()[residual_after_of_[index]];
        o.y = add2.outputs[0];
        o.activation = add2.fused;
      }
    }
    return o;
  }

  ValueId ResidualAfterBias(const Node& node) const override {
    const int index = PairedIndex(&node);
    if (index < 0 || residual_after_of_[index] < 0) return kNoValue;
    const Node& add = graph_.nodes()[residual_add_of_[index]];
    const Node& add2 = graph_.nodes()[residual_after_of_[index]];
    return OtherOperand(add2, add.outputs[0]);
  }

  const Node* NormAfter(const Node& node) const override {
    const int index = PairedIndex(&node);
    return index >= 0 && norm_after_[index] >= 0 ? &graph_.nodes()[norm_after_[index]] : nullptr;
  }

  void MarkNormApplied() override {
    const int index = PairedIndex(current_);
    if (index >= 0 && norm_after_[index] >= 0) norm_applied_[norm_after_[index]] = true;
  }

  void MarkActivationApplied() override { activation_applied_ = true; }

  const KernelParams& params() const override {
    static const KernelParams kNone;
    return current_params_ != nullptr ? *current_params_ : kNone;
  }

 private:
  DispatchList& list() { return out_.list; }

  static constexpr const char* kHalfStorageOption = "-DRECQ_HALF_STORAGE";
  static constexpr const char* kTf32ProductsOption = "-DRECQ_MMA_TF32=1";

  // Stored returns a tensor constant as the device holds it: float32 data
  // as half under half storage (rounded once, on the host), else as given.
  // AddConstant's data (lookup tables such as Resize's) is uploaded as given.
  std::shared_ptr<const HostData> Stored(std::shared_ptr<const HostData> data) const {
    if (!target_.half_storage || data == nullptr || data->dtype() != DataType::kFloat32) {
      return data;
    }
    const std::vector<float>& f = *data->float_vector();
    std::vector<uint16_t> h(f.size());
    for (size_t i = 0; i < f.size(); ++i) h[i] = FloatToHalf(f[i]);
    return std::make_shared<const HostData>(DataType::kFloat16, std::move(h));
  }

  // CheckFloatTypes: the kernels of an op that is not `typed` read and write
  // float tensors as RECQ_T, float or (half storage) half; the node's tensors
  // must be stored that way.
  absl::Status CheckFloatTypes(int n) const {
    const Node& node = graph_.nodes()[n];
    if (defs_[n]->typed) return absl::OkStatus();
    auto check = [&](ValueId id, const char* what, size_t i) -> absl::Status {
      if (id == kNoValue) return absl::OkStatus();
      const Value& v = graph_.value(id);
      if (target_.half_storage) {
        if (v.desc.dtype == DataType::kFloat16 || v.kind == Value::Kind::kConstant) {
          return absl::OkStatus();
        }
        return absl::InternalError(absl::StrCat(
            "node '", node.name, "' (", node.op.name(), "): ", what, " ", i, " '", v.name, "' is ",
            v.desc.ToString(), " under fp16 storage (ToHalfStorage left it float32)"));
      }
      if (v.desc.dtype == DataType::kFloat32) return absl::OkStatus();
      return absl::UnimplementedError(absl::StrCat(
          "node '", node.name, "' (", node.op.name(), "): ", what, " ", i, " '", v.name, "' is ",
          v.desc.ToString(), "; the op computes on float16 tensors only with ",
          "EngineOptions::precision kFp16Storage (recq --precision=fp16), else on float32"));
    };
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      RECQ_RETURN_IF_ERROR(check(node.inputs[i], "input", i));
    }
    return check(node.outputs[0], "output", 0);
  }

  // --- ops and variants ---

  absl::Status ResolveOps() {
    for (const Node& node : graph_.nodes()) {
      const OpDef* def = FindOp(node.op);
      if (def == nullptr) {
        return absl::UnimplementedError(
            absl::StrCat("node '", node.name, "': op '", node.op.name(), "' is not registered"));
      }
      defs_.push_back(def);
    }
    variant_.assign(graph_.nodes().size(), -1);
    params_.assign(graph_.nodes().size(), KernelParams{});
    return absl::OkStatus();
  }

  // VariantOf picks (once per node) the kernel variant that runs it: the
  // first that fits (those that defer last), or the chooser's pick among
  // those that fit.
  absl::StatusOr<const KernelVariant*> VariantOf(int n) {
    const OpDef& def = *defs_[n];
    if (variant_[n] < 0) {
      const Node& node = graph_.nodes()[n];
      std::vector<size_t> fitting, deferring;
      for (size_t i = 0; i < def.variants.size(); ++i) {
        const KernelVariant& v = def.variants[i];
        if (v.fits && !v.fits(node, *this)) continue;
        (v.defers && v.defers(node, *this) ? deferring : fitting).push_back(i);
      }
      fitting.insert(fitting.end(), deferring.begin(), deferring.end());
      if (fitting.empty()) {
        return Unsupported(node, "this shape on this device (no kernel variant fits)");
      }
      size_t pick = fitting[0];
      if (target_.choose_variant || target_.choose_kernel) {
        size_t chosen;
        if (target_.choose_variant) {
          chosen = target_.choose_variant(node, *this, fitting);
        } else {
          KernelChoice choice = target_.choose_kernel(node, *this, fitting);
          chosen = choice.variant;
          params_[n] = std::move(choice.params);
        }
        if (std::find(fitting.begin(), fitting.end(), chosen) == fitting.end()) {
          return absl::InternalError(absl::StrCat("node '", node.name,
                                                  "': the variant chooser picked ", chosen,
                                                  ", which does not fit"));
        }
        pick = chosen;
      }
      variant_[n] = static_cast<int>(pick);
    }
    return &def.variants[variant_[n]];
  }

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
        list().constants.push_back(Stored(values[id].data));
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

  // A view's output shares its input's memory unless both ends are pinned.
  void AliasThroughViews() {
    alias_node_.assign(graph_.nodes().size(), false);
    for (size_t n = 0; n < graph_.nodes().size(); ++n) {
      const Node& node = graph_.nodes()[n];
      if (!defs_[n]->is_view || node.fused.kind != ActivationKind::kNone) continue;
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

  // IsLastDimBias: `b` is [N] or [1, ..., 1, N] for an output `y` of rank at
  // least b's whose last dimension is N.
  static bool IsLastDimBias(const Shape& b, const Shape& y) {
    if (b.empty() || y.empty() || b.size() > y.size() || b.back() != y.back()) return false;
    for (size_t i = 0; i + 1 < b.size(); ++i) {
      if (b[i] != 1) return false;
    }
    return true;
  }

  // ReadsOnce: `add` has two inputs, exactly one of them `v`.
  static bool ReadsOnce(const Node& add, ValueId v) {
    return add.inputs.size() == 2 && (add.inputs[0] == v) != (add.inputs[1] == v);
  }
  // OtherOperand: the input of a two-input `add` that is not `v`.
  static ValueId OtherOperand(const Node& add, ValueId v) {
    return add.inputs[0] == v ? add.inputs[1] : add.inputs[0];
  }

  // PairResidualAdds finds each node without a fused activation whose kernel
  // variant absorbs a residual Add and whose only use is such an Add of
  // equal shapes right after it, or after views of it read once
  // (MobileNet V2's projection + residual; ViT's Gemm, Reshape, Add), or,
  // for a variant that also absorbs_bias_add, an Add of a bias along the last
  // dimension (a Linear layer's MatMul + bias; IsLastDimBias): the
  // variant then adds the other operand and applies the Add's activation,
  // and the Add and the node's own output disappear. One dispatch and one
  // tensor pass fewer. A variant that absorbs_bias_then_residual also takes
  // a residual Add right after the bias Add (PairResidualAfterBias).
  absl::Status PairResidualAdds() {
    const auto& nodes = graph_.nodes();
    residual_add_of_.assign(nodes.size(), -1);
    residual_after_of_.assign(nodes.size(), -1);
    read_by_add_.assign(nodes.size(), kNoValue);
    norm_after_.assign(nodes.size(), -1);
    norm_applied_.assign(nodes.size(), false);
    fused_into_previous_.assign(nodes.size(), false);
    fused_away_.assign(graph_.values().size(), false);
    std::vector<int> uses(graph_.values().size(), 0);
    for (const Node& node : nodes) {
      for (ValueId id : node.inputs) {
        if (id != kNoValue) ++uses[id];
      }
    }
    for (ValueId id : graph_.outputs()) ++uses[id];
    for (size_t n = 0; n + 1 < nodes.size(); ++n) {
      const Node& node = nodes[n];
      if (fused_into_previous_[n]) continue;
      if (node.fused.kind != ActivationKind::kNone || alias_node_[n]) continue;
      const ValueId v = node.outputs[0];
      if (uses[v] != 1 || pin_[Find(v)].kind != Storage::Kind::kNone) continue;
      // Views read once between the node and the Add (ViT's attention
      // output: Gemm, Reshape, Add) keep the elements' order.
      size_t k = n + 1;
      ValueId read = v;
      while (k + 1 < nodes.size() && alias_node_[k] && nodes[k].inputs[0] == read &&
             uses[nodes[k].outputs[0]] == 1) {
        read = nodes[k].outputs[0];
        ++k;
      }
      const Node& add = nodes[k];
      if (!defs_[k]->is_residual_add || alias_node_[k]) continue;
      if (!ReadsOnce(add, read)) continue;
      const auto& shape = graph_.value(read).desc.shape;
      const Shape& other = graph_.value(OtherOperand(add, read)).desc.shape;
      if (graph_.value(add.outputs[0]).desc.shape != shape) continue;
      const bool bias = other != shape;
      // A bias is indexed by the node's own last dimension: no views.
      if (bias && (k != n + 1 || !IsLastDimBias(other, shape))) continue;
      // Only now ask for the variant: fit tests may read shapes, never storage.
      RECQ_ASSIGN_OR_RETURN(const KernelVariant* variant, VariantOf(static_cast<int>(n)));
      if (!variant->absorbs_residual_add || (bias && !variant->absorbs_bias_add)) continue;
      residual_add_of_[n] = static_cast<int>(k);
      read_by_add_[n] = read;
      fused_into_previous_[k] = true;
      for (size_t view = n; view < k; ++view) fused_away_[nodes[view].outputs[0]] = true;
      if (bias && variant->absorbs_bias_then_residual) PairResidualAfterBias(n, uses);
    }
    for (size_t n = 0; n + 1 < nodes.size(); ++n) {
      if (alias_node_[n] || fused_into_previous_[n]) continue;
      const int norm = NormReading(n);
      if (norm < 0) continue;
      RECQ_ASSIGN_OR_RETURN(const KernelVariant* variant, VariantOf(static_cast<int>(n)));
      if (variant->absorbs_layernorm_after) norm_after_[n] = norm;
    }
    return absl::OkStatus();
  }

  // NormReading: the LayerNormalization right after node n and the Adds it
  // absorbs that normalises the last axis of its output (a transformer
  // block's residual stream: x = x + f(x), then LN(x)), or -1. The output
  // stays: later nodes read it too.
  int NormReading(size_t n) const {
    const auto& nodes = graph_.nodes();
    size_t last = n;
    if (residual_add_of_[n] >= 0) {
      last = static_cast<size_t>(residual_after_of_[n] >= 0 ? residual_after_of_[n]
                                                            : residual_add_of_[n]);
    }
    if (last + 1 >= nodes.size()) return -1;
    const Node& norm = nodes[last + 1];
    if (norm.op != OpType("LayerNormalization") || alias_node_[last + 1]) return -1;
    if (norm.outputs.size() != 1 || norm.inputs[0] != nodes[last].outputs[0]) return -1;
    const NormalizationAttrs& a = AttrsOr<NormalizationAttrs>(norm);
    const int64_t rank = static_cast<int64_t>(graph_.value(norm.inputs[0]).desc.shape.size());
    if (a.channels_first_input || a.channels_first_output || rank < 1) return -1;
    if (a.axis != -1 && a.axis != rank - 1) return -1;
    return static_cast<int>(last + 1);
  }

  // PairResidualAfterBias pairs node n, already paired with its bias Add
  // (n + 1), with a residual Add of the output's shape right after that
  // (n + 2) when the bias Add has no activation and only that Add reads it.
  void PairResidualAfterBias(size_t n, const std::vector<int>& uses) {
    const auto& nodes = graph_.nodes();
    if (n + 2 >= nodes.size() || !defs_[n + 2]->is_residual_add || alias_node_[n + 2]) return;
    const Node& add = nodes[n + 1];
    const Node& add2 = nodes[n + 2];
    const ValueId v = add.outputs[0];
    if (add.fused.kind != ActivationKind::kNone) return;
    if (uses[v] != 1 || pin_[Find(v)].kind != Storage::Kind::kNone) return;
    if (!ReadsOnce(add2, v)) return;
    const Shape& shape = graph_.value(v).desc.shape;
    const ValueId r = OtherOperand(add2, v);
    if (graph_.value(r).desc.shape != shape || graph_.value(add2.outputs[0]).desc.shape != shape) {
      return;
    }
    residual_after_of_[n] = static_cast<int>(n + 2);
    fused_into_previous_[n + 2] = true;
    fused_away_[v] = true;
  }

  absl::Status PlaceTensors() {
    const auto& values = graph_.values();
    const auto& nodes = graph_.nodes();
    scratch_of_.assign(nodes.size(), -1);
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
        // The node writes the (last) Add's output: it is live from the node
        // on, so it never shares memory with the node's inputs.
        const int last = residual_after_of_[n] >= 0 ? residual_after_of_[n] : residual_add_of_[n];
        touch(nodes[last].outputs[0], static_cast<int>(n));
      } else if (!fused_away_[nodes[n].outputs[0]]) {
        touch(nodes[n].outputs[0], static_cast<int>(n));
      }
      // A LayerNorm the node may compute is written from the node on.
      if (norm_after_[n] >= 0) touch(nodes[norm_after_[n]].outputs[0], static_cast<int>(n));
      // The variant's scratch lives during its node only.
      if (alias_node_[n] || fused_into_previous_[n]) continue;
      RECQ_ASSIGN_OR_RETURN(const KernelVariant* variant, VariantOf(static_cast<int>(n)));
      const size_t scratch = variant->scratch_bytes ? variant->scratch_bytes(nodes[n], *this) : 0;
      if (scratch > 0) {
        scratch_of_[n] = static_cast<int>(lifetimes.size());
        lifetimes.push_back({scratch, static_cast<int>(n), static_cast<int>(n)});
        unplanned_bytes_ += scratch;
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
    for (int& lifetime : scratch_of_) {
      if (lifetime >= 0) lifetime = out_.plan.buffer_of[lifetime];
    }
    return absl::OkStatus();
  }

  // --- dispatches ---

  absl::Status LowerNode(int n) {
    const Node& node = graph_.nodes()[n];
    RECQ_RETURN_IF_ERROR(CheckFloatTypes(n));
    if (alias_node_[n] || fused_into_previous_[n] || norm_applied_[n]) return absl::OkStatus();
    RECQ_ASSIGN_OR_RETURN(const KernelVariant* variant, VariantOf(n));
    current_ = &node;
    current_params_ = &params_[n];
    activation_applied_ = false;
    RECQ_RETURN_IF_ERROR(variant->lower(*this, node));
    current_params_ = nullptr;
    if (!activation_applied_ && node.fused.kind != ActivationKind::kNone) {
      EmitActivation(*this, node.outputs[0], node.outputs[0], node.fused);
    }
    return absl::OkStatus();
  }

  void CopyPinnedOutputs() {
    for (const auto& [id, slot] : pinned_outputs_) {
      Node node;
      node.op = OpType::kIdentity;
      node.name = absl::StrCat("output:", graph_.value(id).name);
      current_ = &node;
      EmitCopyOf(*this, Arg(id), DispatchArg::Slot(slot.index), graph_.value(id).desc);
    }
    current_ = nullptr;
  }

  const Graph& graph_;
  const LoweringTarget target_;
  Lowered out_;
  std::vector<const OpDef*> defs_;    // per node
  std::vector<int> variant_;          // per node: index into its variants, -1 unchosen
  std::vector<KernelParams> params_;  // per node: the chosen parameters (empty: heuristic)
  const KernelParams* current_params_ = nullptr;
  std::vector<int> parent_;
  std::vector<Storage> pin_;
  std::vector<Storage> storage_;
  std::vector<bool> alias_node_;
  // PairResidualAdds: per node, the index of the Add it absorbs (-1: none);
  // per node, whether the node before absorbed it; per value, whether it is
  // an output that no longer exists.
  std::vector<int> residual_add_of_;
  std::vector<int> residual_after_of_;  // per node: the residual Add after its bias Add, -1 none
  std::vector<ValueId> read_by_add_;    // per paired node: the value its Add reads (a view of it)
  // The LayerNorm pairing (NormReading): per node, the LayerNorm after it (-1: none); per node,
  // whether the node before computed it (MarkNormApplied).
  std::vector<int> norm_after_;
  std::vector<bool> norm_applied_;
  std::vector<bool> fused_into_previous_;
  std::vector<bool> fused_away_;
  std::vector<std::pair<ValueId, Storage>> pinned_outputs_;
  std::vector<int> scratch_of_;  // per node: its scratch's planned tensor, -1 none
  size_t unplanned_bytes_ = 0;
  const Node* current_ = nullptr;
  bool activation_applied_ = false;
};

}  // namespace

absl::StatusOr<Lowered> Lower(const Graph& graph, const LoweringTarget& target) {
  return Lowerer(graph, target).Run();
}

}  // namespace recq::internal
