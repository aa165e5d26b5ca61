#include "reference/reference_ops.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace recq::reference {
namespace {

// NormalizeAxis maps `axis` in [-rank, rank) (or [-rank, rank] if
// `inclusive_end`) to [0, rank) (or [0, rank]).
absl::StatusOr<int64_t> NormalizeAxis(int64_t axis, int64_t rank, bool inclusive_end,
                                      const char* op) {
  const int64_t hi = inclusive_end ? rank : rank - 1;
  if (axis < -rank || axis > hi) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": axis ", axis, " is out of range [", -rank,
                                                   ", ", hi, "] for rank ", rank));
  }
  return axis < 0 ? axis + rank : axis;
}

// Strides of a row-major tensor of `shape`.
std::vector<int64_t> RowMajorStrides(absl::Span<const int64_t> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * shape[i + 1];
  }
  return strides;
}

// Product of shape[begin, end).
int64_t Product(absl::Span<const int64_t> shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= shape[i];
  return p;
}

absl::Status CheckWellFormed(const HostTensor& t, const char* op, const char* what) {
  for (int64_t d : t.shape) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(op, ": ", what, " has a negative dimension: ", ShapeString(t.shape)));
    }
  }
  if (static_cast<int64_t>(t.data.size()) != NumElements(t.shape)) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", what, " has ", t.data.size(),
                                                   " elements but its shape ", ShapeString(t.shape),
                                                   " needs ", NumElements(t.shape)));
  }
  return absl::OkStatus();
}

absl::Status CheckRank(const HostTensor& t, size_t rank, const char* op, const char* what) {
  if (t.shape.size() != rank) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": ", what, " must have rank ", rank, ", got ", ShapeString(t.shape)));
  }
  return CheckWellFormed(t, op, what);
}

// Per-channel vector of length `c`.
absl::Status CheckVector(const HostTensor& t, int64_t c, const char* op, const char* what) {
  if (t.shape.size() != 1 || t.shape[0] != c) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": ", what, " must have shape [", c, "], got ", ShapeString(t.shape)));
  }
  return CheckWellFormed(t, op, what);
}

template <typename F>
HostTensor Map(const HostTensor& x, F f) {
  HostTensor y{x.shape, std::vector<float>(x.data.size())};
  for (size_t i = 0; i < x.data.size(); ++i) y.data[i] = f(x.data[i]);
  return y;
}

float ReluValue(float x) { return x > 0.0f ? x : 0.0f; }
float ClipValue(float x, float lo, float hi) { return std::min(std::max(x, lo), hi); }
float LeakyReluValue(float x, float alpha) { return x >= 0.0f ? x : alpha * x; }
float SigmoidValue(float x) {
  return static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(x))));
}
float HardSigmoidValue(float x, float alpha, float beta) {
  const double v = static_cast<double>(alpha) * x + beta;
  return static_cast<float>(std::min(std::max(v, 0.0), 1.0));
}
float HardSwishValue(float x) {
  const double gate = std::min(std::max(static_cast<double>(x) / 6.0 + 0.5, 0.0), 1.0);
  return static_cast<float>(x * gate);
}

// Broadcast strides: the stride of `shape` (right-aligned to `out_rank`
// dimensions) for each output dimension, 0 where `shape` is 1 or absent.
std::vector<int64_t> BroadcastStrides(absl::Span<const int64_t> shape, size_t out_rank) {
  const std::vector<int64_t> own = RowMajorStrides(shape);
  std::vector<int64_t> strides(out_rank, 0);
  const size_t offset = out_rank - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) {
    strides[offset + i] = shape[i] == 1 ? 0 : own[i];
  }
  return strides;
}

// Calls f(out_index, a_index, b_index) for every element of the broadcast of
// shapes `a` and `b` (given as their broadcast strides) over `out`.
template <typename F>
void ForEachBroadcast(absl::Span<const int64_t> out, absl::Span<const int64_t> a_strides,
                      absl::Span<const int64_t> b_strides, F f) {
  const int64_t total = NumElements(out);
  const size_t rank = out.size();
  std::vector<int64_t> idx(rank, 0);
  int64_t ai = 0;
  int64_t bi = 0;
  for (int64_t oi = 0; oi < total; ++oi) {
    f(oi, ai, bi);
    // Advance the odometer.
    for (size_t d = rank; d-- > 0;) {
      ++idx[d];
      ai += a_strides[d];
      bi += b_strides[d];
      if (idx[d] < out[d]) break;
      ai -= a_strides[d] * out[d];
      bi -= b_strides[d] * out[d];
      idx[d] = 0;
    }
  }
}

