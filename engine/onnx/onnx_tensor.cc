#include "engine/onnx/onnx_tensor.h"

#include <climits>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace recq::onnx_import {

int64_t HostTensorData::size() const {
  return is_float() ? static_cast<int64_t>(floats.size()) : static_cast<int64_t>(ints.size());
}

std::string DataTypeName(int32_t data_type) {
  switch (data_type) {
    case onnx::TensorProto::FLOAT:
      return "float32";
    case onnx::TensorProto::UINT8:
      return "uint8";
    case onnx::TensorProto::INT8:
      return "int8";
    case onnx::TensorProto::UINT16:
      return "uint16";
    case onnx::TensorProto::INT16:
      return "int16";
    case onnx::TensorProto::INT32:
      return "int32";
    case onnx::TensorProto::INT64:
      return "int64";
    case onnx::TensorProto::STRING:
      return "string";
    case onnx::TensorProto::BOOL:
      return "bool";
    case onnx::TensorProto::FLOAT16:
      return "float16";
    case onnx::TensorProto::DOUBLE:
      return "float64";
    case onnx::TensorProto::UINT32:
      return "uint32";
    case onnx::TensorProto::UINT64:
      return "uint64";
    case onnx::TensorProto::BFLOAT16:
      return "bfloat16";
    case onnx::TensorProto::UNDEFINED:
      return "undefined";
    default:
      return absl::StrCat("data type ", data_type);
  }
}

absl::StatusOr<HostTensorData> DecodeTensor(const onnx::TensorProto& tensor) {
  HostTensorData out;
  out.name = tensor.name();
  out.data_type = tensor.data_type();
  const std::string label =
      tensor.name().empty() ? "a tensor" : absl::StrCat("tensor '", tensor.name(), "'");
  if (!out.is_float() && !out.is_int64()) {
    return absl::UnimplementedError(
        absl::StrCat(label, " has element type ", DataTypeName(out.data_type),
                     "; only float32 (and int64 shapes) are supported"));
  }
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    return absl::UnimplementedError(
        absl::StrCat(label, " uses external data, which is not supported"));
  }
  int64_t count = 1;
  for (int64_t d : tensor.dims()) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(label, " has invalid dims [", absl::StrJoin(tensor.dims(), ","), "]"));
    }
    constexpr int64_t kMax = INT64_C(1) << 34;
    if (d > kMax || (count != 0 && d > kMax / count)) {
      return absl::InvalidArgumentError(
          absl::StrCat(label, " is too large: dims [", absl::StrJoin(tensor.dims(), ","), "]"));
    }
    count *= d;
    out.dims.push_back(d);
  }
  const size_t elem = out.is_float() ? 4 : 8;
  if (tensor.has_raw_data()) {
    const std::string& raw = tensor.raw_data();
    if (raw.size() != static_cast<size_t>(count) * elem) {
      return absl::InvalidArgumentError(absl::StrCat(label, " has ", raw.size(),
                                                     " bytes of raw_data, its dims need ",
                                                     count * static_cast<int64_t>(elem)));
    }
    // raw_data is little-endian, like every host recq runs on.
    if (out.is_float()) {
      out.floats.resize(count);
      if (count > 0) std::memcpy(out.floats.data(), raw.data(), raw.size());
    } else {
      out.ints.resize(count);
      if (count > 0) std::memcpy(out.ints.data(), raw.data(), raw.size());
    }
    return out;
  }
  const int64_t have = out.is_float() ? tensor.float_data_size() : tensor.int64_data_size();
  if (have != count) {
    return absl::InvalidArgumentError(absl::StrCat(label, " has ", have, " values, its dims [",
                                                   absl::StrJoin(out.dims, ","), "] need ", count));
  }
  if (out.is_float()) {
    out.floats.assign(tensor.float_data().begin(), tensor.float_data().end());
  } else {
    out.ints.assign(tensor.int64_data().begin(), tensor.int64_data().end());
  }
  return out;
}

absl::StatusOr<HostTensorData> ParseTensorBytes(absl::string_view bytes) {
  onnx::TensorProto proto;
  if (bytes.size() > static_cast<size_t>(INT_MAX) ||
      !proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a valid serialized onnx.TensorProto (", bytes.size(), " bytes)"));
  }
  return DecodeTensor(proto);
}

}  // namespace recq::onnx_import
