// Softmax over D elements spaced `inner` apart; the tensor is viewed as
// [outer, D, inner]. Global size: (outer * inner).
__kernel void softmax(__global const float* restrict x, __global float* restrict y, int D,
                      int inner) {
  const int i = get_global_id(0);
  const int o = i / inner;
  const int j = i % inner;
  const size_t base = (size_t)o * D * inner + j;
  float m = -INFINITY;
  for (int d = 0; d < D; ++d) m = fmax(m, x[base + (size_t)d * inner]);
  float sum = 0.0f;
  for (int d = 0; d < D; ++d) sum += exp(x[base + (size_t)d * inner] - m);
  const float inv = 1.0f / sum;
  for (int d = 0; d < D; ++d) y[base + (size_t)d * inner] = exp(x[base + (size_t)d * inner] - m) * inv;
}