template <typename F>
absl::StatusOr<HostTensor> Binary(const HostTensor& a, const HostTensor& b, const char* op, F f) {
  if (absl::Status s = CheckWellFormed(a, op, "A"); !s.ok()) return s;
  if (absl::Status s = CheckWellFormed(b, op, "B"); !s.ok()) return s;
  absl::StatusOr<std::vector<int64_t>> shape = BroadcastShapes(a.shape, b.shape);
  if (!shape.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", shape.status().message()));
  }
  HostTensor y{*shape, std::vector<float>(NumElements(*shape))};
  const std::vector<int64_t> as = BroadcastStrides(a.shape, shape->size());
  const std::vector<int64_t> bs = BroadcastStrides(b.shape, shape->size());
  ForEachBroadcast(*shape, as, bs, [&](int64_t oi, int64_t ai, int64_t bi) {
    y.data[oi] = f(a.data[ai], b.data[bi]);
  });
  return y;
}

// ValidRange returns [lo, hi) of output positions o in [0, out) for which
// o * stride + offset lies in [0, in).
std::pair<int64_t, int64_t> ValidRange(int64_t out, int64_t in, int64_t stride, int64_t offset) {
  const int64_t lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  const int64_t last = in - 1 - offset;  // o * stride <= last
  const int64_t hi = last < 0 ? 0 : std::min(out, last / stride + 1);
  return {std::min(lo, out), hi};
}

struct PoolGeometry {
  int64_t n, c, h, w, oh, ow;
};

absl::StatusOr<PoolGeometry> PoolShape(const HostTensor& x, const PoolAttrs& attrs,
                                       const char* op) {
  if (absl::Status s = CheckRank(x, 4, op, "X"); !s.ok()) return s;
  for (int i = 0; i < 2; ++i) {
    if (attrs.kernel[i] < 1 || attrs.strides[i] < 1 || attrs.dilations[i] < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(op, ": kernel, strides and dilations must be >= 1"));
    }
  }
  for (int64_t p : attrs.pads) {
    if (p < 0) return absl::InvalidArgumentError(absl::StrCat(op, ": pads must be >= 0"));
  }
  PoolGeometry g{x.shape[0], x.shape[1], x.shape[2], x.shape[3], 0, 0};
  absl::StatusOr<int64_t> oh =
      PoolOutputSize(g.h, attrs.kernel[0], attrs.strides[0], attrs.dilations[0], attrs.pads[0],
                     attrs.pads[2], attrs.ceil_mode);
  if (!oh.ok()) return oh.status();
  absl::StatusOr<int64_t> ow =
      PoolOutputSize(g.w, attrs.kernel[1], attrs.strides[1], attrs.dilations[1], attrs.pads[1],
                     attrs.pads[3], attrs.ceil_mode);
  if (!ow.ok()) return ow.status();
  g.oh = *oh;
  g.ow = *ow;
  return g;
}

// Calls f(out_index, plane, oy, ox) for every pooled output.
template <typename F>
void ForEachPoolOutput(const PoolGeometry& g, F f) {
  int64_t oi = 0;
  for (int64_t plane = 0; plane < g.n * g.c; ++plane) {
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      for (int64_t ox = 0; ox < g.ow; ++ox) f(oi++, plane, oy, ox);
    }
  }
}

// Returns x viewed as a [rows, cols] matrix, transposed if `transpose`.
std::vector<float> AsMatrix(const HostTensor& x, bool transpose) {
  if (!transpose) return x.data;
  const int64_t rows = x.shape[0];
  const int64_t cols = x.shape[1];
  std::vector<float> t(x.data.size());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) t[c * rows + r] = x.data[r * cols + c];
  }
  return t;
}

// MatMulInto computes acc[m,n] = sum_k a[m,k] * b[k,n] for row-major a [M,K]
// and b [K,N], in double. `acc` has M*N elements and is overwritten.
void MatMulInto(const float* a, const float* b, int64_t m_size, int64_t k_size, int64_t n_size,
                std::vector<double>& acc) {
  std::fill(acc.begin(), acc.end(), 0.0);
  for (int64_t m = 0; m < m_size; ++m) {
    double* row = acc.data() + m * n_size;
    for (int64_t k = 0; k < k_size; ++k) {
      const double av = a[m * k_size + k];
      const float* brow = b + k * n_size;
      for (int64_t n = 0; n < n_size; ++n) row[n] += av * brow[n];
    }
  }
}

}  // namespace

