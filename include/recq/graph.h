// Graph: the op-level description of a model, and GraphBuilder to make one.
//
//   GraphBuilder b;
//   auto x = b.Input("input", {1, 3, 224, 224});
//   auto w = b.Constant("conv1.w", {32, 3, 3, 3}, weights);
//   auto y = b.Relu(b.Conv2D(x, w, {}, {.strides = {2, 2}, .pads = {1, 1, 1, 1}}));
//   b.Output(y, "features");
//   absl::StatusOr<Graph> g = std::move(b).Build();
//
// Shapes are inferred as nodes are added. The first error (bad shape,
// unknown tensor, duplicate name...) is kept and returned by Build(), naming
// the node and what was expected; later calls that depend on a failed tensor
// are ignored. A Graph is immutable and cheap to copy (weights are shared).
#ifndef RECQ_GRAPH_H_
#define RECQ_GRAPH_H_

#include <any>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "recq/tensor.h"

namespace recq {

// OpType names an op of the op registry (recq/op_registry.h): the key under
// which the op declares its attributes, shape inference, ONNX mapping and
// kernels. It is an open key, not a list: an op added to the registry (a
// built-in one under engine/ops/, or an application's custom op) is named by
// OpType("Name") or OpType::Named(name) without editing this header. The
// constants below name the ops the graph API has always had; every other
// registered op is reached the same way through GraphBuilder::AddNode.
class OpType {
 public:
  constexpr OpType() = default;
  // `name` must have static storage duration (a string literal); use Named()
  // for a name built at run time.
  constexpr explicit OpType(const char* name) : name_(name) {}
  // Named returns the OpType of `name`, interning a copy of it for the life
  // of the process. Thread-safe.
  static OpType Named(absl::string_view name);

  const char* name() const { return name_; }

  friend bool operator==(OpType a, OpType b) {
    return a.name_ == b.name_ || absl::string_view(a.name_) == absl::string_view(b.name_);
  }
  friend bool operator!=(OpType a, OpType b) { return !(a == b); }
  template <typename H>
  friend H AbslHashValue(H h, OpType op) {
    return H::combine(std::move(h), absl::string_view(op.name_));
  }

  static const OpType kConv2D;       // inputs: x [N,C,H,W], w [OC,C/groups,KH,KW], optional bias
  static const OpType kBatchNorm;    // inputs: x, scale [C], bias [C], mean [C], var [C]
  static const OpType kRelu;         // unary activations (ActivationAttrs)
  static const OpType kClip;         // y = min(max(x, alpha), beta)
  static const OpType kLeakyRelu;    // y = x >= 0 ? x : alpha * x
  static const OpType kSigmoid;      //
  static const OpType kHardSigmoid;  // y = clamp(alpha * x + beta, 0, 1)
  static const OpType kHardSwish;    // y = x * clamp(x / 6 + 0.5, 0, 1)
  static const OpType kAdd;          // binary element-wise with numpy broadcasting
  static const OpType kSub;
  static const OpType kMul;
  static const OpType kDiv;
  static const OpType kMaxPool;      // PoolAttrs
  static const OpType kAveragePool;  // PoolAttrs
  static const OpType kGlobalAveragePool;
  static const OpType kGemm;       // inputs: a, b, optional c; GemmAttrs
  static const OpType kMatMul;     // numpy matmul semantics
  static const OpType kFlatten;    // FlattenAttrs
  static const OpType kReshape;    // ReshapeAttrs
  static const OpType kTranspose;  // TransposeAttrs
  static const OpType kConcat;     // ConcatAttrs
  static const OpType kSoftmax;    // SoftmaxAttrs
  static const OpType kIdentity;

