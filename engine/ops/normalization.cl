// LayerNormalization, InstanceNormalization and GroupNormalization: the
// input as `rows` rows of D contiguous elements, each normalised to zero
// mean and unit variance (two passes: the mean, then the mean squared
// deviation), then y = n * scale[p] + bias[p] where the parameter index of
// element j of row r is
//   p = (r % pm_mod) * pm_a + j / pm_div
// (LayerNorm: j; InstanceNorm: the channel; GroupNorm: the channel, or the
// group for opset 18's per-group parameters). bias may be absent (has_bias 0).

inline float recq_norm_affine(float n, __global const RECQ_T* scale, __global const RECQ_T* bias,
                              int has_bias, int r, int j, int pm_mod, int pm_a, int pm_div) {
  const int p = (r % pm_mod) * pm_a + j / pm_div;
  return has_bias ? n * RECQ_LOAD(scale, p) + RECQ_LOAD(bias, p) : n * RECQ_LOAD(scale, p);
}

// One work-item per row. Global size: (rows).
__kernel void norm_plain(__global const RECQ_T* restrict x, __global const RECQ_T* restrict scale,
                         __global const RECQ_T* restrict bias, __global RECQ_T* restrict y, int D,
                         int has_bias, int pm_mod, int pm_a, int pm_div, float epsilon) {
  const int r = get_global_id(0);
  __global const RECQ_T* p = x + (size_t)r * D;
  float sum = 0.0f;
  for (int j = 0; j < D; ++j) sum += RECQ_LOAD(p, j);
  const float mean = sum / (float)D;
  float sq = 0.0f;
  for (int j = 0; j < D; ++j) {
    const float d = RECQ_LOAD(p, j) - mean;
    sq += d * d;
  }
  const float inv = rsqrt(sq / (float)D + epsilon);
  __global RECQ_T* q = y + (size_t)r * D;
  for (int j = 0; j < D; ++j) {
    RECQ_STORE(q, j, recq_norm_affine((RECQ_LOAD(p, j) - mean) * inv, scale, bias, has_bias, r, j, pm_mod, pm_a, pm_div));
  }
}

#ifndef RECQ_NORM_LOCAL
#define RECQ_NORM_LOCAL 256
#endif

// One work-group of RECQ_NORM_LOCAL (a power of two) work-items per row, the
// sums reduced in local memory. Global size: (rows * RECQ_NORM_LOCAL); local
// (RECQ_NORM_LOCAL). RECQ_NORM_STRIDED_IN (a LayerNorm reading a
// channels-first input, NormalizationAttrs::channels_first_input): row r is
// position r % spatial of image r / spatial of x [N][D][spatial], its
// elements `spatial` apart. RECQ_NORM_STRIDED_OUT (channels_first_output):
// y is written so, as [N][D][spatial]. Otherwise rows are contiguous and
// `spatial` is unused.
#ifndef RECQ_NORM_STRIDED_IN
#define RECQ_NORM_STRIDED_IN 0
#endif
#ifndef RECQ_NORM_STRIDED_OUT
#define RECQ_NORM_STRIDED_OUT 0
#endif
__kernel void norm_rows(__global const RECQ_T* restrict x, __global const RECQ_T* restrict scale,
                        __global const RECQ_T* restrict bias, __global RECQ_T* restrict y, int D,
                        int has_bias, int pm_mod, int pm_a, int pm_div, int spatial,
                        float epsilon) {
  __local float red[RECQ_NORM_LOCAL];
  const int lid = get_local_id(0);
  const int r = get_group_id(0);
#if RECQ_NORM_STRIDED_IN
  __global const RECQ_T* p = x + (size_t)(r / spatial) * D * spatial + r % spatial;
#define RECQ_NORM_AT(j) ((size_t)(j) * spatial)
#else
  __global const RECQ_T* p = x + (size_t)r * D;
#define RECQ_NORM_AT(j) (j)
#endif
#if RECQ_NORM_STRIDED_OUT
  __global RECQ_T* q = y + (size_t)(r / spatial) * D * spatial + r % spatial;
#define RECQ_NORM_OUT_AT(j) ((size_t)(j) * spatial)
#else
  __global RECQ_T* q = y + (size_t)r * D;
#define RECQ_NORM_OUT_AT(j) (j)
#endif
  float sum = 0.0f;
  for (int j = lid; j < D; j += RECQ_NORM_LOCAL) sum += RECQ_LOAD(p, RECQ_NORM_AT(j));
  const float mean = recq_group_sum(red, lid, RECQ_NORM_LOCAL, sum) / (float)D;
  float sq = 0.0f;
  for (int j = lid; j < D; j += RECQ_NORM_LOCAL) {
    const float d = RECQ_LOAD(p, RECQ_NORM_AT(j)) - mean;
    sq += d * d;
  }
  const float inv = rsqrt(recq_group_sum(red, lid, RECQ_NORM_LOCAL, sq) / (float)D + epsilon);
  for (int j = lid; j < D; j += RECQ_NORM_LOCAL) {
    RECQ_STORE(q, RECQ_NORM_OUT_AT(j), recq_norm_affine((RECQ_LOAD(p, RECQ_NORM_AT(j)) - mean) * inv, scale, bias, has_bias, r, j, pm_mod, pm_a, pm_div));
  }
}

// LayerNorm on CPUs: one work-item per row of D elements whose parameters
// run along the row (p = j), in float16 vectors with the same two passes
// as norm_plain. Global size: (rows).
__kernel void norm_rows_vec(__global const RECQ_T* restrict x, __global const RECQ_T* restrict scale,
                            __global const RECQ_T* restrict bias, __global RECQ_T* restrict y,
                            int D, int has_bias, int rows, float epsilon) {
  const int r = get_global_id(0);
  if (r >= rows) return;
  const __global RECQ_T* p = x + (size_t)r * D;
  __global RECQ_T* q = y + (size_t)r * D;
  const int D16 = D & ~15;
  float16 s16 = (float16)(0.0f);
  float sum = 0.0f;
  for (int j = 0; j < D16; j += 16) s16 += RECQ_LOAD16(p + j, 0);
  for (int j = D16; j < D; ++j) sum += RECQ_LOAD(p, j);
  const float mean = (sum + recq_sum16(s16)) / (float)D;
  s16 = (float16)(0.0f);
  float sq = 0.0f;
  for (int j = 0; j < D16; j += 16) {
    const float16 d = RECQ_LOAD16(p + j, 0) - mean;
    s16 = fma(d, d, s16);
  }
  for (int j = D16; j < D; ++j) {
    const float d = RECQ_LOAD(p, j) - mean;
    sq += d * d;
  }
  const float inv = rsqrt((sq + recq_sum16(s16)) / (float)D + epsilon);
  for (int j = 0; j < D16; j += 16) {
    float16 v = (RECQ_LOAD16(p + j, 0) - mean) * inv * RECQ_LOAD16(scale + j, 0);
    if (has_bias) v += RECQ_LOAD16(bias + j, 0);
    RECQ_STORE16(q + j, 0, v);
  }
  for (int j = D16; j < D; ++j) {
    float v = (RECQ_LOAD(p, j) - mean) * inv * RECQ_LOAD(scale, j);
    if (has_bias) v += RECQ_LOAD(bias, j);
    RECQ_STORE(q, j, v);
  }
}