int64_t NumElements(absl::Span<const int64_t> shape) { return Product(shape, 0, shape.size()); }

int64_t HostTensor::NumElements() const { return reference::NumElements(shape); }

std::string ShapeString(absl::Span<const int64_t> shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ","), "]");
}

float ApplyActivation(const Activation& activation, float x) {
  switch (activation.kind) {
    case ActivationKind::kNone:
      return x;
    case ActivationKind::kRelu:
      return ReluValue(x);
    case ActivationKind::kClip:
      return ClipValue(x, activation.alpha, activation.beta);
    case ActivationKind::kLeakyRelu:
      return LeakyReluValue(x, activation.alpha);
    case ActivationKind::kSigmoid:
      return SigmoidValue(x);
    case ActivationKind::kHardSigmoid:
      return HardSigmoidValue(x, activation.alpha, activation.beta);
    case ActivationKind::kHardSwish:
      return HardSwishValue(x);
  }
  return std::numeric_limits<float>::quiet_NaN();  // unreachable for valid kinds
}

void ApplyActivation(const Activation& activation, HostTensor& t) {
  if (activation.kind == ActivationKind::kNone) return;
  for (float& v : t.data) v = ApplyActivation(activation, v);
}

absl::StatusOr<HostTensor> Conv2D(const HostTensor& x, const HostTensor& w, const HostTensor* bias,
                                  const Conv2DAttrs& attrs) {
  if (absl::Status s = CheckRank(x, 4, "Conv2D", "X"); !s.ok()) return s;
  if (absl::Status s = CheckRank(w, 4, "Conv2D", "W"); !s.ok()) return s;
  const int64_t n_size = x.shape[0], c = x.shape[1], h = x.shape[2], wd = x.shape[3];
  const int64_t oc_size = w.shape[0], icpg = w.shape[1], kh_size = w.shape[2], kw_size = w.shape[3];
  const int64_t groups = attrs.groups;
  if (groups < 1 || c % groups != 0 || oc_size % groups != 0 || icpg != c / groups) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Conv2D: groups ", groups, " do not fit X ", ShapeString(x.shape), " and W ",
        ShapeString(w.shape), " (need C and OC divisible by groups and W[1] == C/groups)"));
  }
  if (bias != nullptr) {
    if (absl::Status s = CheckVector(*bias, oc_size, "Conv2D", "B"); !s.ok()) return s;
  }
  const int64_t sh = attrs.strides[0], sw = attrs.strides[1];
  const int64_t dh = attrs.dilations[0], dw = attrs.dilations[1];
  const int64_t pt = attrs.pads[0], pl = attrs.pads[1], pb = attrs.pads[2], pr = attrs.pads[3];
  if (sh < 1 || sw < 1 || dh < 1 || dw < 1 || pt < 0 || pl < 0 || pb < 0 || pr < 0) {
    return absl::InvalidArgumentError("Conv2D: strides and dilations must be >= 1, pads >= 0");
  }
  const int64_t span_h = h + pt + pb - dh * (kh_size - 1) - 1;
  const int64_t span_w = wd + pl + pr - dw * (kw_size - 1) - 1;
  if (span_h < 0 || span_w < 0) {
    return absl::InvalidArgumentError(absl::StrCat("Conv2D: the dilated kernel [", kh_size, ",",
                                                   kw_size, "] does not fit the padded input ",
                                                   ShapeString(x.shape)));
  }
  const int64_t oh_size = span_h / sh + 1;
  const int64_t ow_size = span_w / sw + 1;
  const int64_t ocpg = oc_size / groups;

  HostTensor y{{n_size, oc_size, oh_size, ow_size},
               std::vector<float>(n_size * oc_size * oh_size * ow_size)};
  std::vector<double> acc(oh_size * ow_size);
  for (int64_t n = 0; n < n_size; ++n) {
    for (int64_t oc = 0; oc < oc_size; ++oc) {
      const int64_t g = oc / ocpg;
      std::fill(acc.begin(), acc.end(), bias != nullptr ? bias->data[oc] : 0.0);
      for (int64_t icg = 0; icg < icpg; ++icg) {
        const float* in = x.data.data() + ((n * c) + g * icpg + icg) * h * wd;
        const float* kernel = w.data.data() + (oc * icpg + icg) * kh_size * kw_size;
        for (int64_t kh = 0; kh < kh_size; ++kh) {
          const auto [oy_lo, oy_hi] = ValidRange(oh_size, h, sh, kh * dh - pt);
          for (int64_t kw = 0; kw < kw_size; ++kw) {
            const double wv = kernel[kh * kw_size + kw];
            const int64_t x_offset = kw * dw - pl;
            const auto [ox_lo, ox_hi] = ValidRange(ow_size, wd, sw, x_offset);
            for (int64_t oy = oy_lo; oy < oy_hi; ++oy) {
              const float* in_row = in + (oy * sh + kh * dh - pt) * wd + x_offset;
              double* acc_row = acc.data() + oy * ow_size;
              for (int64_t ox = ox_lo; ox < ox_hi; ++ox) acc_row[ox] += wv * in_row[ox * sw];
            }
          }
        }
      }
      float* out = y.data.data() + (n * oc_size + oc) * oh_size * ow_size;
      for (size_t i = 0; i < acc.size(); ++i) out[i] = static_cast<float>(acc[i]);
    }
  }
  return y;
}

