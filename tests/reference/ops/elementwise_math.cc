// Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Round,
// Softsign, Elu, Selu, Celu, ThresholdedRelu and Shrink
// (engine/ops/elementwise_math.cc) from ONNX's definitions, in double.
#include <cmath>
#include <functional>

#include "engine/ops/elementwise_math.h"
#include "reference/reference_registry.h"
#include "reference/reference_util.h"

namespace recq::reference {

RECQ_REGISTER_REFERENCE(ElementwiseMath) {
  using F = std::function<double(double, double, double)>;
  const struct {
    const char* name;
    F f;
  } ops[] = {
      {"Sin", [](double x, double, double) { return std::sin(x); }},
      {"Cos", [](double x, double, double) { return std::cos(x); }},
      {"Tan", [](double x, double, double) { return std::tan(x); }},
      {"Asin", [](double x, double, double) { return std::asin(x); }},
      {"Acos", [](double x, double, double) { return std::acos(x); }},
      {"Atan", [](double x, double, double) { return std::atan(x); }},
      {"Sinh", [](double x, double, double) { return std::sinh(x); }},
      {"Cosh", [](double x, double, double) { return std::cosh(x); }},
      {"Asinh", [](double x, double, double) { return std::asinh(x); }},
      {"Acosh", [](double x, double, double) { return std::acosh(x); }},
      {"Atanh", [](double x, double, double) { return std::atanh(x); }},
      {"Round", [](double x, double, double) { return std::nearbyint(x); }},
      {"Softsign", [](double x, double, double) { return x / (1 + std::fabs(x)); }},
      {"Elu", [](double x, double a, double) { return x >= 0 ? x : a * (std::exp(x) - 1); }},
      {"Selu",
       [](double x, double a, double g) { return g * (x > 0 ? x : a * (std::exp(x) - 1)); }},
      {"Celu",
       [](double x, double a, double) {
         return std::fmax(x, 0.0) + std::fmin(0.0, a * (std::exp(x / a) - 1));
       }},
      {"ThresholdedRelu", [](double x, double a, double) { return x > a ? x : 0.0; }},
      {"Shrink",
       [](double x, double l, double b) { return x < -l ? x + b : (x > l ? x - b : 0.0); }},
  };
  for (const auto& op : ops) {
    F f = op.f;
    absl::Status s = table.Add(
        OpType(op.name), [f](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
          if (absl::Status s = CheckArity(node, in, 1, 1); !s.ok()) return s;
          absl::StatusOr<internal::MathAttrs> a = AttrsOf<internal::MathAttrs>(node);
          if (!a.ok()) return a.status();
          HostTensor y = *in[0];
          for (float& v : y.data) v = static_cast<float>(f(v, a->alpha, a->beta));
          return y;
        });
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace recq::reference
