// Resize: every output element computed from the ONNX definition, in double:
// the source coordinate of each axis by the coordinate transformation mode,
// then the nearest neighbour, or the product of the 1-D linear or cubic
// weights of its 2 or 4 neighbours per axis (indices outside the input
// clamped to the edge; excluded and renormalized with exclude_outside).
#include <cmath>
#include <vector>

#include "engine/ops/layout_attrs.h"
#include "reference/reference_registry.h"
#include "reference/reference_util.h"

namespace recq::reference {
namespace {

using namespace detail;  // NOLINT: the helpers of every reference op
using internal::ResizeAttrs;
using internal::ResizeCoordinates;
using internal::ResizeMode;
using internal::ResizeNearest;

double Original(const ResizeAttrs& a, double o, double in, double out, double scale) {
  switch (a.coordinates) {
    case ResizeCoordinates::kHalfPixel:
      return (o + 0.5) / scale - 0.5;
    case ResizeCoordinates::kHalfPixelSymmetric: {
      const double adj = out / (scale * in);
      return in / 2 * (1 - adj) + (o + 0.5) / scale - 0.5;
    }
    case ResizeCoordinates::kPytorchHalfPixel:
      return out > 1 ? (o + 0.5) / scale - 0.5 : 0;
    case ResizeCoordinates::kAlignCorners:
      return out == 1 ? 0 : o * (in - 1) / (in * scale - 1);  // in * scale: ONNX's length
    case ResizeCoordinates::kAsymmetric:
      return o / scale;
    case ResizeCoordinates::kTfHalfPixelForNn:
      return (o + 0.5) / scale;
  }
  return 0;
}

// The (index, weight) neighbours of one axis.
std::vector<std::pair<int64_t, double>> Neighbours(const ResizeAttrs& a, int64_t o, int64_t in,
                                                   int64_t out, double scale) {
  if (in == out && scale == 1.0) return {{o, 1.0}};
  const double x = Original(a, double(o), double(in), double(out), scale);
  auto clamp = [in](int64_t i) { return i < 0 ? 0 : i >= in ? in - 1 : i; };
  if (a.mode == ResizeMode::kNearest) {
    int64_t i = 0;
    const double f = std::floor(x);
    switch (a.nearest) {
      case ResizeNearest::kRoundPreferFloor:
        i = int64_t(x - f <= 0.5 ? f : f + 1);
        break;
      case ResizeNearest::kRoundPreferCeil:
        i = int64_t(x - f < 0.5 ? f : f + 1);
        break;
      case ResizeNearest::kFloor:
        i = int64_t(f);
        break;
      case ResizeNearest::kCeil:
        i = int64_t(std::ceil(x));
        break;
      case ResizeNearest::kSimple:
        i = scale < 1 ? int64_t(std::ceil(x)) : int64_t(std::trunc(x));
        break;
    }
    return {{clamp(i), 1.0}};
  }
  const double f = std::floor(x);
  const double t = x - f;
  const int64_t i0 = int64_t(f);
  if (a.mode == ResizeMode::kLinear) return {{clamp(i0), 1 - t}, {clamp(i0 + 1), t}};
  const double A = a.cubic_coeff_a;
  const double d[4] = {1 + t, t, 1 - t, 2 - t};
  std::vector<std::pair<int64_t, double>> r;
  double sum = 0;
  for (int k = 0; k < 4; ++k) {
    const double s = d[k];
    double w =
        s <= 1 ? ((A + 2) * s - (A + 3)) * s * s + 1 : ((A * s - 5 * A) * s + 8 * A) * s - 4 * A;
    const int64_t i = i0 - 1 + k;
    if (a.exclude_outside && (i < 0 || i >= in)) w = 0;
    sum += w;
    r.push_back({clamp(i), w});
  }
  if (a.exclude_outside) {
    for (auto& p : r) p.second /= sum;
  }
  return r;
}

absl::StatusOr<HostTensor> Resize(const HostTensor& x, const ResizeAttrs& a) {
  const size_t rank = x.shape.size();
  if (a.out_shape.size() != rank || a.scales.size() != rank) {
    return absl::InvalidArgumentError("Resize: out_shape and scales must match the input's rank");
  }
  HostTensor y{a.out_shape, std::vector<float>(NumElements(a.out_shape))};
  const std::vector<int64_t> strides = RowMajorStrides(x.shape);
  for (int64_t i = 0; i < y.NumElements(); ++i) {
    int64_t rem = i;
    std::vector<std::vector<std::pair<int64_t, double>>> nb(rank);
    for (size_t d = rank; d-- > 0;) {
      const int64_t o = rem % a.out_shape[d];
      rem /= a.out_shape[d];
      nb[d] = Neighbours(a, o, x.shape[d], a.out_shape[d], a.scales[d]);
    }
    // Sum over every combination of one neighbour per axis.
    double acc = 0;
    std::vector<size_t> pick(rank, 0);
    while (true) {
      double w = 1;
      int64_t off = 0;
      for (size_t d = 0; d < rank; ++d) {
        off += nb[d][pick[d]].first * strides[d];
        w *= nb[d][pick[d]].second;
      }
      acc += w * x.data[off];
      size_t d = rank;
      while (d-- > 0 && ++pick[d] == nb[d].size()) pick[d] = 0;
      if (d == size_t(-1)) break;
    }
    y.data[i] = static_cast<float>(acc);
  }
  return y;
}

}  // namespace

RECQ_REGISTER_REFERENCE(Resize) {
  return table.Add(OpType("Resize"),
                   [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                     if (absl::Status s = CheckArity(node, in, 1, 1); !s.ok()) return s;
                     absl::StatusOr<ResizeAttrs> a = AttrsOf<ResizeAttrs>(node);
                     if (!a.ok()) return a.status();
                     return Resize(*in[0], *a);
                   });
}

}  // namespace recq::reference
