// Decoding onnx.TensorProto into host vectors: the importer's initializers
// and Constant nodes, and the conformance tests' input_*.pb / output_*.pb.
#ifndef RECQ_ENGINE_ONNX_ONNX_TENSOR_H_
#define RECQ_ENGINE_ONNX_ONNX_TENSOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "onnx/onnx_pb.h"

namespace recq::onnx_import {

// A decoded float32 or int64 tensor.
struct HostTensorData {
  std::string name;
  std::vector<int64_t> dims;
  int32_t data_type = 0;      // onnx::TensorProto::DataType
  std::vector<float> floats;  // FLOAT tensors
  std::vector<int64_t> ints;  // INT64 tensors
  bool is_float() const { return data_type == onnx::TensorProto::FLOAT; }
  bool is_int64() const { return data_type == onnx::TensorProto::INT64; }
  int64_t size() const;
};

// DataTypeName renders an onnx::TensorProto::DataType ("float32", "int64"...).
std::string DataTypeName(int32_t data_type);

// DecodeTensor decodes a FLOAT or INT64 TensorProto (raw_data little-endian
// or the typed fields). Other element types and external data are
// Unimplemented; sizes that do not match the dims are InvalidArgument.
[[nodiscard]] absl::StatusOr<HostTensorData> DecodeTensor(const onnx::TensorProto& tensor);

// ParseTensorFile parses and decodes a serialized TensorProto.
[[nodiscard]] absl::StatusOr<HostTensorData> ParseTensorBytes(absl::string_view bytes);

}  // namespace recq::onnx_import

#endif  // RECQ_ENGINE_ONNX_ONNX_TENSOR_H_
