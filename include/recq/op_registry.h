// The op registry: one place that knows each op.
//
// Every op recq can run, built-in or an application's, is one OpDef:
//
//   * its name (the OpType key) and what its attributes struct is;
//   * its ONNX mappings (domain, op type, opset range, and the function that
//     reads the ONNX node's attributes and inputs into a graph node);
//   * its shape and type inference;
//   * its kernel variants, each with the test that says whether it can run a
//     node on the device at hand and the lowering that emits its dispatches;
//     the first variant that fits is chosen unless a VariantChooser (the
//     tuner's hook) picks another among those that fit;
//   * what it can absorb from its neighbours: a fused activation, the
//     residual Add after it, a BatchNorm folded into its weights.
//
// The ONNX importer, Graph validation, the passes and lowering read only the
// registry; none of them switches on op types. Built-in ops live one file per
// op or family under engine/ops/ and are registered before the registry's
// first use. Applications register custom ops the same way (like TensorRT
// plugins or onnxruntime custom ops):
//
//   recq::OpDef def;
//   def.type = recq::OpType::Named("example.Swish");
//   def.onnx = {{"com.example", "Swish", 1, 1, ImportSwish}};
//   def.infer = [](const OpAttrs&, InferInputs in) { return *in[0]; };
//   def.variants = {{"swish", nullptr, LowerSwish}};
//   RECQ_CHECK_OK(recq::RegisterKernelSource("example_swish.cl", kSwishSource));
//   RECQ_CHECK_OK(recq::RegisterOp(std::move(def)));  // recq/status_macros.h
//
// The registry is process-wide, as TensorRT's plugin registry and
// onnxruntime's kernel registry are: graphs name ops by key, and a graph may
// be built on one thread and compiled on another. It is thread-safe;
// registered ops live until the process ends and cannot be replaced.
#ifndef RECQ_OP_REGISTRY_H_
#define RECQ_OP_REGISTRY_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "recq/device_facts.h"
#include "recq/dispatch.h"
#include "recq/graph.h"

namespace recq {

// --- ONNX import ---

// A constant ONNX tensor (an initializer, a Constant node's value or a value
// folded at import) as an op's import function sees it, row-major:
// floating-point elements (float32, float16, float64) as floats, integers
// and bools as int64. `dtype` is the element type it has in the model. A
// float64 tensor read from the model also keeps its exact values in
// `doubles`, which ToHostData prefers; values folded at import are
// computed from the floats.
struct OnnxConstant {
  std::string name;
  std::vector<int64_t> dims;
  bool is_float = true;
  std::vector<float> floats;    // is_float
  std::vector<int64_t> ints;    // !is_float
  std::vector<double> doubles;  // float64 from the model (else empty)
  // The model's element type; float32 where is_float and it is not a
  // floating-point type, int64 where !is_float and it is not integral (so
  // that folding code may set only is_float).
  DataType dtype = DataType::kFloat32;
  int64_t size() const {
    return is_float ? static_cast<int64_t>(floats.size()) : static_cast<int64_t>(ints.size());
  }
  DataType type() const {
    if (is_float) return IsFloatingPoint(dtype) ? dtype : DataType::kFloat32;
    return IsIntegral(dtype) ? dtype : DataType::kInt64;
  }
  // ToHostData converts the elements to type().
  HostData ToHostData() const;
};

// OnnxNodeContext is one ONNX node as the importer hands it to an op's
// import function. Accessors that can fail return a status that already
// names the node and its op type; import functions return it as it is.
class OnnxNodeContext {
 public:
  virtual ~OnnxNodeContext() = default;

  virtual const std::string& name() const = 0;     // the node's name or "<OpType>_<index>"
  virtual const std::string& op_type() const = 0;  // the ONNX op type
  virtual int64_t opset() const = 0;               // of the node's domain
  virtual int num_inputs() const = 0;
  virtual int num_outputs() const = 0;
  virtual const std::string& output_name(int i) const = 0;  // "" for an empty output

  // Input returns input `i` as a graph value (a constant is materialized);
  // with `optional`, an absent or empty input is kNoValue.
  [[nodiscard]] virtual absl::StatusOr<ValueId> Input(int i, bool optional = false) = 0;
  // ConstantInput returns input `i` when it is a constant (initializer or
  // Constant node), nullptr when it is absent; Unimplemented when computed.
  [[nodiscard]] virtual absl::StatusOr<const OnnxConstant*> ConstantInput(int i) = 0;
  // desc returns the description of a value returned by Input.
  virtual const TensorDesc& desc(ValueId id) const = 0;
  virtual const std::string& value_name(ValueId id) const = 0;

