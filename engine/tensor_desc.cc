#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "recq/tensor.h"

namespace recq {

int64_t TensorDesc::NumElements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

size_t TensorDesc::ByteSize() const {
  return static_cast<size_t>(NumElements()) * DataTypeSize(dtype);
}

std::string ShapeToString(absl::Span<const int64_t> shape) {
  if (shape.empty()) return "scalar";
  return absl::StrJoin(shape, "x");
}

std::string TensorDesc::ToString() const { return absl::StrCat(ShapeToString(shape), " ", DataTypeName(dtype)); }

}  // namespace recq
