// Element-wise float math (elementwise_math.cc), built per function: FN
// is the function's code. x and y are RECQ_T (float, or half storage);
// alpha and beta are the function's parameters (MathAttrs). Global size:
// (number of elements).

inline float recq_math(float x, float alpha, float beta) {
#if FN == 0
  return sin(x);
#elif FN == 1
  return cos(x);
#elif FN == 2
  return tan(x);
#elif FN == 3
  return asin(x);
#elif FN == 4
  return acos(x);
#elif FN == 5
  return atan(x);
#elif FN == 6
  return sinh(x);
#elif FN == 7
  return cosh(x);
#elif FN == 8
  return asinh(x);
#elif FN == 9
  return acosh(x);
#elif FN == 10
  return atanh(x);
#elif FN == 11
  // Halves round to even (ONNX Round).
  return rint(x);
#elif FN == 12
  return x / (1.0f + fabs(x));
#elif FN == 13
  return x >= 0.0f ? x : alpha * (exp(x) - 1.0f);
#elif FN == 14
  return beta * (x > 0.0f ? x : alpha * (exp(x) - 1.0f));
#elif FN == 15
  return fmax(x, 0.0f) + fmin(0.0f, alpha * (exp(x / alpha) - 1.0f));
#elif FN == 16
  return x > alpha ? x : 0.0f;
#elif FN == 17
  return x < -alpha ? x + beta : (x > alpha ? x - beta : 0.0f);
#endif
}

__kernel void math_unary(__global const RECQ_T* restrict x, __global RECQ_T* restrict y,
                         float alpha, float beta) {
  const int i = get_global_id(0);
  RECQ_STORE(y, i, recq_math(RECQ_LOAD(x, i), alpha, beta));
}
