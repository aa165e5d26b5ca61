// Element types: the one type system of the IR, tensors, bindings, the ONNX
// importer and the CLI.
//
//   DataType        C++ element        bytes   ONNX
//   kFloat32        float              4       FLOAT
//   kFloat16        uint16_t (bits)    2       FLOAT16
//   kInt64          int64_t            8       INT64
//   kInt32          int32_t            4       INT32
//   kInt8           int8_t             1       INT8
//   kUInt8          uint8_t            1       UINT8
//   kBool           bool (0 or 1)      1       BOOL
//   kFloat64        double             8       DOUBLE
//   kUInt16         uint16_t           2       UINT16
//   kInt16          int16_t            2       INT16
//   kUInt32         uint32_t           4       UINT32
//   kUInt64         uint64_t           8       UINT64
//
// On the device every type is stored as its C type (half as 16 bits read
// with vload_half), so a buffer of n elements is n * DataTypeSize bytes.
// float64 kernels need the device's cl_khr_fp64 (Engine::Compile says so
// where it is missing); recq's float kernels take float32 (and float16
// storage) only, so float64 runs through the typed ops (Cast, Where, the
// comparisons, Add/Sub/Mul/Div/Min/Max, Mod, CumSum, the gathers, scatters
// and copies).
#ifndef RECQ_DATA_TYPE_H_
#define RECQ_DATA_TYPE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace recq {

enum class DataType {
  kFloat32,
  kFloat16,
  kInt64,
  kInt32,
  kInt8,
  kUInt8,
  kBool,
  kFloat64,
  kUInt16,
  kInt16,
  kUInt32,
  kUInt64,
};

// DataTypeSize is the size of one element in bytes.
size_t DataTypeSize(DataType dtype);
// DataTypeName renders "float32", "float16", "int64", "int32", "int8",
// "uint8", "bool", "float64", "uint16", "int16", "uint32" or "uint64".
const char* DataTypeName(DataType dtype);
// ParseDataType reads a DataTypeName or its short form (f32, f16, i64, i32,
// i8, u8, f64, u16, i16, u32, u64); InvalidArgument listing the names otherwise.
absl::StatusOr<DataType> ParseDataType(absl::string_view name);
// DataTypeFromOnnx maps an ONNX TensorProto.DataType number (FLOAT = 1,
// UINT8 = 2, INT8 = 3, INT32 = 6, INT64 = 7, BOOL = 9, FLOAT16 = 10,
// DOUBLE = 11, UINT16 = 4, INT16 = 5, UINT32 = 12, UINT64 = 13) to
// recq's type; Unimplemented naming the ONNX type for the others.
absl::StatusOr<DataType> DataTypeFromOnnx(int32_t onnx_type);
// DataTypeToOnnx maps back.
int32_t DataTypeToOnnx(DataType dtype);
// OnnxTypeName renders any ONNX TensorProto.DataType number ("float32",
// "float64", "string"...; "data type N" for an unknown one).
std::string OnnxTypeName(int32_t onnx_type);

// IsFloatingPoint: kFloat32, kFloat16 and kFloat64.
bool IsFloatingPoint(DataType dtype);
// The types that hold an integer value: the integers and bool.
bool IsIntegral(DataType dtype);

// DataTypeOf<T>::value is the DataType whose host element type is T
// (uint16_t stands for float16 bits).
template <typename T>
struct DataTypeOf;
template <>
struct DataTypeOf<float> {
  static constexpr DataType value = DataType::kFloat32;
};
template <>
struct DataTypeOf<uint16_t> {
  static constexpr DataType value = DataType::kFloat16;
};
template <>
struct DataTypeOf<int64_t> {
  static constexpr DataType value = DataType::kInt64;
};
template <>
struct DataTypeOf<int32_t> {
  static constexpr DataType value = DataType::kInt32;
};
template <>
struct DataTypeOf<int8_t> {
  static constexpr DataType value = DataType::kInt8;
};
template <>
struct DataTypeOf<uint8_t> {
  static constexpr DataType value = DataType::kUInt8;
};
template <>
struct DataTypeOf<bool> {
  static constexpr DataType value = DataType::kBool;
};
template <>
struct DataTypeOf<double> {
  static constexpr DataType value = DataType::kFloat64;
};
template <>
struct DataTypeOf<int16_t> {
  static constexpr DataType value = DataType::kInt16;
};
template <>
struct DataTypeOf<uint32_t> {
  static constexpr DataType value = DataType::kUInt32;
};
template <>
struct DataTypeOf<uint64_t> {
  static constexpr DataType value = DataType::kUInt64;
};