absl::StatusOr<HostTensor> BatchNorm(const HostTensor& x, const HostTensor& scale,
                                     const HostTensor& bias, const HostTensor& mean,
                                     const HostTensor& var, const BatchNormAttrs& attrs) {
  if (absl::Status s = CheckWellFormed(x, "BatchNorm", "X"); !s.ok()) return s;
  if (x.shape.size() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("BatchNorm: X must have rank >= 2, got ", ShapeString(x.shape)));
  }
  const int64_t c = x.shape[1];
  const std::pair<const HostTensor*, const char*> params[] = {
      {&scale, "scale"}, {&bias, "B"}, {&mean, "mean"}, {&var, "var"}};
  for (const auto& [t, name] : params) {
    if (absl::Status s = CheckVector(*t, c, "BatchNorm", name); !s.ok()) return s;
  }
  const int64_t n_size = x.shape[0];
  const int64_t inner = Product(x.shape, 2, x.shape.size());
  HostTensor y{x.shape, std::vector<float>(x.data.size())};
  for (int64_t n = 0; n < n_size; ++n) {
    for (int64_t ch = 0; ch < c; ++ch) {
      const double inv_std =
          1.0 / std::sqrt(static_cast<double>(var.data[ch]) + static_cast<double>(attrs.epsilon));
      const int64_t base = (n * c + ch) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        y.data[base + i] = static_cast<float>(
            (x.data[base + i] - static_cast<double>(mean.data[ch])) * inv_std * scale.data[ch] +
            bias.data[ch]);
      }
    }
  }
  return y;
}

HostTensor Relu(const HostTensor& x) { return Map(x, ReluValue); }
HostTensor Clip(const HostTensor& x, float min, float max) {
  return Map(x, [=](float v) { return ClipValue(v, min, max); });
}
HostTensor LeakyRelu(const HostTensor& x, float alpha) {
  return Map(x, [=](float v) { return LeakyReluValue(v, alpha); });
}
HostTensor Sigmoid(const HostTensor& x) { return Map(x, SigmoidValue); }
HostTensor HardSigmoid(const HostTensor& x, float alpha, float beta) {
  return Map(x, [=](float v) { return HardSigmoidValue(v, alpha, beta); });
}
HostTensor HardSwish(const HostTensor& x) { return Map(x, HardSwishValue); }

absl::StatusOr<std::vector<int64_t>> BroadcastShapes(absl::Span<const int64_t> a,
                                                     absl::Span<const int64_t> b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Dimension i counted from the right; absent dimensions are 1.
    const int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("shapes ", ShapeString(a), " and ", ShapeString(b), " do not broadcast"));
    }
    out[rank - 1 - i] = da == 1 ? db : da;
  }
  return out;
}

absl::StatusOr<HostTensor> Add(const HostTensor& a, const HostTensor& b) {
  return Binary(a, b, "Add", [](float x, float y) { return x + y; });
}
absl::StatusOr<HostTensor> Sub(const HostTensor& a, const HostTensor& b) {
  return Binary(a, b, "Sub", [](float x, float y) { return x - y; });
}
absl::StatusOr<HostTensor> Mul(const HostTensor& a, const HostTensor& b) {
  return Binary(a, b, "Mul", [](float x, float y) { return x * y; });
}
absl::StatusOr<HostTensor> Div(const HostTensor& a, const HostTensor& b) {
  return Binary(a, b, "Div", [](float x, float y) { return x / y; });
}

