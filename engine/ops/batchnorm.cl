// Inference batch normalization over channel dimension 1, with a fused
// activation. Global size: (N * C * inner).
__kernel void batchnorm(__global const float* restrict x, __global const float* restrict scale,
                        __global const float* restrict bias, __global const float* restrict mean,
                        __global const float* restrict var, __global float* restrict y, int C,
                        int inner, float epsilon, int act, float act_a, float act_b) {
  const int i = get_global_id(0);
  const int c = (i / inner) % C;
  const float v = (x[i] - mean[c]) / sqrt(var[c] + epsilon) * scale[c] + bias[c];
  y[i] = recq_activate(v, act, act_a, act_b);
}
