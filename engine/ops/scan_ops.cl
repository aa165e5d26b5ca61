// CumSum, Trilu, ArgMax and ArgMin (scan_ops.cc), built per element type:
// KIND as TypedKind, T the storage type (Trilu: an unsigned integer of the
// element's size); LOAD, STORE and V come from common.cl.

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

#ifdef TOPK
// (v, e) comes before (w, f) in TopK's order: larger (LARGEST) or smaller
// values first, the lower index first among equal values.
#if LARGEST
#define BEFORE(v, e, w, f) ((v) > (w) || ((v) == (w) && (e) < (f)))
#else
#define BEFORE(v, e, w, f) ((v) < (w) || ((v) == (w) && (e) < (f)))
#endif

// One work-item per line along the axis (global size outer * inner): the
// k first elements of the line in TopK's order, each found by a scan for
// the first element after the previous pick (O(len * k), for small k).
// Writes the values (T) or, with INDICES, their indices (long).
#if INDICES
__kernel void topk(__global const T* restrict x, __global long* restrict y, int len, int inner,
                   int k) {
#else
__kernel void topk(__global const T* restrict x, __global T* restrict y, int len, int inner,
                   int k) {
#endif
  const int line = get_global_id(0);
  const int outer = line / inner, in = line % inner;
  const int base = outer * len * inner + in;
  const int out_base = outer * k * inner + in;
  V prev_v = 0;
  int prev_e = -1;
  for (int j = 0; j < k; ++j) {
    V best_v = 0;
    int best_e = -1;
    for (int e = 0; e < len; ++e) {
      const V v = LOAD(x, base + e * inner);
      if (prev_e >= 0 && !BEFORE(prev_v, prev_e, v, e)) continue;
      if (best_e < 0 || BEFORE(v, e, best_v, best_e)) {
        best_v = v;
        best_e = e;
      }
    }
#if INDICES
    y[out_base + j * inner] = best_e;
#else
    STORE(best_v, y, out_base + j * inner);
#endif
    prev_v = best_v;
    prev_e = best_e;
  }
}
#endif

#ifdef HARDMAX
// y = 1 at the first largest element of each line (len elements `inner`
// apart), 0 elsewhere. Global size: (outer * inner).
__kernel void hardmax(__global const T* restrict x, __global T* restrict y, int len, int inner) {
  const int line = get_global_id(0);
  const int base = (line / inner) * len * inner + line % inner;
  V best = LOAD(x, base);
  int best_k = 0;
  for (int k = 1; k < len; ++k) {
    const V v = LOAD(x, base + k * inner);
    if (v > best) {
      best = v;
      best_k = k;
    }
  }
  for (int k = 0; k < len; ++k) STORE(k == best_k ? 1.0f : 0.0f, y, base + k * inner);
}
#endif
