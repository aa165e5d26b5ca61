#include "reference/reference_ops.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "reference/reference_util.h"

namespace recq::reference {

using namespace detail;  // NOLINT: the helpers of every reference op

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
    case ActivationKind::kSilu:
      return static_cast<float>(double(x) / (1.0 + std::exp(-double(x))));
    case ActivationKind::kGelu:
      return static_cast<float>(0.5 * x * (1.0 + std::erf(double(x) / std::sqrt(2.0))));
    case ActivationKind::kGeluTanh: {
      const double v = x;
      return static_cast<float>(
          0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v))));
    }
  }
  return std::numeric_limits<float>::quiet_NaN();  // unreachable for valid kinds
}

void ApplyActivation(const Activation& activation, HostTensor& t) {
  if (activation.kind == ActivationKind::kNone) return;
  for (float& v : t.data) v = ApplyActivation(activation, v);
}

}  // namespace recq::reference