  // Attributes: absent ones take `def`; one of another type is
  // InvalidArgument.
  virtual bool HasAttr(absl::string_view name) const = 0;
  [[nodiscard]] virtual absl::StatusOr<int64_t> Int(absl::string_view name, int64_t def) const = 0;
  [[nodiscard]] virtual absl::StatusOr<float> Float(absl::string_view name, float def) const = 0;
  [[nodiscard]] virtual absl::StatusOr<std::vector<int64_t>> Ints(absl::string_view name) const = 0;
  [[nodiscard]] virtual absl::StatusOr<std::vector<float>> Floats(absl::string_view name) const = 0;
  [[nodiscard]] virtual absl::StatusOr<std::string> String(absl::string_view name,
                                                           const std::string& def) const = 0;
  // Tensor decodes a tensor attribute; NotFound when it is absent.
  [[nodiscard]] virtual absl::StatusOr<OnnxConstant> Tensor(absl::string_view name) const = 0;
  // AttrNames lists the node's attributes in file order.
  virtual std::vector<std::string> AttrNames() const = 0;
  // CheckAttrs is Unimplemented for an attribute not in `known`.
  [[nodiscard]] virtual absl::Status CheckAttrs(std::initializer_list<const char*> known) const = 0;
  // OutputUsed tells whether output `i` is read by another node or the graph.
  virtual bool OutputUsed(int i) const = 0;

  // Emit adds a node of `op` writing the ONNX node's first output; its shape
  // is inferred through the registry.
  [[nodiscard]] virtual absl::Status Emit(OpType op, std::vector<ValueId> inputs,
                                          OpAttrs attrs) = 0;
  // EmitOutput is Emit writing the ONNX node's output `output` (one node
  // per output, for ops such as Split).
  [[nodiscard]] virtual absl::Status EmitOutput(int output, OpType op, std::vector<ValueId> inputs,
                                                OpAttrs attrs) = 0;
  // DefineConstant makes the node's first output the constant `value` (for
  // Constant nodes and values computed at import).
  [[nodiscard]] virtual absl::Status DefineConstant(OnnxConstant value) = 0;
  // ReserveFolded is called before a fold computes `elements` values: it
  // is Unimplemented when one constant would exceed 2^26 elements or the
  // import's folds together OnnxOptions::max_folded_elements.
  [[nodiscard]] virtual absl::Status ReserveFolded(int64_t elements) = 0;