 private:
  const char* name_ = "";
};

inline constexpr OpType OpType::kConv2D{"Conv2D"};
inline constexpr OpType OpType::kBatchNorm{"BatchNorm"};
inline constexpr OpType OpType::kRelu{"Relu"};
inline constexpr OpType OpType::kClip{"Clip"};
inline constexpr OpType OpType::kLeakyRelu{"LeakyRelu"};
inline constexpr OpType OpType::kSigmoid{"Sigmoid"};
inline constexpr OpType OpType::kHardSigmoid{"HardSigmoid"};
inline constexpr OpType OpType::kHardSwish{"HardSwish"};
inline constexpr OpType OpType::kAdd{"Add"};
inline constexpr OpType OpType::kSub{"Sub"};
inline constexpr OpType OpType::kMul{"Mul"};
inline constexpr OpType OpType::kDiv{"Div"};
inline constexpr OpType OpType::kMaxPool{"MaxPool"};
inline constexpr OpType OpType::kAveragePool{"AveragePool"};
inline constexpr OpType OpType::kGlobalAveragePool{"GlobalAveragePool"};
inline constexpr OpType OpType::kGemm{"Gemm"};
inline constexpr OpType OpType::kMatMul{"MatMul"};
inline constexpr OpType OpType::kFlatten{"Flatten"};
inline constexpr OpType OpType::kReshape{"Reshape"};
inline constexpr OpType OpType::kTranspose{"Transpose"};
inline constexpr OpType OpType::kConcat{"Concat"};
inline constexpr OpType OpType::kSoftmax{"Softmax"};
inline constexpr OpType OpType::kIdentity{"Identity"};

// OpTypeName returns the op's registry name ("Conv2D", "BatchNorm"...).
inline const char* OpTypeName(OpType op) { return op.name(); }

// The activations a kernel can apply to its output (RECQ_ACT_* in
// engine/kernels/common/common.cl, same codes). kSilu is x * sigmoid(x);
// kGelu is x * Phi(x) (the Gelu op), kGeluTanh its tanh approximation.
enum class ActivationKind {
  kNone,
  kRelu,
  kClip,
  kLeakyRelu,
  kSigmoid,
  kHardSigmoid,
  kHardSwish,
  kSilu,
  kGelu,
  kGeluTanh
};
const char* ActivationKindName(ActivationKind kind);

// An activation applied to an op's output inside the same kernel (set by the
// fusion pass, or directly by graph authors on Conv2D/Gemm/Add).
struct Activation {
  ActivationKind kind = ActivationKind::kNone;
  float alpha = 0.0f;
  float beta = 0.0f;
};

struct Conv2DAttrs {
  std::array<int64_t, 2> strides = {1, 1};
  std::array<int64_t, 2> dilations = {1, 1};
  std::array<int64_t, 4> pads = {0, 0, 0, 0};  // top, left, bottom, right
  int64_t groups = 1;
};
struct BatchNormAttrs {
  float epsilon = 1e-5f;
};
struct ActivationAttrs {
  float alpha = 0.0f;  // Clip: min; LeakyRelu: slope; HardSigmoid: alpha
  float beta = 0.0f;   // Clip: max; HardSigmoid: beta
};
struct PoolAttrs {
  std::array<int64_t, 2> kernel = {1, 1};
  std::array<int64_t, 2> strides = {1, 1};
  std::array<int64_t, 2> dilations = {1, 1};
  std::array<int64_t, 4> pads = {0, 0, 0, 0};  // top, left, bottom, right
  bool ceil_mode = false;
  bool count_include_pad = false;  // AveragePool only
};
struct GemmAttrs {
  float alpha = 1.0f;
  float beta = 1.0f;
  bool trans_a = false;
  bool trans_b = false;
};
struct FlattenAttrs {
  int64_t axis = 1;
};
struct ReshapeAttrs {
  std::vector<int64_t> shape;  // 0 copies the input's dimension, -1 is inferred
  bool allow_zero = false;     // ONNX allowzero: 0 means a zero-size dimension
};
struct TransposeAttrs {
  std::vector<int64_t> perm;  // empty reverses the dimensions
};
struct ConcatAttrs {
  int64_t axis = 0;
};
struct SoftmaxAttrs {
  int64_t axis = -1;
  // ONNX opset < 13: the input is coerced to 2-D at `axis` and the softmax
  // runs over all dimensions from `axis` on.
  bool coerce_to_2d = false;
};

// OpAttrs holds one op's attribute struct (Conv2DAttrs, an op file's own
// struct, or a custom op's), or nothing. Any copyable struct converts to it,
// so `b.AddNode(OpType::kConv2D, {x, w}, Conv2DAttrs{...})` reads as before;
// the op that owns the struct reads it back with get_if<T>().
class OpAttrs {
 public:
  OpAttrs() = default;
  OpAttrs(std::monostate) {}  // NOLINT: "no attributes", as before
  template <typename T,
            typename = std::enable_if_t<!std::is_same_v<std::decay_t<T>, OpAttrs> &&
                                        !std::is_same_v<std::decay_t<T>, std::monostate>>>
  OpAttrs(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design

  bool empty() const { return !value_.has_value(); }
  // get_if returns the held struct if it is a T, else nullptr.
  template <typename T>
  const T* get_if() const {
    return std::any_cast<T>(&value_);
  }
  template <typename T>
  T* get_if() {
    return std::any_cast<T>(&value_);
  }

 private:
  std::any value_;
};

using ValueId = int32_t;
inline constexpr ValueId kNoValue = -1;

// A tensor of the graph: a graph input, a constant (weights), or a node's
// output. Names are unique within a graph.
struct Value {
  enum class Kind { kInput, kConstant, kIntermediate };
  std::string name;
  TensorDesc desc;
  Kind kind = Kind::kIntermediate;
  std::shared_ptr<const HostData> data;  // constants only, of desc.dtype
  ValueId producer_node = -1;            // intermediates only

