// Linear quantization (engine/ops/quantize.cc, engine/ops/integer_matmul.cc)
// from ONNX's definitions: y = saturate(round_half_even(x / scale) + zp),
// y = (x - zp) * scale, the DynamicQuantizeLinear parameters, and the
// integer matrix products and convolutions summed in int64 (exact) and
// requantized in double as ONNX's reference does.
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "engine/ops/quantize.h"
#include "reference/reference_registry.h"
#include "reference/reference_util.h"

namespace recq::reference {
namespace {

using namespace detail;  // NOLINT: the helpers of every reference op

std::array<double, 2> RangeOf(DataType t) {
  switch (t) {
    case DataType::kUInt8:
      return {0, 255};
    case DataType::kInt8:
      return {-128, 127};
    case DataType::kUInt16:
      return {0, 65535};
    case DataType::kInt16:
      return {-32768, 32767};
    default:
      return {-2147483648.0, 2147483647.0};
  }
}

double Saturate(double v, DataType t) {
  const std::array<double, 2> r = RangeOf(t);
  return std::min(std::max(v, r[0]), r[1]);
}

// ParamIndex: the element of a per-tensor, per-axis or per-block parameter
// of shape `p` that applies to the element of x at `coords`.
int64_t ParamIndex(const std::vector<int64_t>& coords, const std::vector<int64_t>& p, int64_t axis,
                   int64_t block) {
  if (block <= 0) return NumElements(p) == 1 ? 0 : coords[axis];
  int64_t index = 0;
  for (size_t d = 0; d < coords.size(); ++d) {
    const int64_t c = static_cast<int64_t>(d) == axis ? coords[d] / block : coords[d];
    index = index * p[d] + c;
  }
  return index;
}

std::vector<int64_t> Coords(int64_t i, const std::vector<int64_t>& shape) {
  std::vector<int64_t> c(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    c[d] = i % shape[d];
    i /= shape[d];
  }
  return c;
}

absl::StatusOr<HostTensor> QuantizeOrDequantize(const Node& node, ReferenceInputs in,
                                                bool quantize) {
  if (absl::Status s = CheckArity(node, in, 2, 3); !s.ok()) return s;
  absl::StatusOr<internal::QuantizeAttrs> a = AttrsOf<internal::QuantizeAttrs>(node);
  if (!a.ok()) return a.status();
  const HostTensor& x = *in[0];
  const HostTensor& scale = *in[1];
  const HostTensor* zp = Optional(in, 2);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  const int64_t axis = a->axis < 0 ? a->axis + rank : a->axis;
  HostTensor y{x.shape, std::vector<float>(x.data.size()), quantize ? a->to : scale.dtype};
  for (size_t i = 0; i < x.data.size(); ++i) {
    const int64_t p =
        ParamIndex(Coords(static_cast<int64_t>(i), x.shape), scale.shape, axis, a->block_size);
    const double z = zp != nullptr ? zp->data[p] : 0.0;
    if (quantize) {
      const float q = x.data[i] / scale.data[p];  // single precision, as ONNX
      y.data[i] = static_cast<float>(Saturate(std::nearbyint(double(q)) + z, a->to));
    } else {
      float v = (x.data[i] - static_cast<float>(z)) * scale.data[p];
      if (y.dtype == DataType::kFloat16) v = HalfToFloat(FloatToHalf(v));
      y.data[i] = v;
    }
  }
  return y;
}

absl::StatusOr<HostTensor> DynamicParams(const Node& node, ReferenceInputs in) {
  if (absl::Status s = CheckArity(node, in, 1, 1); !s.ok()) return s;
  absl::StatusOr<internal::DynamicQuantizeParamsAttrs> a =
      AttrsOf<internal::DynamicQuantizeParamsAttrs>(node);
  if (!a.ok()) return a.status();
  float lo = 0, hi = 0;
  for (float v : in[0]->data) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  const float scale = (hi == lo ? 1.0f : hi - lo) / 255.0f;
  if (!a->zero_point) return HostTensor{{}, {scale}, DataType::kFloat32};
  const float zp = std::min(std::max(0.0f - lo / scale, 0.0f), 255.0f);
  return HostTensor{{}, {std::nearbyint(zp)}, DataType::kUInt8};
}

// One element of a per-tensor (one element) or per-index parameter.
double Param(const HostTensor* t, int64_t i) {
  if (t == nullptr) return 0;
  return t->data.size() == 1 ? t->data[0] : t->data[i];
}

// Requantize: saturate(round_half_even(acc * (sa * sb / sy) + zp)), the
// multiplier in float32 and the product in double (ONNX's reference).
float Requantize(int64_t acc, float sa, float sb, float sy, double zp, DataType t) {
  const float m = sa * sb / sy;
  return static_cast<float>(Saturate(std::nearbyint(double(acc) * m + zp), t));
}

// Inputs by position: a, b, azp, bzp, as, bs, ys, yzp, bias (-1 absent).
struct Slots {
  int a, b, azp, bzp, as = -1, bs = -1, ys = -1, yzp = -1, bias = -1;
};
constexpr Slots kIntegerSlots{0, 1, 2, 3};
constexpr Slots kQLinearSlots{0, 3, 2, 5, 1, 4, 6, 7, 8};

const HostTensor* At(ReferenceInputs in, int i) { return i < 0 ? nullptr : Optional(in, i); }

absl::StatusOr<HostTensor> MatMul(ReferenceInputs in, const Slots& s) {
  const HostTensor& a = *in[s.a];
  const HostTensor& b = *in[s.b];
  const size_t ra = a.shape.size(), rb = b.shape.size();
  const int64_t m = a.shape[ra - 2], k = a.shape[ra - 1], n = b.shape[rb - 1];
  const size_t rank = std::max(ra, rb);
  std::vector<int64_t> batch(rank - 2, 1);
  auto dim = [](const std::vector<int64_t>& shape, size_t rank, size_t d) {
    const size_t lead = rank - shape.size();
    return d < lead ? int64_t{1} : shape[d - lead];
  };
  for (size_t d = 0; d + 2 < rank; ++d) {
    batch[d] = std::max(dim(a.shape, rank, d), dim(b.shape, rank, d));
  }
  std::vector<int64_t> shape = batch;
  shape.push_back(m);
  shape.push_back(n);
  const bool qlinear = s.as >= 0;
  const DataType yt = qlinear ? in[s.yzp]->dtype : DataType::kInt32;
  HostTensor y{shape, std::vector<float>(NumElements(shape)), yt};
  const int64_t batches = NumElements(batch);
  for (int64_t bi = 0; bi < batches; ++bi) {
    const std::vector<int64_t> c = Coords(bi, batch);
    int64_t ao = 0, bo = 0;
    for (size_t d = 0; d < c.size(); ++d) {
      const int64_t da = dim(a.shape, rank, d), db = dim(b.shape, rank, d);
      ao = ao * da + (da == 1 ? 0 : c[d]);
      bo = bo * db + (db == 1 ? 0 : c[d]);
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        int64_t acc = 0;
        for (int64_t kk = 0; kk < k; ++kk) {
          const double av = a.data[(ao * m + i) * k + kk] - Param(At(in, s.azp), i);
          const double bv = b.data[(bo * k + kk) * n + j] - Param(At(in, s.bzp), j);
          acc += static_cast<int64_t>(av) * static_cast<int64_t>(bv);
        }
        float& out = y.data[(bi * m + i) * n + j];
        out = qlinear ? Requantize(acc, Param(in[s.as], i), Param(in[s.bs], j), in[s.ys]->data[0],
                                   in[s.yzp]->data[0], yt)
                      : static_cast<float>(acc);
      }
    }
  }
  return y;
}

absl::StatusOr<HostTensor> Conv(const Node& node, ReferenceInputs in, const Slots& s) {
  absl::StatusOr<Conv2DAttrs> at = AttrsOf<Conv2DAttrs>(node);
  if (!at.ok()) return at.status();
  const HostTensor& x = *in[s.a];
  const HostTensor& w = *in[s.b];
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t OC = w.shape[0], CG = w.shape[1], KH = w.shape[2], KW = w.shape[3];
  const int64_t OH =
      (H + at->pads[0] + at->pads[2] - at->dilations[0] * (KH - 1) - 1) / at->strides[0] + 1;
  const int64_t OW =
      (W + at->pads[1] + at->pads[3] - at->dilations[1] * (KW - 1) - 1) / at->strides[1] + 1;
  const bool qlinear = s.as >= 0;
  const DataType yt = qlinear ? in[s.yzp]->dtype : DataType::kInt32;
  HostTensor y{{N, OC, OH, OW}, std::vector<float>(N * OC * OH * OW), yt};
  const int64_t ocg = OC / at->groups;
  const HostTensor* bias = At(in, s.bias);
  for (int64_t nn = 0; nn < N; ++nn) {
    for (int64_t oc = 0; oc < OC; ++oc) {
      for (int64_t oh = 0; oh < OH; ++oh) {
        for (int64_t ow = 0; ow < OW; ++ow) {
          int64_t acc = 0;
          for (int64_t c = 0; c < CG; ++c) {
            const int64_t ic = (oc / ocg) * CG + c;
            for (int64_t kh = 0; kh < KH; ++kh) {
              for (int64_t kw = 0; kw < KW; ++kw) {
                const int64_t ih = oh * at->strides[0] - at->pads[0] + kh * at->dilations[0];
                const int64_t iw = ow * at->strides[1] - at->pads[1] + kw * at->dilations[1];
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;  // (x - zp) padded by 0
                const double xv =
                    x.data[((nn * C + ic) * H + ih) * W + iw] - Param(At(in, s.azp), 0);
                const double wv =
                    w.data[((oc * CG + c) * KH + kh) * KW + kw] - Param(At(in, s.bzp), oc);
                acc += static_cast<int64_t>(xv) * static_cast<int64_t>(wv);
              }
            }
          }
          float& out = y.data[((nn * OC + oc) * OH + oh) * OW + ow];
          if (!qlinear) {
            out = static_cast<float>(acc);
            continue;
          }
          if (bias != nullptr) acc += static_cast<int64_t>(bias->data[oc]);
          out = Requantize(acc, in[s.as]->data[0], Param(in[s.bs], oc), in[s.ys]->data[0],
                           in[s.yzp]->data[0], yt);
        }
      }
    }
  }
  return y;
}

}  // namespace

