// The unary math ops of engine/ops/unary.cc, element by element in double
// precision from their ONNX definitions.
#include <cmath>
#include <functional>
#include <utility>

#include "recq/math_op_attrs.h"
#include "reference/reference_registry.h"

namespace recq::reference {
namespace {

double Softplus(double v) { return std::log1p(std::exp(v)); }

double Gelu(double v, bool tanh_approximation) {
  if (tanh_approximation) {
    return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
  }
  return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
}

}  // namespace

RECQ_REGISTER_REFERENCE(Unary) {
  using Fn = std::function<double(double)>;
  const std::pair<const char*, Fn> ops[] = {
      {"Sqrt", [](double v) { return std::sqrt(v); }},
      {"Exp", [](double v) { return std::exp(v); }},
      {"Log", [](double v) { return std::log(v); }},
      {"Tanh", [](double v) { return std::tanh(v); }},
      {"Neg", [](double v) { return -v; }},
      {"Abs", [](double v) { return std::fabs(v); }},
      {"Reciprocal", [](double v) { return 1.0 / v; }},
      {"Floor", [](double v) { return std::floor(v); }},
      {"Ceil", [](double v) { return std::ceil(v); }},
      {"Softplus", Softplus},
      {"Mish", [](double v) { return v * std::tanh(Softplus(v)); }},
  };
  for (const auto& [name, fn] : ops) {
    absl::Status s =
        table.Add(OpType(name),
                  [fn = fn](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                    if (absl::Status s = CheckArity(node, in, 1, 1); !s.ok()) return s;
                    HostTensor y = *in[0];
                    for (float& v : y.data) v = static_cast<float>(fn(v));
                    return y;
                  });
    if (!s.ok()) return s;
  }
  return table.Add(OpType("Gelu"),
                   [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                     if (absl::Status s = CheckArity(node, in, 1, 1); !s.ok()) return s;
                     absl::StatusOr<GeluAttrs> a = AttrsOf<GeluAttrs>(node);
                     if (!a.ok()) return a.status();
                     HostTensor y = *in[0];
                     for (float& v : y.data) {
                       v = static_cast<float>(Gelu(v, a->tanh_approximation));
                     }
                     return y;
                   });
}

}  // namespace recq::reference