absl::StatusOr<int64_t> PoolOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                                       int64_t pad_begin, int64_t pad_end, bool ceil_mode) {
  const int64_t span = in + pad_begin + pad_end - dilation * (kernel - 1) - 1;
  if (span < 0) {
    return absl::InvalidArgumentError(absl::StrCat("pool: the dilated kernel ", kernel,
                                                   " (dilation ", dilation,
                                                   ") does not fit the padded input ", in));
  }
  int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad_begin) --out;
  return out;
}

absl::StatusOr<HostTensor> MaxPool(const HostTensor& x, const PoolAttrs& attrs) {
  absl::StatusOr<PoolGeometry> geo = PoolShape(x, attrs, "MaxPool");
  if (!geo.ok()) return geo.status();
  const PoolGeometry& g = *geo;
  HostTensor y{{g.n, g.c, g.oh, g.ow}, std::vector<float>(g.n * g.c * g.oh * g.ow)};
  ForEachPoolOutput(g, [&](int64_t oi, int64_t plane, int64_t oy, int64_t ox) {
    float best = -std::numeric_limits<float>::infinity();
    for (int64_t ky = 0; ky < attrs.kernel[0]; ++ky) {
      const int64_t iy = oy * attrs.strides[0] - attrs.pads[0] + ky * attrs.dilations[0];
      if (iy < 0 || iy >= g.h) continue;
      for (int64_t kx = 0; kx < attrs.kernel[1]; ++kx) {
        const int64_t ix = ox * attrs.strides[1] - attrs.pads[1] + kx * attrs.dilations[1];
        if (ix < 0 || ix >= g.w) continue;
        best = std::max(best, x.data[(plane * g.h + iy) * g.w + ix]);
      }
    }
    y.data[oi] = best;
  });
  return y;
}

absl::StatusOr<HostTensor> AveragePool(const HostTensor& x, const PoolAttrs& attrs) {
  absl::StatusOr<PoolGeometry> geo = PoolShape(x, attrs, "AveragePool");
  if (!geo.ok()) return geo.status();
  const PoolGeometry& g = *geo;
  HostTensor y{{g.n, g.c, g.oh, g.ow}, std::vector<float>(g.n * g.c * g.oh * g.ow)};
  ForEachPoolOutput(g, [&](int64_t oi, int64_t plane, int64_t oy, int64_t ox) {
    double sum = 0.0;
    int64_t count = 0;
    for (int64_t ky = 0; ky < attrs.kernel[0]; ++ky) {
      const int64_t iy = oy * attrs.strides[0] - attrs.pads[0] + ky * attrs.dilations[0];
      for (int64_t kx = 0; kx < attrs.kernel[1]; ++kx) {
        const int64_t ix = ox * attrs.strides[1] - attrs.pads[1] + kx * attrs.dilations[1];
        const bool inside = iy >= 0 && iy < g.h && ix >= 0 && ix < g.w;
        const bool in_padded_extent = iy >= -attrs.pads[0] && iy < g.h + attrs.pads[2] &&
                                      ix >= -attrs.pads[1] && ix < g.w + attrs.pads[3];
        if (inside) sum += x.data[(plane * g.h + iy) * g.w + ix];
        if (attrs.count_include_pad ? in_padded_extent : inside) ++count;
      }
    }
    y.data[oi] = count == 0 ? 0.0f : static_cast<float>(sum / static_cast<double>(count));
  });
  return y;
}

absl::StatusOr<HostTensor> GlobalAveragePool(const HostTensor& x) {
  if (absl::Status s = CheckWellFormed(x, "GlobalAveragePool", "X"); !s.ok()) return s;
  if (x.shape.size() < 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("GlobalAveragePool: X must have rank >= 3, got ", ShapeString(x.shape)));
  }
  const int64_t planes = x.shape[0] * x.shape[1];
  const int64_t inner = Product(x.shape, 2, x.shape.size());
  HostTensor y{x.shape, std::vector<float>(planes)};
  std::fill(y.shape.begin() + 2, y.shape.end(), 1);
  for (int64_t p = 0; p < planes; ++p) {
    double sum = 0.0;
    for (int64_t i = 0; i < inner; ++i) sum += x.data[p * inner + i];
    y.data[p] = static_cast<float>(sum / static_cast<double>(inner));
  }
  return y;
}

