// ONNX's RNN, GRU and LSTM recurrences, written from the operator
// definitions, in double: the reference of RecurrentSequence
// (tests/reference/ops/recurrent.cc) and of the ONNX import
// (tests/onnx/recurrent_test.cc).
#ifndef RECQ_TESTS_REFERENCE_RECURRENT_H_
#define RECQ_TESTS_REFERENCE_RECURRENT_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "engine/ops/recurrent.h"

namespace recq::reference {

struct RecurrentResult {
  std::vector<float> y;    // [T, D, B, H]
  std::vector<float> y_h;  // [D, B, H]
  std::vector<float> y_c;  // [D, B, H] (LSTM)
};

// The inputs of one run. `proj(t, b, d, row)` is (X W^T)[t][b] of
// direction d's weight row `row` (gate * H + unit); `rec(d, row, k)` is
// R[d][row][k]. The optional ones are empty when absent: bias [D, 2GH],
// seq [B], h0 and c0 [D, B, H], p [D, 3H].
struct RecurrentInputs {
  int64_t steps = 1, batch = 1;
  std::function<double(int64_t, int64_t, int64_t, int64_t)> proj;
  std::function<double(int64_t, int64_t, int64_t)> rec;
  std::vector<float> bias, h0, c0, p;
  std::vector<int64_t> seq;
};

inline RecurrentResult RunRecurrence(const internal::RecurrentAttrs& a, const RecurrentInputs& in) {
  using internal::RecurrentCell;
  const int64_t T = in.steps, B = in.batch, H = a.hidden_size, D = a.directions;
  const int64_t G = internal::GatesOf(a.cell), F = internal::FunctionsOf(a.cell);
  RecurrentResult out;
  out.y.assign(T * D * B * H, 0.0f);
  out.y_h.assign(D * B * H, 0.0f);
  out.y_c.assign(D * B * H, 0.0f);
  auto clip = [&](double v) { return a.clip > 0 ? std::clamp<double>(v, -a.clip, a.clip) : v; };
  for (int64_t d = 0; d < D; ++d) {
    auto act = [&](int64_t f, double v, bool clipped) {
      return internal::ApplyRecurrentActivation(a.activations[d * F + f], clipped ? clip(v) : v);
    };
    auto wb = [&](int64_t row) { return in.bias.empty() ? 0.0 : in.bias[d * 2 * G * H + row]; };
    auto rb = [&](int64_t row) {
      return in.bias.empty() ? 0.0 : in.bias[d * 2 * G * H + G * H + row];
    };
    for (int64_t b = 0; b < B; ++b) {
      const int64_t len = in.seq.empty() ? T : std::clamp<int64_t>(in.seq[b], 0, T);
      std::vector<double> h(H, 0.0), c(H, 0.0);
      for (int64_t j = 0; j < H; ++j) {
        if (!in.h0.empty()) h[j] = in.h0[(d * B + b) * H + j];
        if (!in.c0.empty()) c[j] = in.c0[(d * B + b) * H + j];
      }
      // Recurrent product of a state vector with gate g's rows.
      auto rdot = [&](const std::vector<double>& v, int64_t g, int64_t j) {
        double s = 0;
        for (int64_t k = 0; k < H; ++k) s += v[k] * in.rec(d, g * H + j, k);
        return s;
      };
      for (int64_t step = 0; step < len; ++step) {
        const int64_t t = internal::IsReverse(a, d) ? len - 1 - step : step;
        auto x = [&](int64_t g, int64_t j) { return in.proj(t, b, d, g * H + j); };
        std::vector<double> hn(H), cn(H);
        if (a.cell == RecurrentCell::kRnn) {
          for (int64_t j = 0; j < H; ++j) {
            hn[j] = act(0, x(0, j) + rdot(h, 0, j) + wb(j) + rb(j), true);
          }
        } else if (a.cell == RecurrentCell::kGru) {
          std::vector<double> z(H), r(H), rh(H);
          for (int64_t j = 0; j < H; ++j) {
            z[j] = act(0, x(0, j) + rdot(h, 0, j) + wb(j) + rb(j), true);
            r[j] = act(0, x(1, j) + rdot(h, 1, j) + wb(H + j) + rb(H + j), true);
            rh[j] = r[j] * h[j];
          }
          for (int64_t j = 0; j < H; ++j) {
            const double cand =
                a.linear_before_reset
                    ? act(1, x(2, j) + r[j] * (rdot(h, 2, j) + rb(2 * H + j)) + wb(2 * H + j), true)
                    : act(1, x(2, j) + rdot(rh, 2, j) + rb(2 * H + j) + wb(2 * H + j), true);
            hn[j] = (1 - z[j]) * cand + z[j] * h[j];
          }
        } else {
          for (int64_t j = 0; j < H; ++j) {
            const double pi = in.p.empty() ? 0 : in.p[d * 3 * H + j];
            const double po = in.p.empty() ? 0 : in.p[d * 3 * H + H + j];
            const double pf = in.p.empty() ? 0 : in.p[d * 3 * H + 2 * H + j];
            const double gi = act(0, x(0, j) + rdot(h, 0, j) + wb(j) + rb(j) + pi * c[j], true);
            const double gf =
                a.input_forget
                    ? 1 - gi
                    : act(0, x(2, j) + rdot(h, 2, j) + wb(2 * H + j) + rb(2 * H + j) + pf * c[j],
                          true);
            const double gc = act(1, x(3, j) + rdot(h, 3, j) + wb(3 * H + j) + rb(3 * H + j), true);
            cn[j] = gf * c[j] + gi * gc;
            const double go =
                act(0, x(1, j) + rdot(h, 1, j) + wb(H + j) + rb(H + j) + po * cn[j], true);
            hn[j] = go * act(2, cn[j], false);
          }
          c = cn;
        }
        h = hn;
        for (int64_t j = 0; j < H; ++j) out.y[((t * D + d) * B + b) * H + j] = float(h[j]);
      }
      for (int64_t j = 0; j < H; ++j) {
        out.y_h[(d * B + b) * H + j] = float(h[j]);
        out.y_c[(d * B + b) * H + j] = float(c[j]);
      }
    }
  }
  return out;
}

}  // namespace recq::reference

#endif  // RECQ_TESTS_REFERENCE_RECURRENT_H_
