// DFT and STFT (engine/ops/signal.cc) from their definitions, summed in
// double: y[k] = sum_n x[n] e^(-+2 pi i k n / L) (/ L for the inverse).
#include <cmath>
#include <complex>
#include <vector>

#include "engine/ops/signal.h"
#include "reference/reference_registry.h"
#include "reference/reference_util.h"

namespace recq::reference {
namespace {

constexpr double kTwoPi = 6.283185307179586476925286766559;

std::complex<double> Twiddle(int64_t k, int64_t n, int64_t len, double sign) {
  const double t = kTwoPi * static_cast<double>((k * n) % len) / static_cast<double>(len);
  return {std::cos(t), sign * std::sin(t)};
}

absl::StatusOr<HostTensor> Dft(const Node& node, ReferenceInputs in) {
  if (absl::Status s = CheckArity(node, in, 1, 1); !s.ok()) return s;
  absl::StatusOr<internal::DFTAttrs> a = AttrsOf<internal::DFTAttrs>(node);
  if (!a.ok()) return a.status();
  const HostTensor& x = *in[0];
  const std::vector<int64_t>& xs = x.shape;
  const int64_t channels = xs.back();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < a->axis; ++d) outer *= xs[d];
  for (size_t d = a->axis + 1; d + 1 < xs.size(); ++d) inner *= xs[d];
  const int64_t n_in = xs[a->axis];
  const int64_t bins = a->onesided ? a->length / 2 + 1 : a->length;
  std::vector<int64_t> ys = xs;
  ys[a->axis] = bins;
  ys.back() = 2;
  HostTensor y{ys, std::vector<float>(NumElements(ys)), DataType::kFloat32};
  const double sign = a->inverse ? 1.0 : -1.0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < bins; ++k) {
      for (int64_t i = 0; i < inner; ++i) {
        std::complex<double> acc = 0;
        for (int64_t n = 0; n < std::min(n_in, a->length); ++n) {
          const int64_t at = ((o * n_in + n) * inner + i) * channels;
          const std::complex<double> v(x.data[at], channels == 2 ? x.data[at + 1] : 0.0f);
          acc += v * Twiddle(k, n, a->length, sign);
        }
        if (a->inverse) acc /= static_cast<double>(a->length);
        const int64_t out = ((o * bins + k) * inner + i) * 2;
        y.data[out] = static_cast<float>(acc.real());
        y.data[out + 1] = static_cast<float>(acc.imag());
      }
    }
  }
  return y;
}

absl::StatusOr<HostTensor> Stft(const Node& node, ReferenceInputs in) {
  if (absl::Status s = CheckArity(node, in, 1, 2); !s.ok()) return s;
  absl::StatusOr<internal::STFTAttrs> a = AttrsOf<internal::STFTAttrs>(node);
  if (!a.ok()) return a.status();
  const HostTensor& x = *in[0];
  const HostTensor* window = Optional(in, 1);
  const int64_t batch = x.shape[0], length = x.shape[1], channels = x.shape[2];
  const int64_t frames = 1 + (length - a->frame_length) / a->frame_step;
  const int64_t bins = a->onesided ? a->frame_length / 2 + 1 : a->frame_length;
  HostTensor y{
      {batch, frames, bins, 2}, std::vector<float>(batch * frames * bins * 2), DataType::kFloat32};
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t k = 0; k < bins; ++k) {
        std::complex<double> acc = 0;
        for (int64_t n = 0; n < a->frame_length; ++n) {
          const int64_t at = (b * length + f * a->frame_step + n) * channels;
          const double w = window != nullptr ? window->data[n] : 1.0;
          const std::complex<double> v(x.data[at], channels == 2 ? x.data[at + 1] : 0.0f);
          acc += v * w * Twiddle(k, n, a->frame_length, -1.0);
        }
        const int64_t out = ((b * frames + f) * bins + k) * 2;
        y.data[out] = static_cast<float>(acc.real());
        y.data[out + 1] = static_cast<float>(acc.imag());
      }
    }
  }
  return y;
}

// y = the table where the size equals the expected one, NaN otherwise.
absl::StatusOr<HostTensor> SizeChecked(const Node& node, ReferenceInputs in) {
  if (absl::Status s = CheckArity(node, in, 2, 2); !s.ok()) return s;
  absl::StatusOr<internal::SizeCheckedConstantAttrs> a =
      AttrsOf<internal::SizeCheckedConstantAttrs>(node);
  if (!a.ok()) return a.status();
  HostTensor y = *in[1];
  if (static_cast<int64_t>(in[0]->data[0]) != a->expected) {
    for (float& v : y.data) v = std::nanf("");
  }
  return y;
}

}  // namespace

RECQ_REGISTER_REFERENCE(Signal) {
  if (absl::Status s = table.Add(internal::kDFT, Dft); !s.ok()) return s;
  if (absl::Status s = table.Add(internal::kSizeCheckedConstant, SizeChecked); !s.ok()) return s;
  return table.Add(internal::kSTFT, Stft);
}

}  // namespace recq::reference