absl::StatusOr<HostTensor> Gemm(const HostTensor& a, const HostTensor& b, const HostTensor* c,
                                const GemmAttrs& attrs) {
  if (absl::Status s = CheckRank(a, 2, "Gemm", "A"); !s.ok()) return s;
  if (absl::Status s = CheckRank(b, 2, "Gemm", "B"); !s.ok()) return s;
  const int64_t m_size = attrs.trans_a ? a.shape[1] : a.shape[0];
  const int64_t k_size = attrs.trans_a ? a.shape[0] : a.shape[1];
  const int64_t kb = attrs.trans_b ? b.shape[1] : b.shape[0];
  const int64_t n_size = attrs.trans_b ? b.shape[0] : b.shape[1];
  if (k_size != kb) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Gemm: inner dimensions differ: A ", ShapeString(a.shape), (attrs.trans_a ? "^T" : ""),
        " and B ", ShapeString(b.shape), (attrs.trans_b ? "^T" : "")));
  }
  std::vector<int64_t> c_strides = {0, 0};
  if (c != nullptr) {
    if (absl::Status s = CheckWellFormed(*c, "Gemm", "C"); !s.ok()) return s;
    const std::vector<int64_t> target = {m_size, n_size};
    absl::StatusOr<std::vector<int64_t>> bs = BroadcastShapes(c->shape, target);
    if (c->shape.size() > 2 || !bs.ok() || *bs != target) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Gemm: C ", ShapeString(c->shape), " does not broadcast to [", m_size, ",", n_size, "]"));
    }
    c_strides = BroadcastStrides(c->shape, 2);
  }
  const std::vector<float> am = AsMatrix(a, attrs.trans_a);
  const std::vector<float> bm = AsMatrix(b, attrs.trans_b);
  std::vector<double> acc(m_size * n_size);
  MatMulInto(am.data(), bm.data(), m_size, k_size, n_size, acc);
  HostTensor y{{m_size, n_size}, std::vector<float>(m_size * n_size)};
  for (int64_t m = 0; m < m_size; ++m) {
    for (int64_t n = 0; n < n_size; ++n) {
      double v = static_cast<double>(attrs.alpha) * acc[m * n_size + n];
      if (c != nullptr) {
        v += static_cast<double>(attrs.beta) * c->data[m * c_strides[0] + n * c_strides[1]];
      }
      y.data[m * n_size + n] = static_cast<float>(v);
    }
  }
  return y;
}

absl::StatusOr<HostTensor> MatMul(const HostTensor& a, const HostTensor& b) {
  if (absl::Status s = CheckWellFormed(a, "MatMul", "A"); !s.ok()) return s;
  if (absl::Status s = CheckWellFormed(b, "MatMul", "B"); !s.ok()) return s;
  if (a.shape.empty() || b.shape.empty()) {
    return absl::InvalidArgumentError("MatMul: inputs must have rank >= 1");
  }
  std::vector<int64_t> as = a.shape;
  std::vector<int64_t> bs = b.shape;
  if (as.size() == 1) as.insert(as.begin(), 1);
  if (bs.size() == 1) bs.push_back(1);
  const int64_t m_size = as[as.size() - 2];
  const int64_t k_size = as[as.size() - 1];
  const int64_t n_size = bs[bs.size() - 1];
  if (bs[bs.size() - 2] != k_size) {
    return absl::InvalidArgumentError(absl::StrCat("MatMul: inner dimensions differ: A ",
                                                   ShapeString(a.shape), " and B ",
                                                   ShapeString(b.shape)));
  }
  const std::vector<int64_t> a_batch(as.begin(), as.end() - 2);
  const std::vector<int64_t> b_batch(bs.begin(), bs.end() - 2);
  absl::StatusOr<std::vector<int64_t>> batch = BroadcastShapes(a_batch, b_batch);
  if (!batch.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("MatMul: batch dimensions of A ",
                                                   ShapeString(a.shape), " and B ",
                                                   ShapeString(b.shape), " do not broadcast"));
  }
  const int64_t batches = NumElements(*batch);
  std::vector<float> out(batches * m_size * n_size);
  std::vector<double> acc(m_size * n_size);
  // Batch element strides are in units of whole matrices.
  ForEachBroadcast(*batch, BroadcastStrides(a_batch, batch->size()),
                   BroadcastStrides(b_batch, batch->size()),
                   [&](int64_t oi, int64_t ai, int64_t bi) {
                     MatMulInto(a.data.data() + ai * m_size * k_size,
                                b.data.data() + bi * k_size * n_size, m_size, k_size, n_size, acc);
                     for (size_t i = 0; i < acc.size(); ++i) {
                       out[oi * m_size * n_size + i] = static_cast<float>(acc[i]);
                     }
                   });
  std::vector<int64_t> shape = *batch;
  if (a.shape.size() > 1) shape.push_back(m_size);
  if (b.shape.size() > 1) shape.push_back(n_size);
  return HostTensor{std::move(shape), std::move(out)};
}