RECQ_REGISTER_REFERENCE(Quantize) {
  if (absl::Status s = table.Add(internal::kQuantizeLinear,
                                 [](const Node& node, ReferenceInputs in) {
                                   return QuantizeOrDequantize(node, in, true);
                                 });
      !s.ok()) {
    return s;
  }
  if (absl::Status s = table.Add(internal::kDequantizeLinear,
                                 [](const Node& node, ReferenceInputs in) {
                                   return QuantizeOrDequantize(node, in, false);
                                 });
      !s.ok()) {
    return s;
  }
  if (absl::Status s = table.Add(internal::kDynamicQuantizeParams, DynamicParams); !s.ok()) {
    return s;
  }
  if (absl::Status s =
          table.Add(internal::kMatMulInteger,
                    [](const Node&, ReferenceInputs in) { return MatMul(in, kIntegerSlots); });
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          table.Add(internal::kQLinearMatMul,
                    [](const Node&, ReferenceInputs in) { return MatMul(in, kQLinearSlots); });
      !s.ok()) {
    return s;
  }
  if (absl::Status s = table.Add(
          internal::kConvInteger,
          [](const Node& node, ReferenceInputs in) { return Conv(node, in, kIntegerSlots); });
      !s.ok()) {
    return s;
  }
  return table.Add(internal::kQLinearConv, [](const Node& node, ReferenceInputs in) {
    return Conv(node, in, kQLinearSlots);
  });
}

}  // namespace recq::reference
