// The parameters of the element-wise math ops (engine/ops/elementwise_math.cc),
// for graphs built through the API and for the CPU reference.
#ifndef RECQ_ENGINE_OPS_ELEMENTWISE_MATH_H_
#define RECQ_ENGINE_OPS_ELEMENTWISE_MATH_H_

namespace recq::internal {

// MathAttrs: Elu, Celu and ThresholdedRelu read alpha; Selu alpha and
// gamma (in beta); Shrink lambd (in alpha) and bias (in beta). The
// functions without parameters carry none (or zeros).
struct MathAttrs {
  float alpha = 0.0f;
  float beta = 0.0f;
};

}  // namespace recq::internal

#endif  // RECQ_ENGINE_OPS_ELEMENTWISE_MATH_H_
