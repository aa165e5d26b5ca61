#include "engine/onnx/onnx_tensor.h"

#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "recq/status_macros.h"

namespace recq::onnx_import {

int64_t HostTensorData::size() const {
  return is_float() ? static_cast<int64_t>(floats.size()) : static_cast<int64_t>(ints.size());
}

std::string DataTypeName(int32_t data_type) { return OnnxTypeName(data_type); }

absl::StatusOr<DataType> FromOnnxType(int32_t data_type, absl::string_view what) {
  absl::StatusOr<DataType> t = DataTypeFromOnnx(data_type);
  if (t.ok()) return t;
  return absl::UnimplementedError(
      absl::StrCat(what, " has element type ", DataTypeName(data_type),
                   "; recq supports float32, float16, float64, int64, int32, int16, int8, "
                   "uint64, uint32, uint16, uint8 and bool"));
}

int32_t ToOnnxType(DataType dtype) { return DataTypeToOnnx(dtype); }

namespace {

// ReadExternal reads the bytes of a tensor stored in an external file
// (TensorProto.external_data: location, offset, length).
absl::StatusOr<std::string> ReadExternal(const onnx::TensorProto& tensor, absl::string_view label,
                                         absl::string_view external_dir, size_t expected) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const onnx::StringStringEntryProto& e : tensor.external_data()) {
    if (e.key() == "location") {
      location = e.value();
    } else if (e.key() == "offset" || e.key() == "length") {
      int64_t v = 0;
      if (!absl::SimpleAtoi(e.value(), &v) || v < 0) {
        return absl::InvalidArgumentError(absl::StrCat(label, " has external_data ", e.key(), " '",
                                                       e.value(), "'; expected a byte count"));
      }
      (e.key() == "offset" ? offset : length) = v;
    }
  }
  if (location.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(label, " uses external data but names no 'location'"));
  }
  if (external_dir.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        label, " keeps its data in the external file '", location,
        "'; load the model with LoadOnnx(path), or set OnnxOptions::external_data_dir"));
  }
  const std::filesystem::path rel(location);
  bool escapes = rel.is_absolute();
  for (const auto& part : rel) escapes |= part == "..";
  if (escapes) {
    return absl::InvalidArgumentError(
        absl::StrCat(label, " has external data location '", location,
                     "'; expected a relative path inside the model's folder"));
  }
  const std::filesystem::path path = std::filesystem::path(std::string(external_dir)) / rel;
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return absl::NotFoundError(
        absl::StrCat(label, ": cannot open its external data file ", path.string()));
  }
  if (length >= 0 && static_cast<size_t>(length) != expected) {
    return absl::InvalidArgumentError(absl::StrCat(
        label, " declares ", length, " bytes of external data, its dims need ", expected));
  }
  file.seekg(0, std::ios::end);
  const int64_t file_size = static_cast<int64_t>(file.tellg());
  if (offset > file_size || file_size - offset < static_cast<int64_t>(expected)) {
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": its external data file ", path.string(), " has ", file_size,
                     " bytes, too short for ", expected, " bytes at offset ", offset));
  }
  std::string bytes(expected, '\0');
  file.seekg(offset);
  if (!file.read(bytes.data(), static_cast<std::streamsize>(expected))) {
    return absl::DataLossError(absl::StrCat(label, ": reading ", expected, " bytes of ",
                                            path.string(), " at offset ", offset, " failed"));
  }
  return bytes;
}

// FromBytes fills `out` from little-endian elements of out.dtype.
void FromBytes(const std::string& raw, HostTensorData& out) {
  const size_t n = raw.size() / DataTypeSize(out.dtype);
  auto each = [&](auto tag, auto&& put) {
    using T = decltype(tag);
    for (size_t i = 0; i < n; ++i) {
      T v;
      std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));
      put(v);
    }
  };
  switch (out.dtype) {
    case DataType::kFloat32:
      out.floats.resize(n);
      if (n > 0) std::memcpy(out.floats.data(), raw.data(), raw.size());
      return;
    case DataType::kFloat16:
      each(uint16_t{}, [&](uint16_t v) { out.floats.push_back(HalfToFloat(v)); });
      return;
    case DataType::kInt64:
      out.ints.resize(n);
      if (n > 0) std::memcpy(out.ints.data(), raw.data(), raw.size());
      return;
    case DataType::kInt32:
      each(int32_t{}, [&](int32_t v) { out.ints.push_back(v); });
      return;
    case DataType::kInt8:
      each(int8_t{}, [&](int8_t v) { out.ints.push_back(v); });
      return;
    case DataType::kUInt8:
      each(uint8_t{}, [&](uint8_t v) { out.ints.push_back(v); });
      return;
    case DataType::kBool:
      each(uint8_t{}, [&](uint8_t v) { out.ints.push_back(v != 0); });
      return;
    case DataType::kFloat64:
      each(double{}, [&](double v) {
        out.doubles.push_back(v);
        out.floats.push_back(static_cast<float>(v));
      });
      return;
    case DataType::kUInt16:
      each(uint16_t{}, [&](uint16_t v) { out.ints.push_back(v); });
      return;
    case DataType::kInt16:
      each(int16_t{}, [&](int16_t v) { out.ints.push_back(v); });
      return;
    case DataType::kUInt32:
      each(uint32_t{}, [&](uint32_t v) { out.ints.push_back(v); });
      return;
    case DataType::kUInt64:
      // Held as int64: values of 2^63 and more wrap (only import-time
      // folding reads them; device data keeps its bits).
      each(uint64_t{}, [&](uint64_t v) { out.ints.push_back(static_cast<int64_t>(v)); });
      return;
  }
}

}  // namespace

