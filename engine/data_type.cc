#include "recq/data_type.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"

namespace recq {
namespace {

struct TypeInfo {
  DataType dtype;
  const char* name;
  const char* short_name;
  size_t size;
  int32_t onnx;  // onnx.TensorProto.DataType
};
constexpr TypeInfo kTypes[] = {
    {DataType::kFloat32, "float32", "f32", 4, 1}, {DataType::kFloat16, "float16", "f16", 2, 10},
    {DataType::kInt64, "int64", "i64", 8, 7},     {DataType::kInt32, "int32", "i32", 4, 6},
    {DataType::kInt8, "int8", "i8", 1, 3},        {DataType::kUInt8, "uint8", "u8", 1, 2},
    {DataType::kBool, "bool", "bool", 1, 9},      {DataType::kFloat64, "float64", "f64", 8, 11},
    {DataType::kUInt16, "uint16", "u16", 2, 4},   {DataType::kInt16, "int16", "i16", 2, 5},
    {DataType::kUInt32, "uint32", "u32", 4, 12},  {DataType::kUInt64, "uint64", "u64", 8, 13},
};

const TypeInfo& Info(DataType dtype) {
  for (const TypeInfo& t : kTypes) {
    if (t.dtype == dtype) return t;
  }
  return kTypes[0];
}

template <typename T>
std::vector<T> Convert(absl::Span<const double> values, T (*cast)(double)) {
  std::vector<T> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) out[i] = cast(values[i]);
  return out;
}

// Truncates toward zero and saturates (NaN is 0), as typed.cl's
// convert_<T>_sat_rtz does; a plain cast of an out-of-range double is
// undefined.
template <typename T>
T ToInteger(double v) {
  if (std::isnan(v)) return 0;
  if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) {
    return std::numeric_limits<T>::lowest();
  }
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(std::trunc(v));
}

}  // namespace

size_t DataTypeSize(DataType dtype) { return Info(dtype).size; }
const char* DataTypeName(DataType dtype) { return Info(dtype).name; }

absl::StatusOr<DataType> ParseDataType(absl::string_view name) {
  for (const TypeInfo& t : kTypes) {
    if (name == t.name || name == t.short_name) return t.dtype;
  }
  if (name == "float") return DataType::kFloat32;
  if (name == "half") return DataType::kFloat16;
  if (name == "double") return DataType::kFloat64;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown element type '", name,
                   "'; expected one of float32 (f32), float16 (f16), int64 (i64), int32 (i32), "
                   "int8 (i8), uint8 (u8), bool, float64 (f64), uint16 (u16), int16 (i16), "
                   "uint32 (u32), uint64 (u64)"));
}

absl::StatusOr<DataType> DataTypeFromOnnx(int32_t onnx_type) {
  for (const TypeInfo& t : kTypes) {
    if (t.onnx == onnx_type) return t.dtype;
  }
  return absl::UnimplementedError(
      absl::StrCat("element type ", OnnxTypeName(onnx_type),
                   " is not supported; recq supports float32, float16, float64, int64, int32, "
                   "int16, int8, uint64, uint32, uint16, uint8 and bool"));
}

std::string OnnxTypeName(int32_t onnx_type) {
  static constexpr const char* kOnnxNames[] = {
      "undefined", "float32", "uint8",     "int8",       "uint16",  "int16",
      "int32",     "int64",   "string",    "bool",       "float16", "float64",
      "uint32",    "uint64",  "complex64", "complex128", "bfloat16"};
  return onnx_type >= 0 && onnx_type < 17 ? std::string(kOnnxNames[onnx_type])
                                          : absl::StrCat("data type ", onnx_type);
}

int32_t DataTypeToOnnx(DataType dtype) { return Info(dtype).onnx; }

bool IsFloatingPoint(DataType dtype) {
  return dtype == DataType::kFloat32 || dtype == DataType::kFloat16 || dtype == DataType::kFloat64;
}
bool IsIntegral(DataType dtype) { return !IsFloatingPoint(dtype); }

uint16_t FloatToHalf(float value) {
  uint32_t f;
  std::memcpy(&f, &value, sizeof(f));
  const uint32_t sign = (f >> 16) & 0x8000u;
  const uint32_t abs = f & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or NaN
    return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  }
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds past 65504
  if (abs < 0x38800000u) {  // half subnormal or zero: scale into 10 mantissa bits
    if (abs < 0x33000000u) return static_cast<uint16_t>(sign);
    const uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    const int shift = 126 - static_cast<int>(abs >> 23);  // 14..24
    uint32_t half = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = ((abs >> 13) - (112u << 10));
  const uint32_t rem = abs & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;
  return static_cast<uint16_t>(sign | half);
}

