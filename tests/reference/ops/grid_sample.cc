// GridSample (engine/ops/grid_sample.h), following ONNX's reference
// implementation (onnx/reference/ops/op_grid_sample.py) for 2-D inputs, in
// double: denormalize, round half to even for nearest, bring the point
// inside by border or reflection padding, then interpolate separably with
// each tap padded per axis.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "engine/ops/grid_sample.h"
#include "reference/reference_registry.h"

namespace recq::reference {
namespace {

using internal::GridSampleAttrs;
using internal::GridSampleMode;
using internal::GridSamplePadding;

double Reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  if (x < lo) {
    const double dx = lo - x;
    const int64_t n = static_cast<int64_t>(dx / range);
    const double r = dx - n * range;
    return n % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double dx = x - hi;
    const int64_t n = static_cast<int64_t>(dx / range);
    const double r = dx - n * range;
    return n % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

void Cubic(double t, double* w) {
  const double a = -0.75, x = std::abs(t);
  w[0] = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a;
  w[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
  w[2] = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1;
  w[3] = ((a * (2 - x) - 5 * a) * (2 - x) + 8 * a) * (2 - x) - 4 * a;
}

struct Axis {
  int64_t len;
  double lo, hi;  // the borders of reflection
};

// The pixel a tap at i reads along one axis, or -1 for a zero.
int64_t TapIndex(const GridSampleAttrs& a, const Axis& ax, int64_t i) {
  switch (a.padding) {
    case GridSamplePadding::kZeros:
      return i >= 0 && i < ax.len ? i : -1;
    case GridSamplePadding::kBorder:
      return std::clamp<int64_t>(i, 0, ax.len - 1);
    case GridSamplePadding::kReflection:
      return std::clamp<int64_t>(static_cast<int64_t>(Reflect(double(i), ax.lo, ax.hi)), 0,
                                 ax.len - 1);
  }
  return -1;
}

double Coordinate(const GridSampleAttrs& a, const Axis& ax, double g) {
  double x = a.align_corners ? (g + 1) / 2 * (ax.len - 1) : ((g + 1) * ax.len - 1) / 2;
  if (a.mode == GridSampleMode::kNearest) x = std::nearbyint(x);  // half to even
  if (x < ax.lo || x > ax.hi) {
    if (a.padding == GridSamplePadding::kBorder) x = std::clamp<double>(x, 0, ax.len - 1);
    if (a.padding == GridSamplePadding::kReflection) x = Reflect(x, ax.lo, ax.hi);
  }
  return x;
}

// The taps (index, weight) of coordinate x along one axis.
std::vector<std::pair<int64_t, double>> Taps(const GridSampleAttrs& a, const Axis& ax, double x) {
  std::vector<std::pair<int64_t, double>> taps;
  if (a.mode == GridSampleMode::kNearest) {
    taps.push_back({TapIndex(a, ax, static_cast<int64_t>(x)), 1.0});
    return taps;
  }
  const double x0 = std::floor(x), t = x - x0;
  const int64_t i0 = static_cast<int64_t>(x0);
  if (a.mode == GridSampleMode::kLinear) {
    taps.push_back({TapIndex(a, ax, i0), 1 - t});
    taps.push_back({TapIndex(a, ax, i0 + 1), t});
  } else {
    double w[4];
    Cubic(t, w);
    for (int k = 0; k < 4; ++k) taps.push_back({TapIndex(a, ax, i0 - 1 + k), w[k]});
  }
  return taps;
}

}  // namespace

RECQ_REGISTER_REFERENCE(GridSample) {
  return table.Add(
      internal::kGridSample,
      [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
        if (absl::Status s = CheckArity(node, in, 2, 2); !s.ok()) return s;
        absl::StatusOr<GridSampleAttrs> attrs = AttrsOf<GridSampleAttrs>(node);
        if (!attrs.ok()) return attrs.status();
        const GridSampleAttrs& a = *attrs;
        const HostTensor& x = *in[0];
        const HostTensor& grid = *in[1];
        const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
        const int64_t ho = grid.shape[1], wo = grid.shape[2];
        auto axis = [&](int64_t len) {
          return a.align_corners ? Axis{len, 0.0, len - 1.0} : Axis{len, -0.5, len - 0.5};
        };
        const Axis ax = axis(w), ay = axis(h);
        HostTensor y{{n, c, ho, wo}, std::vector<float>(n * c * ho * wo), x.dtype};
        for (int64_t b = 0; b < n; ++b) {
          for (int64_t i = 0; i < ho; ++i) {
            for (int64_t j = 0; j < wo; ++j) {
              const float* g = &grid.data[((b * ho + i) * wo + j) * 2];
              const auto tx = Taps(a, ax, Coordinate(a, ax, g[0]));
              const auto ty = Taps(a, ay, Coordinate(a, ay, g[1]));
              for (int64_t ch = 0; ch < c; ++ch) {
                double acc = 0;
                for (const auto& [iy, wy] : ty) {
                  for (const auto& [ix, wx] : tx) {
                    if (iy < 0 || ix < 0) continue;
                    acc += wy * wx * x.data[((b * c + ch) * h + iy) * w + ix];
                  }
                }
                y.data[((b * c + ch) * ho + i) * wo + j] = static_cast<float>(acc);
              }
            }
          }
        }
        return y;
      });
}

}  // namespace recq::reference
