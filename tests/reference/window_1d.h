// Direct 1-D convolution, transposed convolution and pooling on (N, C, L),
// from ONNX's definitions, written independently of the 2-D references:
// the check of recq's import of 1-D window ops as 2-D ones with H = 1.
#ifndef RECQ_TESTS_REFERENCE_WINDOW_1D_H_
#define RECQ_TESTS_REFERENCE_WINDOW_1D_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace recq::reference {

struct Window1D {
  int64_t kernel = 1, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0;
};

// Conv1D: x [n, c, l], w [oc, c / groups, k], bias [oc] or empty; returns
// [n, oc, lo] with lo = (l + pads - dilation * (k - 1) - 1) / stride + 1.
inline std::vector<float> Conv1D(const std::vector<float>& x, int64_t n, int64_t c, int64_t l,
                                 const std::vector<float>& w, int64_t oc,
                                 const std::vector<float>& bias, const Window1D& win,
                                 int64_t groups, int64_t* out_len) {
  const int64_t lo =
      (l + win.pad_begin + win.pad_end - win.dilation * (win.kernel - 1) - 1) / win.stride + 1;
  *out_len = lo;
  const int64_t cg = c / groups, ocg = oc / groups;
  std::vector<float> y(n * oc * lo);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t o = 0; o < oc; ++o) {
      const int64_t g = o / ocg;
      for (int64_t p = 0; p < lo; ++p) {
        double acc = bias.empty() ? 0.0 : bias[o];
        for (int64_t ci = 0; ci < cg; ++ci) {
          for (int64_t k = 0; k < win.kernel; ++k) {
            const int64_t pos = p * win.stride - win.pad_begin + k * win.dilation;
            if (pos < 0 || pos >= l) continue;
            acc += double(x[(b * c + g * cg + ci) * l + pos]) * w[(o * cg + ci) * win.kernel + k];
          }
        }
        y[(b * oc + o) * lo + p] = static_cast<float>(acc);
      }
    }
  }
  return y;
}

// ConvTranspose1D: x [n, c, l], w [c, oc / groups, k]; output length
// stride * (l - 1) + output_padding + dilation * (k - 1) + 1 - pads.
inline std::vector<float> ConvTranspose1D(const std::vector<float>& x, int64_t n, int64_t c,
                                          int64_t l, const std::vector<float>& w, int64_t ocg,
                                          const Window1D& win, int64_t output_padding,
                                          int64_t groups, int64_t* out_len) {
  const int64_t lo = win.stride * (l - 1) + output_padding + win.dilation * (win.kernel - 1) + 1 -
                     win.pad_begin - win.pad_end;
  *out_len = lo;
  const int64_t cg = c / groups, oc = ocg * groups;
  std::vector<double> acc(n * oc * lo, 0.0);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ci = 0; ci < c; ++ci) {
      const int64_t g = ci / cg;
      for (int64_t i = 0; i < l; ++i) {
        for (int64_t o = 0; o < ocg; ++o) {
          for (int64_t k = 0; k < win.kernel; ++k) {
            const int64_t pos = i * win.stride + k * win.dilation - win.pad_begin;
            if (pos < 0 || pos >= lo) continue;
            acc[(b * oc + g * ocg + o) * lo + pos] +=
                double(x[(b * c + ci) * l + i]) * w[(ci * ocg + o) * win.kernel + k];
          }
        }
      }
    }
  }
  return std::vector<float>(acc.begin(), acc.end());
}

// Pool1D: max or average over each window of x [n, c, l] (padding excluded
// from averages unless count_include_pad).
inline std::vector<float> Pool1D(const std::vector<float>& x, int64_t n, int64_t c, int64_t l,
                                 const Window1D& win, bool max, bool count_include_pad,
                                 int64_t* out_len) {
  const int64_t lo =
      (l + win.pad_begin + win.pad_end - win.dilation * (win.kernel - 1) - 1) / win.stride + 1;
  *out_len = lo;
  std::vector<float> y(n * c * lo);
  for (int64_t r = 0; r < n * c; ++r) {
    for (int64_t p = 0; p < lo; ++p) {
      double best = -std::numeric_limits<double>::infinity(), sum = 0;
      int64_t count = 0;
      for (int64_t k = 0; k < win.kernel; ++k) {
        const int64_t pos = p * win.stride - win.pad_begin + k * win.dilation;
        if (pos < 0 || pos >= l) {
          if (count_include_pad) ++count;
          continue;
        }
        best = std::max(best, double(x[r * l + pos]));
        sum += x[r * l + pos];
        ++count;
      }
      y[r * lo + p] = static_cast<float>(max ? best : sum / count);
    }
  }
  return y;
}

}  // namespace recq::reference

#endif  // RECQ_TESTS_REFERENCE_WINDOW_1D_H_