  // Invalid and Unsupported make InvalidArgument / Unimplemented statuses
  // naming the node: "node 'conv1' (Conv): <what>".
  absl::Status Invalid(absl::string_view what) const;
  absl::Status Unsupported(absl::string_view what) const;
  // CheckOnlyFirstOutputUsed is Unimplemented when another output is read.
  [[nodiscard]] absl::Status CheckOnlyFirstOutputUsed() const;
};

// OnnxNodeWriter is one ONNX node being written by an op's export function
// (SaveOnnxToBytes, default-domain opset 13). Inputs and the output are
// already named after the graph's values.
class OnnxNodeWriter {
 public:
  virtual ~OnnxNodeWriter() = default;
  virtual void SetOpType(const std::string& op_type) = 0;
  virtual void SetInt(const std::string& name, int64_t value) = 0;
  virtual void SetFloat(const std::string& name, float value) = 0;
  virtual void SetInts(const std::string& name, std::vector<int64_t> values) = 0;
  // AddConstantInput appends an input fed by a new float32 initializer
  // named `name`.
  virtual void AddConstantInput(const std::string& name, std::vector<int64_t> dims,
                                std::vector<float> data) = 0;
  // DropTrailingEmptyInputs removes absent optional inputs at the end.
  virtual void DropTrailingEmptyInputs() = 0;
};

// One ONNX op type an OpDef imports, for opsets [min_opset, max_opset] of
// its domain ("" is the default ONNX domain).
struct OnnxMapping {
  std::string domain;
  std::string op_type;
  int64_t min_opset = 1;
  int64_t max_opset = 1 << 30;
  std::function<absl::Status(OnnxNodeContext&)> import;
};

// --- lowering ---

// DeviceFacts (recq/device_facts.h) holds what kernel selection depends on.

class LoweringContext;

// KernelParams: the tunable compile-time parameters of one kernel variant
// for one node (tile sizes, vector widths, work-group sizes), by name. A
// variant's lowering turns them into build options (-D macros of its one
// .cl source) and launch sizes. Empty means the variant's own heuristic
// choice. Together with the variant, a value: KernelChoice.
using KernelParams = std::map<std::string, int64_t>;

// KernelParamsString renders params as "name=value,..." in name order ("" when
// empty); ParseKernelParams reads that form back (InvalidArgument otherwise).
std::string KernelParamsString(const KernelParams& params);
[[nodiscard]] absl::StatusOr<KernelParams> ParseKernelParams(absl::string_view text);

// One way to run an op: a kernel (or a few) with its launch shape.
struct KernelVariant {
  std::string name;  // shown in profiles: "<node>/<variant>"
  // Whether it can run `node` here; null means always.
  std::function<bool(const Node& node, const LoweringContext& ctx)> fits;
  // Emits the node's dispatches.
  std::function<absl::Status(LoweringContext& ctx, const Node& node)> lower;
  // It can add a residual operand and apply the residual Add's activation
  // (LoweringContext::ResidualOf) when the pass pairs it with the Add after.
  bool absorbs_residual_add = false;
  // The parameter sets worth timing for `node` here (its tuning space), the
  // heuristic's own choice first; each must compute the same function. Null
  // or empty: the variant has no tunable parameters. The lowering reads the
  // chosen set through LoweringContext::params().
  std::function<std::vector<KernelParams>(const Node& node, const LoweringContext& ctx)>
      param_space = nullptr;
  // Bytes of scratch memory its dispatches need for `node` (null or 0:
  // none). It is planned with the intermediates, alive during the node
  // only, and read through LoweringContext::Scratch. Reads shapes only.
  std::function<size_t(const Node& node, const LoweringContext& ctx)> scratch_bytes = nullptr;
  // With absorbs_residual_add: the Add's other operand may also be a bias
  // broadcast along the last dimension ([N], or [1, ..., 1, N]; a Linear
  // layer's MatMul + Add), which OutputOf returns as the residual.
  bool absorbs_bias_add = false;
  // With absorbs_bias_add: after the bias Add, a second Add of a residual of
  // the output's shape right after it (a Linear layer's MatMul + bias + the
  // block's residual), read through LoweringContext::ResidualAfterBias; the
  // variant applies that Add's activation (OutputOf's).
  bool absorbs_bias_then_residual = false;
  // It may also compute the LayerNormalization over the last axis that
  // reads its (last absorbed Add's) output right after it
  // (LoweringContext::NormAfter), calling MarkNormApplied when it did.
  bool absorbs_layernorm_after = false;
  // Where it fits `node` but the variants after it that fit should come
  // first: it moves to the end of the fitting variants that choosers see,
  // so that the heuristic pick (the first) and the fast tuner's first
  // candidates are the others. Null: never. Reads shapes and the device.
  std::function<bool(const Node& node, const LoweringContext& ctx)> defers = nullptr;
};

// KernelChoice: a variant (an index into the op's variants) and its
// parameters (empty: the variant's heuristic ones).
struct KernelChoice {
  size_t variant = 0;
  KernelParams params;
};

// VariantChooser picks one of `fitting` (indices into the op's variants, in
// declared order but for those that defer (KernelVariant::defers), which
// come last; never empty) for `node`; the default takes the first. The
// auto-tuner plugs in here: it may measure and cache, and must answer the
// same for the same node, device and cache.
using VariantChooser = std::function<size_t(const Node& node, const LoweringContext& ctx,
                                            absl::Span<const size_t> fitting)>;
// KernelChooser is VariantChooser that also picks the variant's parameters
// (one of its param_space, or any set its lowering accepts). The auto-tuner
// (EngineOptions::tuning) is one.
using KernelChooser = std::function<KernelChoice(const Node& node, const LoweringContext& ctx,
                                                 absl::Span<const size_t> fitting)>;

// LoweringContext is what an op's lowering sees: the graph, the device, the
// memory of every value, and the dispatch list it appends to.
class LoweringContext {
 public:
  virtual ~LoweringContext() = default;

