// ONNX models in: LoadOnnx turns an ONNX model (opsets 1 to 21, each op
// within the opsets its mapping declares) into a recq Graph.
//
//   absl::StatusOr<Graph> g = LoadOnnx("mobilenetv2.onnx");
//   Engine e = Engine::Compile(ctx, *g).value();   // bind by ONNX tensor names
//
// Initializers (float32, float16, int64, int32, int8, uint8, bool; inline or
// in external data files) become constants; graph inputs that are initializers
// are not bindings. Value names are the ONNX tensor names, node names the
// ONNX node names (or "<OpType>_<index>" for unnamed nodes). Constant nodes
// are folded. Supported ops: Conv (2-D), BatchNormalization (inference),
// Relu, Clip, LeakyRelu, Sigmoid, HardSigmoid, HardSwish, Add, Sub, Mul, Div,
// MaxPool, AveragePool, GlobalAveragePool, Gemm, MatMul, Flatten, Reshape,
// Transpose, Concat, Softmax, Erf, Identity, Dropout (inference), Constant,
// and ops of any domain an application registered (recq/op_registry.h).
//
// Errors: InvalidArgument for a file that is not a valid ONNX model (truncated,
// corrupt, a tensor nobody produces, a cycle, a dynamic dimension, a shape
// that does not fit an op); Unimplemented for an op, attribute value, opset or
// element type that recq does not support. Messages name the node, its op
// type and what is wrong. Nothing here aborts on malformed input.
#ifndef RECQ_ONNX_H_
#define RECQ_ONNX_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "recq/graph.h"
#include "recq/preprocess.h"
#include "recq/shape_profile.h"

namespace recq {

// How a model is loaded. Every input has a static shape once loaded (a
// recording is for one shape): these give the dimensions a model leaves
// symbolic (a dynamic batch, height or width), like trtexec's --shapes.
struct OnnxOptions {
  // Shapes of graph inputs by name. Each replaces the input's declared
  // shape: its rank must match, and its fixed dimensions must agree.
  std::map<std::string, std::vector<int64_t>> input_shapes;
  // Values of symbolic dimensions by their dim_param name ("batch" -> 4),
  // for every input that uses them and has no entry in input_shapes.
  std::map<std::string, int64_t> dim_values;
  // Shape profiles by input name (recq/shape_profile.h): the shapes a
  // ShapedEngine (recq/shaped_engine.h) serves. An input whose profile is
  // fixed loads as if given in input_shapes; LoadOnnx rejects a range
  // (InvalidArgument naming the input): one Graph has one shape.
  ShapeProfiles profiles;
  // The folder from which tensors stored as external data are read.
  // LoadOnnx uses the model file's folder when this is empty; for
  // LoadOnnxFromBytes, external data is an error unless it is set.
  std::string external_data_dir;
  // Pre- and post-processing applied to the imported graph
  // (ApplyPrePostProcessing, recq/preprocess.h): camera frames in.
  PrePostProcessing prepost;
  // The most elements import computes by folding constant subgraphs (shape
  // arithmetic, masks, tables), summed over the whole model; one folded
  // constant holds at most 2^26. A fold past either limit is Unimplemented,
  // naming the node. Initializers and Constant nodes do not count.
  int64_t max_folded_elements = int64_t{1} << 28;
};

// LoadOnnx reads and imports the ONNX model file at `path`.
[[nodiscard]] absl::StatusOr<Graph> LoadOnnx(const std::string& path,
                                             const OnnxOptions& options = {});

// LoadOnnxFromBytes imports a serialized onnx.ModelProto.
[[nodiscard]] absl::StatusOr<Graph> LoadOnnxFromBytes(absl::string_view bytes,
                                                      const OnnxOptions& options = {});

// OnnxModel: a model file parsed once and imported any number of times, at
// different input shapes (each import folds the shape subgraphs for its
// shapes). Imports share the initializers: the same initializer gives the
// same HostData object (Value::data) in every Graph imported from one
// OnnxModel, so engines compiled from them can share its device copy.
// Cheap to copy; Import may be called from several threads.
class OnnxModel {
 public:
  // Read parses the file at `path`; external data is read from
  // `external_data_dir` (empty: the file's folder).
  [[nodiscard]] static absl::StatusOr<OnnxModel> Read(const std::string& path,
                                                      const std::string& external_data_dir = "");
  // FromBytes parses a serialized onnx.ModelProto (external data only with
  // a directory).
  [[nodiscard]] static absl::StatusOr<OnnxModel> FromBytes(
      absl::string_view bytes, const std::string& external_data_dir = "");

  // Import builds the Graph for `options` (as LoadOnnx, without re-reading
  // the file; options.external_data_dir is ignored: Read's is used).
  [[nodiscard]] absl::StatusOr<Graph> Import(const OnnxOptions& options) const;

  // The graph inputs (initializers excluded), in model order, with their
  // declared dimensions (0 for a symbolic one).
  struct Input {
    std::string name;
    std::vector<int64_t> dims;
    std::vector<std::string> dim_params;  // "" where fixed or unnamed
    DataType dtype = DataType::kFloat32;  // (float32 for a type recq lacks)
  };
  const std::vector<Input>& inputs() const;
  // The file it was read from ("" for FromBytes), for messages.
  const std::string& path() const;
  // SerializeToBytes returns the model as a serialized onnx.ModelProto.
  std::string SerializeToBytes() const;

  struct State;

 private:
  explicit OnnxModel(std::shared_ptr<const State> state) : state_(std::move(state)) {}
  std::shared_ptr<const State> state_;
};

// ParseShapes reads trtexec-style shapes, "input:4x3x224x224,mask:4x128",
// into OnnxOptions::input_shapes; InvalidArgument naming the bad part.
[[nodiscard]] absl::StatusOr<std::map<std::string, std::vector<int64_t>>> ParseShapes(
    absl::string_view text);

// SaveOnnxToBytes writes `graph` as a serialized onnx.ModelProto named
// `name` (default-domain opset 13, float32 initializers in raw_data), through
// each op's export function (OpDef::export_onnx): Conv2D, BatchNorm, the
// activations, Add/Sub/Mul/Div, the pools, Gemm, MatMul, Flatten, Softmax,
// Transpose, Concat, Identity. A node with a fused activation, or of an op
// without an export, is Unimplemented naming it.
[[nodiscard]] absl::StatusOr<std::string> SaveOnnxToBytes(const Graph& graph,
                                                          const std::string& name);

// IsSupportedOnnxOp tells whether LoadOnnx knows the ONNX op type (of the
// default domain); attribute values may still be unsupported.
bool IsSupportedOnnxOp(absl::string_view op_type);

// What a model file declares, read without importing it (for `recq info`).
struct OnnxModelSummary {
  struct Tensor {
    std::string name;
    std::string shape;  // "1x3x224x224", dim_params by name ("Nx3x224x224")
    std::string dtype;  // "float32", "int64"...
  };
  int64_t ir_version = 0;
  int64_t opset = 0;  // of the default domain; 0 if not declared
  std::string producer;
  std::vector<Tensor> inputs;  // excluding initializers
  std::vector<Tensor> outputs;
  int64_t initializers = 0;
  std::map<std::string, int64_t> op_counts;  // by ONNX op type
  std::vector<std::string> unsupported_ops;  // op types LoadOnnx rejects, sorted
};

// SummarizeOnnx parses the model file at `path` and summarizes it.
[[nodiscard]] absl::StatusOr<OnnxModelSummary> SummarizeOnnx(const std::string& path);

}  // namespace recq

#endif  // RECQ_ONNX_H_
