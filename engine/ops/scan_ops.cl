// CumSum, Trilu, ArgMax and ArgMin (scan_ops.cc), built per element type:
// KIND as TypedKind (0 float, 1 half, 2 long, 3 int, 4 char, 5 uchar), T
// the storage type (Trilu: an unsigned integer of the element's size).

#if KIND == 1
#define LOAD(p, i) vload_half((i), (__global const half*)(p))
#define STORE(v, p, i) vstore_half_rte((v), (i), (__global half*)(p))
#define V float
#elif KIND == 0
#define LOAD(p, i) (p)[(i)]
#define STORE(v, p, i) ((p)[(i)] = (v))
#define V float
#else
#define LOAD(p, i) (p)[(i)]
#define STORE(v, p, i) ((p)[(i)] = (v))
#define V T
#endif

#ifdef CUMSUM
// One work-item per line along the axis (global size outer * inner): the
// line's elements are len apart by `inner`; sums run in order (from the
// end with `reverse`), in float for float and half, else in T (wrapping).
__kernel void cumsum(__global const T* restrict x, __global T* restrict y, int len, int inner,
                     int exclusive, int reverse) {
  const int line = get_global_id(0);
  const int base = (line / inner) * len * inner + line % inner;
  V acc = 0;
  for (int k = 0; k < len; ++k) {
    const int idx = base + (reverse ? len - 1 - k : k) * inner;
    const V v = LOAD(x, idx);
    if (exclusive) {
      STORE(acc, y, idx);
      acc += v;
    } else {
      acc += v;
      STORE(acc, y, idx);
    }
  }
}
#endif

#ifdef TRILU
// y = x where column - row >= k (upper) or <= k (lower) of the last two
// dimensions (rows x cols), else 0. Global size: (number of elements).
__kernel void trilu(__global const T* restrict x, __global T* restrict y, int rows, int cols,
                    int k, int upper) {
  const int i = get_global_id(0);
  const int c = i % cols;
  const int r = (i / cols) % rows;
  const int keep = upper ? (c - r >= k) : (c - r <= k);
  y[i] = keep ? x[i] : (T)0;
}
#endif

#ifdef ARG_REDUCE
// y[line] = the index of the largest (ARG_MAX 1) or smallest element of
// the line: the first such, or the last with select_last. Global size:
// (outer * inner).
__kernel void arg_reduce(__global const T* restrict x, __global long* restrict y, int len,
                         int inner, int select_last) {
  const int line = get_global_id(0);
  const int base = (line / inner) * len * inner + line % inner;
  V best = LOAD(x, base);
  int best_k = 0;
  for (int k = 1; k < len; ++k) {
    const V v = LOAD(x, base + k * inner);
#if ARG_MAX
    const int better = select_last ? v >= best : v > best;
#else
    const int better = select_last ? v <= best : v < best;
#endif
    if (better) {
      best = v;
      best_k = k;
    }
  }
  y[line] = best_k;
}
#endif
