// Building blocks of the OpenCL C expressions that element-wise ops declare
// (OpDef::elementwise) and that FuseElementwise (elementwise_fusion.h) joins
// into one kernel (engine/ops/fused_elementwise.cl). Every expression is
// valid for operands of type float and floatN, and holds no white space, so
// that it can travel as a build option (-D) and key the program cache.
#ifndef RECQ_ENGINE_FUSION_ELEMENTWISE_EXPR_H_
#define RECQ_ENGINE_FUSION_ELEMENTWISE_EXPR_H_

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "recq/graph.h"

namespace recq::internal {

// FloatLiteral renders `v` exactly as an OpenCL float literal: a hexadecimal
// one ("(-0x1.8p+1f)"), INFINITY or NAN.
inline std::string FloatLiteral(float v) {
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "(-INFINITY)";
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%af", static_cast<double>(v));
  return v < 0 || std::signbit(v) ? absl::StrCat("(", buf, ")") : std::string(buf);
}

// ActivationExpr applies `act` (the RECQ_ACT_* epilogue of
// kernels/common/common.cl, the same formulas) to the operand `x`, an
// identifier; `x` itself for kNone; "" for a kind it does not know.
inline std::string ActivationExpr(const Activation& act, const std::string& x) {
  const std::string a = FloatLiteral(act.alpha);
  const std::string b = FloatLiteral(act.beta);
  switch (act.kind) {
    case ActivationKind::kNone:
      return x;
    case ActivationKind::kRelu:
      return absl::StrCat("fmax(", x, ",0.0f)");
    case ActivationKind::kClip:
      return absl::StrCat("fmin(fmax(", x, ",", a, "),", b, ")");
    case ActivationKind::kLeakyRelu:
      return absl::StrCat("select(", a, "*", x, ",", x, ",", x, ">=0.0f)");
    case ActivationKind::kSigmoid:
      return absl::StrCat("(1.0f/(1.0f+exp(-", x, ")))");
    case ActivationKind::kHardSigmoid:
      return absl::StrCat("clamp(", a, "*", x, "+", b, ",0.0f,1.0f)");
    case ActivationKind::kHardSwish:
      return absl::StrCat("(", x, "*clamp(", x, "/6.0f+0.5f,0.0f,1.0f))");
    case ActivationKind::kSilu:
      return absl::StrCat("(", x, "/(1.0f+exp(-", x, ")))");
    case ActivationKind::kGelu:
      // recq_fused_erfc: common.cl's recq_act_erfc for float and float4.
      return absl::StrCat("(0.5f*", x, "*recq_fused_erfc(", x, "*-0.70710678118654752f))");
    case ActivationKind::kGeluTanh:
      return absl::StrCat("(0.5f*", x, "*(1.0f+tanh(0.79788456080286536f*(", x, "+0.044715f*", x,
                          "*", x, "*", x, "))))");
  }
  return "";
}

// FoldOperands joins `operands` left to right with the binary form `op`:
// "+" gives "(a+b+c)"; a function name ("fmin") gives "fmin(fmin(a,b),c)".
inline std::string FoldOperands(const std::string& op, const std::vector<std::string>& operands) {
  if (operands.empty()) return "";
  const bool infix = op.size() == 1;
  std::string acc = operands[0];
  for (size_t i = 1; i < operands.size(); ++i) {
    acc = infix ? absl::StrCat(acc, op, operands[i])
                : absl::StrCat(op, "(", acc, ",", operands[i], ")");
  }
  return infix ? absl::StrCat("(", acc, ")") : acc;
}

}  // namespace recq::internal

#endif  // RECQ_ENGINE_FUSION_ELEMENTWISE_EXPR_H_