namespace {

// DecodeHeader fills `out`'s name, types and dims from `tensor` and returns
// the byte count its elements need.
absl::StatusOr<size_t> DecodeHeader(const onnx::TensorProto& tensor, absl::string_view label,
                                    HostTensorData& out) {
  out.name = tensor.name();
  out.data_type = tensor.data_type();
  RECQ_ASSIGN_OR_RETURN(out.dtype, FromOnnxType(out.data_type, label));
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
  return static_cast<size_t>(count) * DataTypeSize(out.dtype);
}

std::string LabelOf(const onnx::TensorProto& tensor) {
  return tensor.name().empty() ? "a tensor" : absl::StrCat("tensor '", tensor.name(), "'");
}

absl::Status CheckRawSize(const std::string& raw, absl::string_view label, size_t expected) {
  if (raw.size() == expected) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(label, " has ", raw.size(), " bytes of raw_data, its dims need ", expected));
}

}  // namespace

absl::Status CheckRawTensor(const onnx::TensorProto& tensor) {
  const std::string label = LabelOf(tensor);
  HostTensorData header;
  RECQ_ASSIGN_OR_RETURN(const size_t expected, DecodeHeader(tensor, label, header));
  return CheckRawSize(tensor.raw_data(), label, expected);
}

absl::StatusOr<HostTensorData> DecodeTensor(const onnx::TensorProto& tensor,
                                            absl::string_view external_dir) {
  HostTensorData out;
  const std::string label = LabelOf(tensor);
  RECQ_ASSIGN_OR_RETURN(const size_t expected, DecodeHeader(tensor, label, out));
  const int64_t count = static_cast<int64_t>(expected / DataTypeSize(out.dtype));
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    RECQ_ASSIGN_OR_RETURN(std::string raw, ReadExternal(tensor, label, external_dir, expected));
    FromBytes(raw, out);
    return out;
  }
  if (tensor.has_raw_data()) {
    const std::string& raw = tensor.raw_data();
    RECQ_RETURN_IF_ERROR(CheckRawSize(raw, label, expected));
    FromBytes(raw, out);  // raw_data is little-endian, like every host recq runs on
    return out;
  }
  // The typed fields: float_data, double_data, int64_data, and int32_data
  // for the narrower integers, bool and float16 (its bits).
  int64_t have = 0;
  switch (out.dtype) {
    case DataType::kFloat32:
      have = tensor.float_data_size();
      break;
    case DataType::kFloat64:
      have = tensor.double_data_size();
      break;
    case DataType::kUInt32:
    case DataType::kUInt64:
      have = tensor.uint64_data_size();
      break;
    case DataType::kInt64:
      have = tensor.int64_data_size();
      break;
    default:
      have = tensor.int32_data_size();
      break;
  }
  if (have != count) {
    return absl::InvalidArgumentError(absl::StrCat(label, " has ", have, " values, its dims [",
                                                   absl::StrJoin(out.dims, ","), "] need ", count));
  }
  switch (out.dtype) {
    case DataType::kFloat32:
      out.floats.assign(tensor.float_data().begin(), tensor.float_data().end());
      break;
    case DataType::kFloat64:
      out.doubles.assign(tensor.double_data().begin(), tensor.double_data().end());
      out.floats.assign(tensor.double_data().begin(), tensor.double_data().end());
      break;
    case DataType::kFloat16:
      for (int32_t v : tensor.int32_data()) {
        out.floats.push_back(HalfToFloat(static_cast<uint16_t>(v)));
      }
      break;
    case DataType::kInt64:
      out.ints.assign(tensor.int64_data().begin(), tensor.int64_data().end());
      break;
    case DataType::kBool:
      for (int32_t v : tensor.int32_data()) out.ints.push_back(v != 0);
      break;
    case DataType::kUInt32:
    case DataType::kUInt64:
      for (uint64_t v : tensor.uint64_data()) out.ints.push_back(static_cast<int64_t>(v));
      break;
    default:
      out.ints.assign(tensor.int32_data().begin(), tensor.int32_data().end());
      break;
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
