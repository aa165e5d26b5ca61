// RECQ_LOG_SOFTMAX: y = x - max - log(sum(exp(x - max))) instead.
#ifdef RECQ_LOG_SOFTMAX
#define RECQ_SM_OUT(v, m, sum) ((v) - (m) - log(sum))
#else
#define RECQ_SM_OUT(v, m, sum) (exp((v) - (m)) * (1.0f / (sum)))
#endif

// Softmax over D elements spaced `inner` apart; the tensor is viewed as
// [outer, D, inner]. Global size: (outer * inner).
__kernel void softmax(__global const RECQ_T* restrict x, __global RECQ_T* restrict y, int D,
                      int inner) {
  const int i = get_global_id(0);
  const int o = i / inner;
  const int j = i % inner;
  const size_t base = (size_t)o * D * inner + j;
  float m = -INFINITY;
  for (int d = 0; d < D; ++d) m = fmax(m, RECQ_LOAD(x, base + (size_t)d * inner));
  float sum = 0.0f;
  for (int d = 0; d < D; ++d) sum += exp(RECQ_LOAD(x, base + (size_t)d * inner) - m);
  for (int d = 0; d < D; ++d) {
    RECQ_STORE(y, base + (size_t)d * inner, RECQ_SM_OUT(RECQ_LOAD(x, base + (size_t)d * inner), m, sum));
  }
}

// Softmax over rows of D contiguous elements (inner == 1), one work-group of
// RECQ_SM_LOCAL (a power of two) work-items per row: the max and the sum are
// reduced in local memory. For GPUs, where softmax's one-item-per-row loop
// above runs D serial steps. Global size: (rows * RECQ_SM_LOCAL); local
// (RECQ_SM_LOCAL).
#ifndef RECQ_SM_LOCAL
#define RECQ_SM_LOCAL 256
#endif
__kernel void softmax_rows(__global const RECQ_T* restrict x, __global RECQ_T* restrict y, int D) {
  __local float red[RECQ_SM_LOCAL];
  const int lid = get_local_id(0);
  const size_t base = (size_t)get_group_id(0) * D;
  float m = -INFINITY;
  for (int d = lid; d < D; d += RECQ_SM_LOCAL) m = fmax(m, RECQ_LOAD(x, base + d));
  red[lid] = m;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = RECQ_SM_LOCAL / 2; s > 0; s >>= 1) {
    if (lid < s) red[lid] = fmax(red[lid], red[lid + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  m = red[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  float sum = 0.0f;
  for (int d = lid; d < D; d += RECQ_SM_LOCAL) sum += exp(RECQ_LOAD(x, base + d) - m);
  red[lid] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = RECQ_SM_LOCAL / 2; s > 0; s >>= 1) {
    if (lid < s) red[lid] += red[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  sum = red[0];
  for (int d = lid; d < D; d += RECQ_SM_LOCAL) RECQ_STORE(y, base + d, RECQ_SM_OUT(RECQ_LOAD(x, base + d), m, sum));
}

// Softmax over rows of D contiguous elements (inner == 1) for CPUs: one
// work-item per row in float16 vectors along it (PoCL's loop over a group's
// items then runs each row's vector loop; the one-item-per-row `softmax`
// above reads rows D apart per lane). The exponentials are written on the
// second pass and scaled on the third (softmax), or x - max - log(sum) is
// written on the third (log). Global size: (rows).
__kernel void softmax_rows_vec(__global const RECQ_T* restrict x, __global RECQ_T* restrict y,
                               int D, int rows) {
  const int r = get_global_id(0);
  if (r >= rows) return;
  const __global RECQ_T* xr = x + (size_t)r * D;
  __global RECQ_T* yr = y + (size_t)r * D;
  const int D16 = D & ~15;
  float16 m16 = (float16)(-INFINITY);
  for (int d = 0; d < D16; d += 16) m16 = fmax(m16, RECQ_LOAD16(xr + d, 0));
  float m = recq_max16(m16);
  for (int d = D16; d < D; ++d) m = fmax(m, RECQ_LOAD(xr, d));
  float16 s16 = (float16)(0.0f);
  float sum = 0.0f;
#ifdef RECQ_LOG_SOFTMAX
  for (int d = 0; d < D16; d += 16) s16 += exp(RECQ_LOAD16(xr + d, 0) - m);
  for (int d = D16; d < D; ++d) sum += exp(RECQ_LOAD(xr, d) - m);
#else
  for (int d = 0; d < D16; d += 16) {
    const float16 e = exp(RECQ_LOAD16(xr + d, 0) - m);
    RECQ_STORE16(yr + d, 0, e);
    s16 += e;
  }
  for (int d = D16; d < D; ++d) {
    const float e = exp(RECQ_LOAD(xr, d) - m);
    RECQ_STORE(yr, d, e);
    sum += e;
  }
#endif
  sum += recq_sum16(s16);
#ifdef RECQ_LOG_SOFTMAX
  const float shift = m + log(sum);
  for (int d = 0; d < D16; d += 16) RECQ_STORE16(yr + d, 0, RECQ_LOAD16(xr + d, 0) - shift);
  for (int d = D16; d < D; ++d) RECQ_STORE(yr, d, RECQ_LOAD(xr, d) - shift);
#else
  const float inv = 1.0f / sum;
  for (int d = 0; d < D16; d += 16) RECQ_STORE16(yr + d, 0, RECQ_LOAD16(yr + d, 0) * inv);
  for (int d = D16; d < D; ++d) RECQ_STORE(yr, d, RECQ_LOAD(yr, d) * inv);
#endif
}