float HalfToFloat(uint16_t bits) {
  const uint32_t sign = (bits & 0x8000u) << 16;
  const uint32_t exp = (bits >> 10) & 0x1fu;
  const uint32_t mant = bits & 0x3ffu;
  uint32_t f;
  if (exp == 0) {
    if (mant == 0) {
      f = sign;
    } else {  // subnormal: value = mant * 2^-24
      float v = std::ldexp(static_cast<float>(mant), -24);
      std::memcpy(&f, &v, sizeof(f));
      f |= sign;
    }
  } else if (exp == 31) {
    f = sign | 0x7f800000u | (mant << 13);
  } else {
    f = sign | ((exp + 112u) << 23) | (mant << 13);
  }
  float out;
  std::memcpy(&out, &f, sizeof(out));
  return out;
}

absl::StatusOr<HostData> HostData::FromBytes(DataType dtype, absl::Span<const uint8_t> bytes) {
  const size_t size = DataTypeSize(dtype);
  if (bytes.size() % size != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(bytes.size(), " bytes are not a whole number of ", DataTypeName(dtype),
                     " elements (", size, " bytes each)"));
  }
  const size_t n = bytes.size() / size;
  auto copy = [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> v(n);
    if (n != 0) std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
  };
  switch (dtype) {
    case DataType::kFloat32:
      return HostData(copy(float{}));
    case DataType::kFloat16:
      return HostData(dtype, copy(uint16_t{}));
    case DataType::kInt64:
      return HostData(copy(int64_t{}));
    case DataType::kInt32:
      return HostData(copy(int32_t{}));
    case DataType::kInt8:
      return HostData(copy(int8_t{}));
    case DataType::kUInt8:
      return HostData(dtype, copy(uint8_t{}));
    case DataType::kBool: {
      std::vector<uint8_t> v = copy(uint8_t{});
      for (uint8_t& b : v) b = b != 0;
      return HostData(dtype, std::move(v));
    }
    case DataType::kFloat64:
      return HostData(copy(double{}));
    case DataType::kUInt16:
      return HostData(dtype, copy(uint16_t{}));
    case DataType::kInt16:
      return HostData(copy(int16_t{}));
    case DataType::kUInt32:
      return HostData(copy(uint32_t{}));
    case DataType::kUInt64:
      return HostData(copy(uint64_t{}));
  }
  return absl::InternalError("unknown DataType");
}

HostData HostData::FromDoubles(DataType dtype, absl::Span<const double> values) {
  switch (dtype) {
    case DataType::kFloat32:
      return HostData(Convert<float>(values, [](double v) { return static_cast<float>(v); }));
    case DataType::kFloat16:
      return HostData(dtype, Convert<uint16_t>(values, [](double v) {
                        return FloatToHalf(static_cast<float>(v));
                      }));
    case DataType::kInt64:
      return HostData(Convert<int64_t>(values, ToInteger<int64_t>));
    case DataType::kInt32:
      return HostData(Convert<int32_t>(values, ToInteger<int32_t>));
    case DataType::kInt8:
      return HostData(Convert<int8_t>(values, ToInteger<int8_t>));
    case DataType::kUInt8:
      return HostData(dtype, Convert<uint8_t>(values, ToInteger<uint8_t>));
    case DataType::kBool:
      return HostData(dtype, Convert<uint8_t>(values, [](double v) -> uint8_t { return v != 0; }));
    case DataType::kFloat64:
      return HostData(std::vector<double>(values.begin(), values.end()));
    case DataType::kUInt16:
      return HostData(dtype, Convert<uint16_t>(values, ToInteger<uint16_t>));
    case DataType::kInt16:
      return HostData(Convert<int16_t>(values, ToInteger<int16_t>));
    case DataType::kUInt32:
      return HostData(Convert<uint32_t>(values, ToInteger<uint32_t>));
    case DataType::kUInt64:
      return HostData(Convert<uint64_t>(values, ToInteger<uint64_t>));
  }
  return HostData();
}

size_t HostData::size() const {
  return std::visit([](const auto& v) { return v.size(); }, v_);
}

const void* HostData::bytes() const {
  return std::visit([](const auto& v) -> const void* { return v.data(); }, v_);
}

double HostData::at(size_t i) const {
  if (dtype_ == DataType::kFloat16) return HalfToFloat(std::get<std::vector<uint16_t>>(v_)[i]);
  return std::visit([i](const auto& v) { return static_cast<double>(v[i]); }, v_);
}

}  // namespace recq
