// LoadDecoderOnnx (recq/generator.h): a decoder with past key/values
// imported at the static shapes of one decode step.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "onnx/onnx_pb.h"
#include "recq/generator.h"
#include "recq/onnx.h"
#include "recq/status_macros.h"

namespace recq {

absl::StatusOr<Graph> LoadDecoderOnnx(const std::string& path, int64_t max_length) {
  if (max_length < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("LoadDecoderOnnx: max_length is ", max_length, "; expected at least 2"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open '", path, "'"));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not an ONNX model"));
  }
  OnnxOptions options;
  options.external_data_dir = std::filesystem::path(path).parent_path().string();
  if (options.external_data_dir.empty()) options.external_data_dir = ".";
  std::vector<std::string> initializers;
  for (const onnx::TensorProto& t : model.graph().initializer()) initializers.push_back(t.name());
  for (const onnx::ValueInfoProto& v : model.graph().input()) {
    const std::string& name = v.name();
    if (std::find(initializers.begin(), initializers.end(), name) != initializers.end()) continue;
    const auto& dims = v.type().tensor_type().shape().dim();
    if (name == "input_ids" || name == "position_ids") {
      options.input_shapes[name] = {1, 1};
    } else if (name == "attention_mask") {
      options.input_shapes[name] = {1, max_length};
    } else if (dims.size() == 4 && absl::StrContains(name, "past")) {
      // [batch, heads, past, head_dim]: heads and head_dim are fixed.
      std::vector<int64_t> shape = {1, 0, max_length - 1, 0};
      for (int i : {1, 3}) {
        if (!dims[i].has_dim_value()) {
          return absl::InvalidArgumentError(
              absl::StrCat("LoadDecoderOnnx: input '", name, "' has a symbolic dimension ", i,
                           "; expected [batch, heads, past, head_dim] with fixed heads and "
                           "head_dim"));
        }
        shape[i] = dims[i].dim_value();
      }
      options.input_shapes[name] = shape;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "LoadDecoderOnnx: unexpected input '", name,
          "'; expected input_ids, attention_mask, position_ids and past_key_values.{i}.key/value"));
    }
  }
  model = onnx::ModelProto();
  return LoadOnnxFromBytes(bytes, options);
}

}  // namespace recq
