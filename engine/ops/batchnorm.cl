// Inference batch normalization over channel dimension 1, with a fused
// activation: y = act(x * s + t) with s = scale / sqrt(var + epsilon) and
// t = bias - mean * s, computed once per work-item. The tensor is viewed as
// rows of `inner` elements (one row per (n, c)). Global size:
// (ceil(inner / 16), N * C): work-item (i, r) normalizes elements
// 16i .. 16i+15 of row r, as one float16 when the row holds all 16. A
// division-free, vector body: the one-element-per-work-item form ran at
// 2-4 GB/s on PoCL.
__kernel void batchnorm_rows(__global const RECQ_T* restrict x,
                             __global const RECQ_T* restrict scale,
                             __global const RECQ_T* restrict bias,
                             __global const RECQ_T* restrict mean,
                             __global const RECQ_T* restrict var, __global RECQ_T* restrict y,
                             int C, int inner, float epsilon, int act, float act_a, float act_b) {
  const int r = get_global_id(1);
  const int c = r % C;
  const float s = RECQ_LOAD(scale, c) / sqrt(RECQ_LOAD(var, c) + epsilon);
  const float t = RECQ_LOAD(bias, c) - RECQ_LOAD(mean, c) * s;
  const int start = get_global_id(0) * 16;
  const size_t base = (size_t)r * inner + start;
  if (start + 16 <= inner) {
    const float16 v = RECQ_LOAD16(x + base, 0) * s + t;
    RECQ_STORE16(y + base, 0, recq_activate16(v, act, act_a, act_b));
  } else {
    for (int k = 0; k < inner - start; ++k) {
      RECQ_STORE(y + base, k, recq_activate(RECQ_LOAD(x + base, k) * s + t, act, act_a, act_b));
    }
  }
}