  virtual const Graph& graph() const = 0;
  virtual const DeviceFacts& device() const = 0;
  // Whether the compile's precision relaxes float32 (EngineOptions::
  // Precision::kTf32 or kFp16Storage), so that a kernel may trade float32
  // rounding for speed: Winograd F(4x4, 3x3) on CPUs fits only then.
  virtual bool relaxed_fp32() const { return false; }

  // Arg returns the argument that reads or writes value `id` (kNoValue gives
  // a null buffer).
  virtual DispatchArg Arg(ValueId id) const = 0;
  // Scratch returns the current node's scratch memory
  // (KernelVariant::scratch_bytes), or a null buffer when it has none.
  virtual DispatchArg Scratch() const = 0;
  // Kernel returns the index of a kernel, adding it once per (program,
  // options, name). `program` is a kernel-library file ("conv2d.cl") or a
  // name given to RegisterKernelSource.
  virtual int32_t Kernel(const std::string& program, const std::string& name,
                         std::vector<std::string> options = {}) = 0;
  // Emit appends `dispatch` and returns it for further edits until the next
  // Emit. Its label is prefixed with the node's name.
  virtual Dispatch& Emit(Dispatch dispatch) = 0;
  // AddConstant uploads `data` as a new constant.
  virtual DispatchArg AddConstant(std::shared_ptr<const HostData> data) = 0;
  // ReplaceConstant stores `data`, a relayout of constant value `id`, in its
  // place when nothing else reads `id` (so the original is not uploaded
  // too); otherwise it is added. Returns the argument that reads it.
  virtual DispatchArg ReplaceConstant(ValueId id, std::shared_ptr<const HostData> data) = 0;
  // The same for float32 data (copied).
  DispatchArg AddConstant(std::shared_ptr<const std::vector<float>> data) {
    return AddConstant(std::make_shared<const HostData>(*data));
  }
  DispatchArg ReplaceConstant(ValueId id, std::shared_ptr<const std::vector<float>> data) {
    return ReplaceConstant(id, std::make_shared<const HostData>(*data));
  }

  // What a node writes: its own output and activation or, when the residual
  // pass paired it with the Add after it, the Add's output and activation
  // and the Add's other operand.
  struct Output {
    ValueId y = kNoValue;
    ValueId residual = kNoValue;
    Activation activation;
  };
  virtual Output OutputOf(const Node& node) const = 0;
  // ResidualAfterBias: for a node whose variant absorbs_bias_then_residual
  // and that the pass paired with both Adds, the second Add's other operand
  // (added after the bias, OutputOf's residual); kNoValue otherwise.
  virtual ValueId ResidualAfterBias(const Node& node) const {
    (void)node;
    return kNoValue;
  }

  // NormAfter: for a node whose variant absorbs_layernorm_after, the
  // LayerNormalization over the last axis that reads OutputOf(node).y right
  // after the node (and the Adds it absorbs), whose output the planner keeps
  // from the node on; null otherwise. A lowering that computes it calls
  // MarkNormApplied, and that node emits nothing; otherwise it runs itself.
  virtual const Node* NormAfter(const Node& node) const {
    (void)node;
    return nullptr;
  }
  virtual void MarkNormApplied() {}

  // MarkActivationApplied says the node's kernel applied OutputOf(node).
  // activation itself; otherwise the framework applies the node's fused
  // activation with one more dispatch.
  virtual void MarkActivationApplied() = 0;

  // params returns the parameters chosen for the node being lowered (empty:
  // the variant's heuristic ones). Lowerings read them with ParamOr.
  virtual const KernelParams& params() const {
    static const KernelParams kNone;
    return kNone;
  }
  // ParamOr returns params()[name], or `heuristic` when it was not chosen.
  int64_t ParamOr(const std::string& name, int64_t heuristic) const {
    auto it = params().find(name);
    return it == params().end() ? heuristic : it->second;
  }
};

// --- the op ---

using InferInputs = absl::Span<const TensorDesc* const>;

struct OpDef {
  OpType type;

  // Import from ONNX (none: the op is reached through the graph API only).
  std::vector<OnnxMapping> onnx;

  // Shape and type inference: the output description for inputs of these
  // descriptions (nullptr for an absent optional input), or InvalidArgument
  // saying what does not fit. Also validates the attributes.
  std::function<absl::StatusOr<TensorDesc>(const OpAttrs& attrs, InferInputs inputs)> infer;
  // The op takes inputs of any element type and its infer checks them and
  // sets the output's. Otherwise (the default) every input must be float32,
  // which InferOutputShape checks before infer runs.
  bool typed = false;

