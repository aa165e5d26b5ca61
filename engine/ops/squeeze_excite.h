// SqueezeExcite: a squeeze-and-excitation block (MobileNet V3, EfficientNet,
// RegNetY) as one op, made by the squeeze_excite pattern
// (engine/patterns/squeeze_excite.cc) from the exported
// GlobalAveragePool, Conv, activation, Conv, gate, Mul:
//   p[n][c] = mean of x[n][c] over the spatial dimensions
//   h[n][r] = act(sum_c w1[r][c] * p[n][c] + b1[r])
//   s[n][c] = gate(sum_r w2[c][r] * h[n][r] + b2[c])
//   y[n][c][...] = x[n][c][...] * s[n][c]
// Inputs: x [N, C, spatial...], w1 [R, C, 1...], b1 [R] or absent,
// w2 [C, R, 1...], b2 [C] or absent (w1, w2 and the biases constants).
#ifndef RECQ_ENGINE_OPS_SQUEEZE_EXCITE_H_
#define RECQ_ENGINE_OPS_SQUEEZE_EXCITE_H_

#include <cstdint>

#include "recq/graph.h"

namespace recq::internal {

struct SqueezeExciteAttrs {
  Activation act;   // after the first product (ReLU, SiLU...)
  Activation gate;  // after the second (Sigmoid, HardSigmoid...)
};

// The most squeezed channels R the kernels hold (local memory of this many
// floats); the pattern leaves larger blocks as they are.
inline constexpr int64_t kSqueezeExciteMaxR = 1024;

}  // namespace recq::internal

#endif  // RECQ_ENGINE_OPS_SQUEEZE_EXCITE_H_
