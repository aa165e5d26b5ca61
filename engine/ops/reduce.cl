// Reductions. RECQ_REDUCE picks the op at build time (ReduceCode in
// reduce.cc): 0 sum, 1 mean, 2 max, 3 min, 4 prod, 5 L1, 6 L2, 7 sum of
// squares, 8 log-sum, 9 log-sum-exp. Log-sum-exp first finds the maximum
// and sums exp(x - max), so large inputs do not overflow.
#ifndef RECQ_REDUCE
#define RECQ_REDUCE 0
#endif
#if RECQ_REDUCE == 9
#define RECQ_REDUCE_NEEDS_MAX 1
#else
#define RECQ_REDUCE_NEEDS_MAX 0
#endif

inline float recq_reduce_init(void) {
#if RECQ_REDUCE == 2
  return -INFINITY;
#elif RECQ_REDUCE == 3
  return INFINITY;
#elif RECQ_REDUCE == 4
  return 1.0f;
#else
  return 0.0f;
#endif
}

// Folds element v into accumulator a (m: the maximum, for log-sum-exp).
inline float recq_reduce_acc(float a, float v, float m) {
#if RECQ_REDUCE == 2
  return fmax(a, v);
#elif RECQ_REDUCE == 3
  return fmin(a, v);
#elif RECQ_REDUCE == 4
  return a * v;
#elif RECQ_REDUCE == 5
  return a + fabs(v);
#elif RECQ_REDUCE == 6 || RECQ_REDUCE == 7
  return a + v * v;
#elif RECQ_REDUCE == 9
  return a + exp(v - m);
#else
  return a + v;
#endif
}

// Combines two partial accumulators.
inline float recq_reduce_combine(float a, float b) {
#if RECQ_REDUCE == 2
  return fmax(a, b);
#elif RECQ_REDUCE == 3
  return fmin(a, b);
#elif RECQ_REDUCE == 4
  return a * b;
#else
  return a + b;
#endif
}

// The result from the accumulator of n elements.
inline float recq_reduce_final(float a, int n, float m) {
#if RECQ_REDUCE == 1
  return a / (float)n;
#elif RECQ_REDUCE == 6
  return sqrt(a);
#elif RECQ_REDUCE == 8
  return log(a);
#elif RECQ_REDUCE == 9
  return m + log(a);
#else
  return a;
#endif
}

// The input viewed as [outer, R, inner], reduced over R: one work-item per
// output (outer * inner of them), reading R elements `inner` apart.
// Global size: (outer * inner).
__kernel void reduce_axis(__global const RECQ_T* restrict x, __global RECQ_T* restrict y, int R,
                          int inner) {
  const int i = get_global_id(0);
  const int o = i / inner;
  const int j = i - o * inner;
  __global const RECQ_T* p = x + (size_t)o * R * inner + j;
  float m = 0.0f;
#if RECQ_REDUCE_NEEDS_MAX
  m = -INFINITY;
  for (int r = 0; r < R; ++r) m = fmax(m, RECQ_LOAD(p, (size_t)r * inner));
#endif
  float a = recq_reduce_init();
  for (int r = 0; r < R; ++r) a = recq_reduce_acc(a, RECQ_LOAD(p, (size_t)r * inner), m);
  RECQ_STORE(y, i, recq_reduce_final(a, R, m));
}

#ifndef RECQ_REDUCE_LOCAL
#define RECQ_REDUCE_LOCAL 256
#endif

// Tree reduction of v over the work-group in `red` (RECQ_REDUCE_LOCAL, a
// power of two); every work-item gets the result.
#define RECQ_GROUP_REDUCE(red, lid, v, COMBINE)                  \
  do {                                                           \
    red[lid] = v;                                                \
    barrier(CLK_LOCAL_MEM_FENCE);                                \
    for (int s = RECQ_REDUCE_LOCAL / 2; s > 0; s >>= 1) {        \
      if (lid < s) red[lid] = COMBINE(red[lid], red[lid + s]);   \
      barrier(CLK_LOCAL_MEM_FENCE);                              \
    }                                                            \
    v = red[0];                                                  \
    barrier(CLK_LOCAL_MEM_FENCE);                                \
  } while (0)

// Rows of R contiguous elements (inner == 1), one work-group of
// RECQ_REDUCE_LOCAL work-items per row: for GPUs, where a row of thousands
// of elements (a global average over a feature map) would otherwise be one
// work-item's serial loop. Global size: (rows * RECQ_REDUCE_LOCAL); local
// (RECQ_REDUCE_LOCAL).
__kernel void reduce_rows(__global const RECQ_T* restrict x, __global RECQ_T* restrict y, int R) {
  __local float red[RECQ_REDUCE_LOCAL];
  const int lid = get_local_id(0);
  __global const RECQ_T* p = x + (size_t)get_group_id(0) * R;
  float m = 0.0f;
#if RECQ_REDUCE_NEEDS_MAX
  m = -INFINITY;
  for (int r = lid; r < R; r += RECQ_REDUCE_LOCAL) m = fmax(m, RECQ_LOAD(p, r));
  RECQ_GROUP_REDUCE(red, lid, m, fmax);
#endif
  float a = recq_reduce_init();
  for (int r = lid; r < R; r += RECQ_REDUCE_LOCAL) a = recq_reduce_acc(a, RECQ_LOAD(p, r), m);
  RECQ_GROUP_REDUCE(red, lid, a, recq_reduce_combine);
  if (lid == 0) RECQ_STORE(y, get_group_id(0), recq_reduce_final(a, R, m));
}

// Any set of axes: output element i sits at input offset
// recq_broadcast_offset(i, out_dims, out_strides) (the kept dimensions and
// their input strides), and its R reduced elements at offsets
// recq_broadcast_offset(r, red_dims, red_strides). Global size: (outputs).
__kernel void reduce_generic(__global const RECQ_T* restrict x, __global RECQ_T* restrict y,
                             int8 out_dims, int8 out_strides, int8 red_dims, int8 red_strides,
                             int R) {
  const int i = get_global_id(0);
  __global const RECQ_T* p = x + recq_broadcast_offset(i, out_dims, out_strides);
  float m = 0.0f;
#if RECQ_REDUCE_NEEDS_MAX
  m = -INFINITY;
  for (int r = 0; r < R; ++r) m = fmax(m, RECQ_LOAD(p, recq_broadcast_offset(r, red_dims, red_strides)));
#endif
  float a = recq_reduce_init();
  for (int r = 0; r < R; ++r) {
    a = recq_reduce_acc(a, RECQ_LOAD(p, recq_broadcast_offset(r, red_dims, red_strides)), m);
  }
  RECQ_STORE(y, i, recq_reduce_final(a, R, m));
}