  // floats returns a float32 constant's elements (empty for any other value).
  absl::Span<const float> floats() const {
    return data != nullptr ? data->span<float>() : absl::Span<const float>();
  }
  // ints returns an int64 constant's elements (empty for any other value).
  absl::Span<const int64_t> ints() const {
    return data != nullptr ? data->span<int64_t>() : absl::Span<const int64_t>();
  }
};

struct Node {
  OpType op;
  std::string name;
  std::vector<ValueId> inputs;  // kNoValue marks an absent optional input
  std::vector<ValueId> outputs;
  OpAttrs attrs;
  Activation fused;  // applied to the output; kNone unless fused or set
};

// ActivationOfNode returns the activation an activation node (Relu, Clip,
// LeakyRelu, Sigmoid, HardSigmoid, HardSwish) applies, with its parameters;
// kind kNone for every other op.
Activation ActivationOfNode(const Node& node);

// Graph is an immutable, validated, topologically ordered op graph.
class Graph {
 public:
  // An empty graph (no values, no nodes); Engine::Compile rejects it.
  Graph() : state_(std::make_shared<const State>()) {}

  const std::vector<Value>& values() const { return state_->values; }
  const std::vector<Node>& nodes() const { return state_->nodes; }
  const std::vector<ValueId>& inputs() const { return state_->inputs; }
  const std::vector<ValueId>& outputs() const { return state_->outputs; }
  const Value& value(ValueId id) const { return state_->values[id]; }

  // Create validates the parts (ids in range, every intermediate produced
  // exactly once, acyclic, shapes consistent with each op) and returns the
  // graph with nodes in topological order. Used by passes and importers.
  [[nodiscard]] static absl::StatusOr<Graph> Create(std::vector<Value> values,
                                                    std::vector<Node> nodes,
                                                    std::vector<ValueId> inputs,
                                                    std::vector<ValueId> outputs);

 private:
  struct State {
    std::vector<Value> values;
    std::vector<Node> nodes;
    std::vector<ValueId> inputs;
    std::vector<ValueId> outputs;
  };
  explicit Graph(std::shared_ptr<const State> state) : state_(std::move(state)) {}
  std::shared_ptr<const State> state_;
};

// InferOutputShape returns the output description of `op` applied to inputs
// of the given descriptions (nullptr for an absent optional input), or an
// InvalidArgument naming what does not fit.
[[nodiscard]] absl::StatusOr<TensorDesc> InferOutputShape(
    OpType op, const OpAttrs& attrs, absl::Span<const TensorDesc* const> inputs);

// A reference to a tensor inside a GraphBuilder.
struct TensorRef {
  ValueId id = kNoValue;
  bool valid() const { return id != kNoValue; }
};

class GraphBuilder {
 public:
  GraphBuilder() = default;

  TensorRef Input(std::string name, std::vector<int64_t> shape,
                  DataType dtype = DataType::kFloat32);
  TensorRef Constant(std::string name, std::vector<int64_t> shape, std::vector<float> data);
  // A constant of any element type (the type is data's).
  TensorRef Constant(std::string name, std::vector<int64_t> shape, HostData data);
  // AddNode appends a node of any op; `inputs` may hold invalid refs for
  // absent optional inputs. Returns the node's (single) output.
  TensorRef AddNode(OpType op, std::vector<TensorRef> inputs, OpAttrs attrs = {},
                    std::string name = "");

  TensorRef Conv2D(TensorRef x, TensorRef w, TensorRef bias, const Conv2DAttrs& attrs);
  TensorRef BatchNorm(TensorRef x, TensorRef scale, TensorRef bias, TensorRef mean, TensorRef var,
                      float epsilon = 1e-5f);
  TensorRef Relu(TensorRef x);
  TensorRef Clip(TensorRef x, float min, float max);
  TensorRef Add(TensorRef a, TensorRef b);
  TensorRef GlobalAveragePool(TensorRef x);
  TensorRef Gemm(TensorRef a, TensorRef b, TensorRef c, const GemmAttrs& attrs);
  // FullyConnected computes x[M,K] * w[N,K]^T + bias[N].
  TensorRef FullyConnected(TensorRef x, TensorRef w, TensorRef bias);
  TensorRef Softmax(TensorRef x, int64_t axis = -1);
  TensorRef Flatten(TensorRef x, int64_t axis = 1);
  TensorRef Reshape(TensorRef x, std::vector<int64_t> shape);

  // SetFusedActivation sets the activation applied by the node producing `t`.
  void SetFusedActivation(TensorRef t, Activation activation);
  // Output marks `t` as a graph output bound under `name`.
  void Output(TensorRef t, std::string name);

  // desc returns the inferred description of `t` (empty if `t` failed).
  const TensorDesc& desc(TensorRef t) const;
  // status is the first error so far.
  const absl::Status& status() const { return status_; }

  // Build returns the graph, or the first error recorded while building.
  [[nodiscard]] absl::StatusOr<Graph> Build() &&;

 private:
  bool Check(TensorRef t, const char* what);
  TensorRef AddValue(Value value);
  std::string UniqueName(const std::string& base);

  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  absl::Status status_;
  int64_t counter_ = 0;
};

}  // namespace recq

#endif  // RECQ_GRAPH_H_
