// Helpers shared by the CPU reference ops under tests/reference/ops/.
#ifndef RECQ_TESTS_REFERENCE_REFERENCE_UTIL_H_
#define RECQ_TESTS_REFERENCE_REFERENCE_UTIL_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "reference/reference_ops.h"

namespace recq::reference::detail {

// WrapTo wraps an integer result to `t` (two's complement, as OpenCL's
// integer arithmetic does): int32, int8 and uint8 wrap, int64 and bool
// truncate toward zero; float values are returned as they are.
inline double WrapTo(double v, DataType t) {
  if (IsFloatingPoint(t)) return v;
  const int64_t i = static_cast<int64_t>(v);
  switch (t) {
    case DataType::kInt32:
      return static_cast<int32_t>(static_cast<uint32_t>(i));
    case DataType::kInt8:
      return static_cast<int8_t>(static_cast<uint8_t>(i));
    case DataType::kUInt8:
      return static_cast<uint8_t>(i);
    case DataType::kInt16:
      return static_cast<int16_t>(static_cast<uint16_t>(i));
    case DataType::kUInt16:
      return static_cast<uint16_t>(i);
    case DataType::kUInt32:
      return static_cast<uint32_t>(i);
    default:
      return static_cast<double>(i);
  }
}

// NormalizeAxis maps `axis` in [-rank, rank) (or [-rank, rank] if
// `inclusive_end`) to [0, rank) (or [0, rank]).
inline absl::StatusOr<int64_t> NormalizeAxis(int64_t axis, int64_t rank, bool inclusive_end,
                                             const char* op) {
  const int64_t hi = inclusive_end ? rank : rank - 1;
  if (axis < -rank || axis > hi) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": axis ", axis, " is out of range [", -rank,
                                                   ", ", hi, "] for rank ", rank));
  }
  return axis < 0 ? axis + rank : axis;
}

// Strides of a row-major tensor of `shape`.
inline std::vector<int64_t> RowMajorStrides(absl::Span<const int64_t> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * shape[i + 1];
  }
  return strides;
}

// Product of shape[begin, end).
inline int64_t Product(absl::Span<const int64_t> shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= shape[i];
  return p;
}

inline absl::Status CheckWellFormed(const HostTensor& t, const char* op, const char* what) {
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

inline absl::Status CheckRank(const HostTensor& t, size_t rank, const char* op, const char* what) {
  if (t.shape.size() != rank) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": ", what, " must have rank ", rank, ", got ", ShapeString(t.shape)));
  }
  return CheckWellFormed(t, op, what);
}

// Per-channel vector of length `c`.
inline absl::Status CheckVector(const HostTensor& t, int64_t c, const char* op, const char* what) {
  if (t.shape.size() != 1 || t.shape[0] != c) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": ", what, " must have shape [", c, "], got ", ShapeString(t.shape)));
  }
  return CheckWellFormed(t, op, what);
}

template <typename F>
inline HostTensor Map(const HostTensor& x, F f) {
  HostTensor y{x.shape, std::vector<float>(x.data.size())};
  for (size_t i = 0; i < x.data.size(); ++i) y.data[i] = f(x.data[i]);
  return y;
}

inline float ReluValue(float x) { return x > 0.0f ? x : 0.0f; }
inline float ClipValue(float x, float lo, float hi) { return std::min(std::max(x, lo), hi); }
inline float LeakyReluValue(float x, float alpha) { return x >= 0.0f ? x : alpha * x; }
inline float SigmoidValue(float x) {
  return static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(x))));
}
inline float HardSigmoidValue(float x, float alpha, float beta) {
  const double v = static_cast<double>(alpha) * x + beta;
  return static_cast<float>(std::min(std::max(v, 0.0), 1.0));
}
inline float HardSwishValue(float x) {
  const double gate = std::min(std::max(static_cast<double>(x) / 6.0 + 0.5, 0.0), 1.0);
  return static_cast<float>(x * gate);
}

// Broadcast strides: the stride of `shape` (right-aligned to `out_rank`
// dimensions) for each output dimension, 0 where `shape` is 1 or absent.
inline std::vector<int64_t> BroadcastStrides(absl::Span<const int64_t> shape, size_t out_rank) {
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
inline void ForEachBroadcast(absl::Span<const int64_t> out, absl::Span<const int64_t> a_strides,
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
inline absl::StatusOr<HostTensor> Binary(const HostTensor& a, const HostTensor& b, const char* op,
                                         F f) {
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
inline std::pair<int64_t, int64_t> ValidRange(int64_t out, int64_t in, int64_t stride,
                                              int64_t offset) {
  const int64_t lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  const int64_t last = in - 1 - offset;  // o * stride <= last
  const int64_t hi = last < 0 ? 0 : std::min(out, last / stride + 1);
  return {std::min(lo, out), hi};
}

struct PoolGeometry {
  int64_t n, c, h, w, oh, ow;
};

inline absl::StatusOr<PoolGeometry> PoolShape(const HostTensor& x, const PoolAttrs& attrs,
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
inline void ForEachPoolOutput(const PoolGeometry& g, F f) {
  int64_t oi = 0;
  for (int64_t plane = 0; plane < g.n * g.c; ++plane) {
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      for (int64_t ox = 0; ox < g.ow; ++ox) f(oi++, plane, oy, ox);
    }
  }
}

// Returns x viewed as a [rows, cols] matrix, transposed if `transpose`.
inline std::vector<float> AsMatrix(const HostTensor& x, bool transpose) {
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
inline void MatMulInto(const float* a, const float* b, int64_t m_size, int64_t k_size,
                       int64_t n_size, std::vector<double>& acc) {
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

}  // namespace recq::reference::detail

#endif  // RECQ_TESTS_REFERENCE_REFERENCE_UTIL_H_
