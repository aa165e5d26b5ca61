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
#include "recq/data_type.h"

namespace recq::onnx_import {

// A decoded tensor of one of recq's element types (recq/data_type.h).
// Floating-point elements are held as floats (float16 converted), integers
// and bools as int64, so that import-time folding has one path per kind;
// float64 elements are kept in `doubles` too, at full precision.
struct HostTensorData {
  std::string name;
  std::vector<int64_t> dims;
  int32_t data_type = 0;  // onnx::TensorProto::DataType
  DataType dtype = DataType::kFloat32;
  std::vector<float> floats;    // float32, float16, float64 (rounded)
  std::vector<double> doubles;  // float64
  std::vector<int64_t> ints;    // int64, int32, int8, uint8, bool
  bool is_float() const { return IsFloatingPoint(dtype); }
  int64_t size() const;
};

// DataTypeName renders an onnx::TensorProto::DataType ("float32", "int64"...).
std::string DataTypeName(int32_t data_type);

// FromOnnxType maps an onnx::TensorProto::DataType to recq's element type;
// Unimplemented (naming `what`) for the ones recq has not (string,
// bfloat16, uint16...).
[[nodiscard]] absl::StatusOr<DataType> FromOnnxType(int32_t data_type, absl::string_view what);
// ToOnnxType maps back.
int32_t ToOnnxType(DataType dtype);

// DecodeTensor decodes a TensorProto of any recq element type (raw_data
// little-endian, the typed fields, or external data). External data files
// are read from `external_dir` (relative locations only, inside it); an
// empty `external_dir` makes external data an error saying how to set it.
[[nodiscard]] absl::StatusOr<HostTensorData> DecodeTensor(const onnx::TensorProto& tensor,
                                                          absl::string_view external_dir = "");

// CheckRawTensor checks what DecodeTensor would of a tensor whose elements
// are in raw_data (its element type, its dims and the byte count they need)
// without copying the elements.
[[nodiscard]] absl::Status CheckRawTensor(const onnx::TensorProto& tensor);

// ParseTensorBytes parses and decodes a serialized TensorProto.
[[nodiscard]] absl::StatusOr<HostTensorData> ParseTensorBytes(absl::string_view bytes);

}  // namespace recq::onnx_import

#endif  // RECQ_ENGINE_ONNX_ONNX_TENSOR_H_
