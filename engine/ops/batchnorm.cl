// Inference batch normalization over channel dimension 1, with a fused
// activation. Global size: (N * C * inner).
__kernel void batchnorm(__global const RECQ_T* restrict x, __global const RECQ_T* restrict scale,
                        __global const RECQ_T* restrict bias, __global const RECQ_T* restrict mean,
                        __global const RECQ_T* restrict var, __global RECQ_T* restrict y, int C,
                        int inner, float epsilon, int act, float act_a, float act_b) {
  const int i = get_global_id(0);
  const int c = (i / inner) % C;
  const float v = (RECQ_LOAD(x, i) - RECQ_LOAD(mean, c)) / sqrt(RECQ_LOAD(var, c) + epsilon) * RECQ_LOAD(scale, c) + RECQ_LOAD(bias, c);
  RECQ_STORE(y, i, recq_activate(v, act, act_a, act_b));
}