absl::StatusOr<HostTensor> Flatten(const HostTensor& x, int64_t axis) {
  if (absl::Status s = CheckWellFormed(x, "Flatten", "X"); !s.ok()) return s;
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  absl::StatusOr<int64_t> ax = NormalizeAxis(axis, rank, /*inclusive_end=*/true, "Flatten");
  if (!ax.ok()) return ax.status();
  return HostTensor{{Product(x.shape, 0, *ax), Product(x.shape, *ax, rank)}, x.data};
}

absl::StatusOr<std::vector<int64_t>> ReshapeOutputShape(absl::Span<const int64_t> input_shape,
                                                        const ReshapeAttrs& attrs) {
  std::vector<int64_t> shape = attrs.shape;
  int64_t inferred = -1;
  bool has_zero = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (inferred >= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Reshape: more than one -1 in ", ShapeString(attrs.shape)));
      }
      inferred = static_cast<int64_t>(i);
    } else if (shape[i] == 0) {
      has_zero = true;
      if (!attrs.allow_zero) {
        if (i >= input_shape.size()) {
          return absl::InvalidArgumentError(
              absl::StrCat("Reshape: 0 at index ", i, " of ", ShapeString(attrs.shape),
                           " has no input dimension to copy in ", ShapeString(input_shape)));
        }
        shape[i] = input_shape[i];
      }
    } else if (shape[i] < -1) {
      return absl::InvalidArgumentError(
          absl::StrCat("Reshape: invalid dimension ", shape[i], " in ", ShapeString(attrs.shape)));
    }
  }
  if (attrs.allow_zero && has_zero && inferred >= 0) {
    return absl::InvalidArgumentError("Reshape: allow_zero forbids both 0 and -1 in the shape");
  }
  const int64_t total = NumElements(input_shape);
  if (inferred >= 0) {
    int64_t known = 1;
    for (size_t i = 0; i < shape.size(); ++i) {
      if (static_cast<int64_t>(i) != inferred) known *= shape[i];
    }
    if (known == 0 || total % known != 0) {
      return absl::InvalidArgumentError(absl::StrCat("Reshape: cannot infer -1 in ",
                                                     ShapeString(attrs.shape), " for input ",
                                                     ShapeString(input_shape)));
    }
    shape[inferred] = total / known;
  }
  if (NumElements(shape) != total) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Reshape: ", ShapeString(attrs.shape), " resolves to ", ShapeString(shape),
        " which does not have the ", total, " elements of ", ShapeString(input_shape)));
  }
  return shape;
}

absl::StatusOr<HostTensor> Reshape(const HostTensor& x, const ReshapeAttrs& attrs) {
  if (absl::Status s = CheckWellFormed(x, "Reshape", "X"); !s.ok()) return s;
  absl::StatusOr<std::vector<int64_t>> shape = ReshapeOutputShape(x.shape, attrs);
  if (!shape.ok()) return shape.status();
  return HostTensor{*std::move(shape), x.data};
}