  // Writes a node of this op as ONNX (opset 13); empty: not exportable.
  std::function<absl::Status(const Node& node, const Graph& graph, OnnxNodeWriter& out)>
      export_onnx;

  // Kernel variants, in order of preference.
  std::vector<KernelVariant> variants;

  // --- what the op absorbs (declared here, applied by the passes) ---

  // The op's kernels apply a fused activation (Node::fused) themselves.
  bool absorbs_activation = false;
  // The op is an activation: the one it applies (FuseActivations moves it
  // into the op before it).
  std::function<Activation(const Node& node)> as_activation;
  // The op is an element-wise Add that a variant with absorbs_residual_add
  // may take over.
  bool is_residual_add = false;
  // The op is element-wise over float tensors, its inputs broadcast
  // (numpy) to its output: the OpenCL C expression of one output element,
  // given one expression per input (`operands`, variables of type float or
  // floatN), valid for both types and free of spaces; "" where this node
  // has no such form (another input count, an attribute it cannot express).
  // FuseElementwise (engine/fusion/) merges chains of such nodes into one
  // kernel. The node's fused activation is applied by the pass.
  std::function<std::string(const Node& node, const std::vector<std::string>& operands)>
      elementwise;
  // The node's attributes as text, for the auto-tuner's key of an op that
  // has no export_onnx (one made by the passes, such as Attention); null or
  // "": nodes of the op are not tuned.
  std::function<std::string(const Node& node)> tuning_attrs;
  // The output is input 0 under another shape (Reshape, Flatten, Identity):
  // lowering aliases the memory and emits nothing where it can.
  bool is_view = false;
  // The op computes x * scale[c] + shift[c] per channel of dimension 1
  // (inference BatchNorm): the scale and shift, if its parameters are
  // constants (`constant` returns a value's data or nullptr).
  std::function<std::optional<std::pair<std::vector<float>, std::vector<float>>>(
      const Node& node, const std::function<const std::vector<float>*(ValueId)>& constant)>
      as_channel_affine;
  // The op can absorb y * scale[c] + shift[c] on its output channels into
  // its constant weights (input 1) and bias (input 2): returns the new
  // weights, bias and attributes, or nullopt when it cannot.
  struct FoldedWeights {
    std::vector<float> weights;
    std::vector<float> bias;
    OpAttrs attrs;
  };
  std::function<std::optional<FoldedWeights>(
      const Node& node, const std::function<const std::vector<float>*(ValueId)>& constant,
      const std::function<const TensorDesc&(ValueId)>& desc, const std::vector<float>& scale,
      const std::vector<float>& shift)>
      fold_channel_affine;
};

// RegisterOp adds `def` to the registry. AlreadyExists if its type or one of
// its ONNX mappings is taken; InvalidArgument if it has no name, no infer or
// no variant.
[[nodiscard]] absl::Status RegisterOp(OpDef def);

// RegisterKernelSource makes `source` available to lowering under
// `program` (a name ending in ".cl" that no library file has). The shared
// prelude of the kernel library is put in front of it, as for library files.
[[nodiscard]] absl::Status RegisterKernelSource(const std::string& program, std::string source);

// RegisterOnnxMapping adds an ONNX import that belongs to no single op
// (Constant, which defines a value; Dropout, which emits an Identity).
// AlreadyExists if (domain, op_type) overlaps a registered opset range.
[[nodiscard]] absl::Status RegisterOnnxMapping(OnnxMapping mapping);

// FindOp returns the op's definition, or nullptr if none is registered.
const OpDef* FindOp(OpType type);
// FindOnnxMapping returns the import of (domain, op_type) at `opset`, or
// nullptr; `domain` "ai.onnx" is the default domain "".
const OnnxMapping* FindOnnxMapping(absl::string_view domain, absl::string_view op_type,
                                   int64_t opset);
// OnnxOpsetsOf renders the opset ranges (domain, op_type) is imported for
// ("7-17"), or "" if it is not imported at all.
std::string OnnxOpsetsOf(absl::string_view domain, absl::string_view op_type);
// RegisteredOps lists every registered op, sorted by name.
std::vector<const OpDef*> RegisteredOps();
// RegisteredOnnxMappings lists every ONNX import, sorted by domain and type.
std::vector<const OnnxMapping*> RegisteredOnnxMappings();

}  // namespace recq

#endif  // RECQ_OP_REGISTRY_H_