// FloatToHalf rounds to the nearest IEEE half (ties to even; overflow to
// infinity, NaN kept NaN); HalfToFloat is exact.
uint16_t FloatToHalf(float value);
float HalfToFloat(uint16_t bits);

// HostData is one tensor's elements on the host, each in the C++ type of its
// element type (bool as uint8_t 0/1, float16 as uint16_t bits). Constants of
// a Graph hold their data this way.
class HostData {
 public:
  HostData() : HostData(std::vector<float>{}) {}
  HostData(std::vector<float> v) : dtype_(DataType::kFloat32), v_(std::move(v)) {}    // NOLINT
  HostData(std::vector<int64_t> v) : dtype_(DataType::kInt64), v_(std::move(v)) {}    // NOLINT
  HostData(std::vector<int32_t> v) : dtype_(DataType::kInt32), v_(std::move(v)) {}    // NOLINT
  HostData(std::vector<int8_t> v) : dtype_(DataType::kInt8), v_(std::move(v)) {}      // NOLINT
  HostData(std::vector<double> v) : dtype_(DataType::kFloat64), v_(std::move(v)) {}   // NOLINT
  HostData(std::vector<int16_t> v) : dtype_(DataType::kInt16), v_(std::move(v)) {}    // NOLINT
  HostData(std::vector<uint32_t> v) : dtype_(DataType::kUInt32), v_(std::move(v)) {}  // NOLINT
  HostData(std::vector<uint64_t> v) : dtype_(DataType::kUInt64), v_(std::move(v)) {}  // NOLINT
  // `dtype` is kFloat16 (bits) or kUInt16, kUInt8 or kBool (0 or 1),
  // matching `v`.
  HostData(DataType dtype, std::vector<uint16_t> v) : dtype_(dtype), v_(std::move(v)) {}
  HostData(DataType dtype, std::vector<uint8_t> v) : dtype_(dtype), v_(std::move(v)) {}

  // FromBytes copies `bytes` (little-endian elements of `dtype`); the size
  // must be a multiple of the element size.
  [[nodiscard]] static absl::StatusOr<HostData> FromBytes(DataType dtype,
                                                          absl::Span<const uint8_t> bytes);
  // FromDoubles converts each value to `dtype` (toward zero and saturating
  // for the integers, NaN to 0; != 0 for bool; nearest for the floats).
  static HostData FromDoubles(DataType dtype, absl::Span<const double> values);

  DataType dtype() const { return dtype_; }
  size_t size() const;
  const void* bytes() const;
  size_t byte_size() const { return size() * DataTypeSize(dtype_); }

  // span returns the elements if T is the storage type of dtype(), else an
  // empty span.
  template <typename T>
  absl::Span<const T> span() const {
    const auto* v = std::get_if<std::vector<T>>(&v_);
    return v != nullptr ? absl::Span<const T>(*v) : absl::Span<const T>();
  }
  // float_vector is the float32 elements (nullptr for other types).
  const std::vector<float>* float_vector() const { return std::get_if<std::vector<float>>(&v_); }
  // at returns element `i` as a double (float16 converted, bool 0 or 1).
  double at(size_t i) const;

 private:
  DataType dtype_;
  std::variant<std::vector<float>, std::vector<uint16_t>, std::vector<int64_t>,
               std::vector<int32_t>, std::vector<int8_t>, std::vector<uint8_t>, std::vector<double>,
               std::vector<int16_t>, std::vector<uint32_t>, std::vector<uint64_t>>
      v_;
};

}  // namespace recq

#endif  // RECQ_DATA_TYPE_H_