absl::StatusOr<HostTensor> Transpose(const HostTensor& x, absl::Span<const int64_t> perm) {
  if (absl::Status s = CheckWellFormed(x, "Transpose", "X"); !s.ok()) return s;
  const size_t rank = x.shape.size();
  std::vector<int64_t> p(perm.begin(), perm.end());
  if (p.empty()) {
    p.resize(rank);
    for (size_t i = 0; i < rank; ++i) p[i] = static_cast<int64_t>(rank - 1 - i);
  }
  std::vector<int64_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> iota(rank);
  std::iota(iota.begin(), iota.end(), 0);
  if (sorted != iota) {
    return absl::InvalidArgumentError(absl::StrCat("Transpose: perm ", ShapeString(p),
                                                   " is not a permutation of the axes of ",
                                                   ShapeString(x.shape)));
  }
  std::vector<int64_t> out_shape(rank);
  std::vector<int64_t> in_strides_permuted(rank);
  const std::vector<int64_t> in_strides = RowMajorStrides(x.shape);
  for (size_t i = 0; i < rank; ++i) {
    out_shape[i] = x.shape[p[i]];
    in_strides_permuted[i] = in_strides[p[i]];
  }
  HostTensor y{out_shape, std::vector<float>(x.data.size())};
  const std::vector<int64_t> zero(rank, 0);
  ForEachBroadcast(out_shape, in_strides_permuted, zero,
                   [&](int64_t oi, int64_t ii, int64_t) { y.data[oi] = x.data[ii]; });
  return y;
}

absl::StatusOr<HostTensor> Concat(absl::Span<const HostTensor* const> inputs, int64_t axis) {
  if (inputs.empty() || inputs[0] == nullptr) {
    return absl::InvalidArgumentError("Concat: needs at least one input");
  }
  const std::vector<int64_t>& first = inputs[0]->shape;
  const int64_t rank = static_cast<int64_t>(first.size());
  absl::StatusOr<int64_t> ax = NormalizeAxis(axis, rank, /*inclusive_end=*/false, "Concat");
  if (!ax.ok()) return ax.status();
  std::vector<int64_t> out_shape = first;
  out_shape[*ax] = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const HostTensor* t = inputs[i];
    if (t == nullptr) return absl::InvalidArgumentError("Concat: null input");
    if (absl::Status s = CheckWellFormed(*t, "Concat", "an input"); !s.ok()) return s;
    bool fits = static_cast<int64_t>(t->shape.size()) == rank;
    for (int64_t d = 0; fits && d < rank; ++d) {
      fits = d == *ax || t->shape[d] == first[d];
    }
    if (!fits) {
      return absl::InvalidArgumentError(absl::StrCat("Concat: input ", i, " ",
                                                     ShapeString(t->shape), " does not match ",
                                                     ShapeString(first), " off axis ", *ax));
    }
    out_shape[*ax] += t->shape[*ax];
  }
  const int64_t outer = Product(first, 0, *ax);
  const int64_t inner = Product(first, *ax + 1, rank);
  HostTensor y{out_shape, {}};
  y.data.reserve(NumElements(out_shape));
  for (int64_t o = 0; o < outer; ++o) {
    for (const HostTensor* t : inputs) {
      const int64_t chunk = t->shape[*ax] * inner;
      y.data.insert(y.data.end(), t->data.begin() + o * chunk, t->data.begin() + (o + 1) * chunk);
    }
  }
  return y;
}

absl::StatusOr<HostTensor> Softmax(const HostTensor& x, const SoftmaxAttrs& attrs) {
  if (absl::Status s = CheckWellFormed(x, "Softmax", "X"); !s.ok()) return s;
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  absl::StatusOr<int64_t> ax = NormalizeAxis(attrs.axis, rank, /*inclusive_end=*/false, "Softmax");
  if (!ax.ok()) return ax.status();
  // The softmax runs over `len` elements spaced `stride` apart, for every
  // (outer, inner) pair.
  const int64_t outer = Product(x.shape, 0, *ax);
  const int64_t len = attrs.coerce_to_2d ? Product(x.shape, *ax, rank) : x.shape[*ax];
  const int64_t inner = attrs.coerce_to_2d ? 1 : Product(x.shape, *ax + 1, rank);
  HostTensor y{x.shape, std::vector<float>(x.data.size())};
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      const int64_t base = o * len * inner + in;
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t i = 0; i < len; ++i) max = std::max(max, double{x.data[base + i * inner]});
      double sum = 0.0;
      for (int64_t i = 0; i < len; ++i) sum += std::exp(x.data[base + i * inner] - max);
      for (int64_t i = 0; i < len; ++i) {
        y.data[base + i * inner] =
            static_cast<float>(std::exp(x.data[base + i * inner] - max) / sum);
      }
    }
  }
  return y;
}

HostTensor Identity(const HostTensor& x) { return x; }

}  // namespace recq::reference
