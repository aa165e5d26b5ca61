// Cast and Where (engine/ops/typed.cc). Values travel as floats (see
// HostTensor); Cast rounds them as the device does.
#include <cmath>
#include <limits>

#include "engine/ops/typed.h"
#include "reference/reference_registry.h"
#include "reference/reference_util.h"

namespace recq::reference {
namespace {

template <typename T>
double Saturate(double v) {
  if (std::isnan(v)) return 0;
  v = std::trunc(v);
  return std::fmin(std::fmax(v, double(std::numeric_limits<T>::lowest())),
                   double(std::numeric_limits<T>::max()));
}

float CastValue(float v, DataType to) {
  switch (to) {
    case DataType::kFloat32:
      return v;
    case DataType::kFloat16:
      return HalfToFloat(FloatToHalf(v));
    case DataType::kInt64:
      return static_cast<float>(Saturate<int64_t>(v));
    case DataType::kInt32:
      return static_cast<float>(Saturate<int32_t>(v));
    case DataType::kInt8:
      return static_cast<float>(Saturate<int8_t>(v));
    case DataType::kUInt8:
      return static_cast<float>(Saturate<uint8_t>(v));
    case DataType::kBool:
      return v != 0 ? 1.0f : 0.0f;
    case DataType::kFloat64:
      return v;
    case DataType::kUInt16:
      return static_cast<float>(Saturate<uint16_t>(v));
    case DataType::kInt16:
      return static_cast<float>(Saturate<int16_t>(v));
    case DataType::kUInt32:
      return static_cast<float>(Saturate<uint32_t>(v));
    case DataType::kUInt64:
      return static_cast<float>(Saturate<uint64_t>(v));
  }
  return v;
}

}  // namespace

RECQ_REGISTER_REFERENCE(Typed) {
  if (absl::Status s =
          table.Add(internal::kCast,
                    [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                      if (absl::Status s = CheckArity(node, in, 1, 1); !s.ok()) return s;
                      const auto* a = node.attrs.get_if<internal::CastAttrs>();
                      if (a == nullptr) return absl::InvalidArgumentError("Cast without CastAttrs");
                      HostTensor y = *in[0];
                      for (float& v : y.data) v = CastValue(v, a->to);
                      y.dtype = a->to;
                      return y;
                    });
      !s.ok()) {
    return s;
  }
  return table.Add(
      internal::kWhere, [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
        if (absl::Status s = CheckArity(node, in, 3, 3); !s.ok()) return s;
        absl::StatusOr<std::vector<int64_t>> ab = BroadcastShapes(in[1]->shape, in[2]->shape);
        if (!ab.ok()) return ab.status();
        absl::StatusOr<std::vector<int64_t>> out = BroadcastShapes(in[0]->shape, *ab);
        if (!out.ok()) return out.status();
        const size_t rank = out->size();
        std::vector<std::vector<int64_t>> strides;
        for (int i = 0; i < 3; ++i) strides.push_back(detail::BroadcastStrides(in[i]->shape, rank));
        HostTensor y{*out, std::vector<float>(NumElements(*out)), in[1]->dtype};
        for (int64_t oi = 0; oi < static_cast<int64_t>(y.data.size()); ++oi) {
          int64_t rest = oi;
          int64_t off[3] = {0, 0, 0};
          for (size_t d = rank; d-- > 0;) {
            const int64_t idx = rest % (*out)[d];
            rest /= (*out)[d];
            for (int i = 0; i < 3; ++i) off[i] += idx * strides[i][d];
          }
          y.data[oi] = in[0]->data[off[0]] != 0 ? in[1]->data[off[1]] : in[2]->data[off[2]];
        }
        return y;
      });
}

}  // namespace recq::reference
