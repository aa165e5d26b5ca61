// Element-wise unary math, one program per op: RECQ_UNARY picks the function
// at build time (the codes of UnaryCode in unary.cc). Global size: (number
// of elements).
#ifndef RECQ_UNARY
#define RECQ_UNARY 0
#endif

inline float recq_softplus(float v) {
  // log(1 + e^v) without overflow for large v.
  return fmax(v, 0.0f) + log1p(exp(-fabs(v)));
}

inline float recq_unary(float v) {
#if RECQ_UNARY == 0
  return sqrt(v);
#elif RECQ_UNARY == 1
  return exp(v);
#elif RECQ_UNARY == 2
  return log(v);
#elif RECQ_UNARY == 3
  return tanh(v);
#elif RECQ_UNARY == 4
  return -v;
#elif RECQ_UNARY == 5
  return fabs(v);
#elif RECQ_UNARY == 6
  return 1.0f / v;
#elif RECQ_UNARY == 7
  return floor(v);
#elif RECQ_UNARY == 8
  return ceil(v);
#elif RECQ_UNARY == 9
  return recq_softplus(v);
#elif RECQ_UNARY == 10
  return v * tanh(recq_softplus(v));
#elif RECQ_UNARY == 11
  // 0.5 x (1 + erf(x / sqrt 2)) = 0.5 x erfc(-x / sqrt 2): accurate for
  // negative x too, where 1 + erf cancels.
  return 0.5f * v * recq_act_erfc(v * -0.70710678118654752f);
#elif RECQ_UNARY == 12
  return 0.5f * v * (1.0f + tanh(0.79788456080286536f * (v + 0.044715f * v * v * v)));
#elif RECQ_UNARY == 13
  return v * v;
#else
#error "unknown RECQ_UNARY"
#endif
}

// y = f(x). x and y may be the same buffer.
__kernel void unary(__global const RECQ_T* x, __global RECQ_T* y) {
  const int i = get_global_id(0);
  RECQ_STORE(y, i, recq_unary(RECQ_LOAD(x, i)));
}
