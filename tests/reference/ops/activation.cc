#include "reference/reference_registry.h"
#include "reference/reference_util.h"

namespace recq::reference {

using namespace detail;  // NOLINT: the helpers of every reference op

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

namespace {

using UnaryFn = HostTensor (*)(const HostTensor&, const ActivationAttrs&);

absl::Status AddUnary(ReferenceTable& table, OpType op, UnaryFn f) {
  return table.Add(op, [f](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
    if (absl::Status s = CheckArity(node, in, 1, 1); !s.ok()) return s;
    absl::StatusOr<ActivationAttrs> a = AttrsOf<ActivationAttrs>(node);
    if (!a.ok()) return a.status();
    return f(*in[0], *a);
  });
}

}  // namespace

RECQ_REGISTER_REFERENCE(Activation) {
  absl::Status s = AddUnary(table, OpType::kRelu,
                            [](const HostTensor& x, const ActivationAttrs&) { return Relu(x); });
  if (s.ok()) {
    s = AddUnary(table, OpType::kClip, [](const HostTensor& x, const ActivationAttrs& a) {
      return Clip(x, a.alpha, a.beta);
    });
  }
  if (s.ok()) {
    s = AddUnary(table, OpType::kLeakyRelu, [](const HostTensor& x, const ActivationAttrs& a) {
      return LeakyRelu(x, a.alpha);
    });
  }
  if (s.ok()) {
    s = AddUnary(table, OpType::kSigmoid,
                 [](const HostTensor& x, const ActivationAttrs&) { return Sigmoid(x); });
  }
  if (s.ok()) {
    s = AddUnary(table, OpType::kHardSigmoid, [](const HostTensor& x, const ActivationAttrs& a) {
      return HardSigmoid(x, a.alpha, a.beta);
    });
  }
  if (s.ok()) {
    s = AddUnary(table, OpType::kHardSwish,
                 [](const HostTensor& x, const ActivationAttrs&) { return HardSwish(x); });
  }
  if (s.ok()) {
    s = AddUnary(table, OpType("Silu"), [](const HostTensor& x, const ActivationAttrs&) {
      HostTensor y = x;
      ApplyActivation({ActivationKind::kSilu, 0.0f, 0.0f}, y);
      return y;
    });
  }
  return s;
}

}  // namespace recq::reference
