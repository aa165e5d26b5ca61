// Slice, Split, Tile and Expand as one strided copy. Global size: (number of
// output elements). Build options: RANK, the number of (collapsed) output
// dimensions, 1 to 8, held in the last RANK lanes of the int8 arguments;
// WRAP 1 when some coordinate wraps around (Tile).

// COPY_BITS (an unsigned integer type of the element's size): a tensor of
// another element type than float (Slice of a bool or int64 mask), its
// elements copied as bits; only `strided_copy` is built for it.
#ifdef COPY_BITS
#undef RECQ_T
#undef RECQ_LOAD
#undef RECQ_STORE
#undef RECQ_LOAD16
#undef RECQ_STORE16
#define RECQ_T COPY_BITS
#define RECQ_LOAD(p, i) ((p)[(i)])
#define RECQ_STORE(p, i, v) ((p)[(i)] = (v))
#define RECQ_LOAD16(p, i) vload16((i), (p))
#define RECQ_STORE16(p, i, v) vstore16((v), (i), (p))
#endif

// y[i] = x[base + sum_d (coord_d(i) % mods_d) * strides_d], where coord_d is
// i's coordinate in the output `dims`. Strides may be negative (a Slice with
// a negative step) or 0 (a broadcast axis).
__kernel void strided_copy(__global const RECQ_T* restrict x, __global RECQ_T* restrict y, int base,
                           int8 dims, int8 strides, int8 mods) {
  const int gid = get_global_id(0);
  int dd[8], ss[8], mm[8];
  vstore8(dims, 0, dd);
  vstore8(strides, 0, ss);
  vstore8(mods, 0, mm);
  int i = gid;
  int offset = base;
  for (int d = 7; d > 8 - RANK; --d) {
    int c = i % dd[d];
    i /= dd[d];
#if WRAP
    c %= mm[d];
#endif
    offset += c * ss[d];
  }
#if WRAP
  i %= mm[8 - RANK];
#endif
  offset += i * ss[8 - RANK];
  RECQ_STORE(y, gid, RECQ_LOAD(x, offset));
}

// The same copy without WRAP, one row of the output's innermost dimension
// (lane 7) per item, for CPUs: the outer coordinates are decoded once per
// row instead of once per element, and a row whose source runs on
// contiguously (stride 1: a Slice, Split or Transpose that keeps the last
// axis) copies float16 vectors. Global size: (rows), rows = total / dims.s7.
__kernel void strided_copy_rows(__global const RECQ_T* restrict x, __global RECQ_T* restrict y,
                                int base, int8 dims, int8 strides, int rows) {
  const int r = get_global_id(0);
  if (r >= rows) return;
  int dd[8], ss[8];
  vstore8(dims, 0, dd);
  vstore8(strides, 0, ss);
  int i = r;
  int offset = base;
  for (int d = 6; d > 8 - RANK; --d) {
    offset += (i % dd[d]) * ss[d];
    i /= dd[d];
  }
  offset += i * ss[8 - RANK];
  const int n = dd[7];
  const int s = ss[7];
  const __global RECQ_T* xr = x + offset;
  __global RECQ_T* yr = y + (size_t)r * n;
  if (s == 1) {
    int j = 0;
    for (; j + 16 <= n; j += 16) RECQ_STORE16(yr + j, 0, RECQ_LOAD16(xr + j, 0));
    for (; j < n; ++j) RECQ_STORE(yr, j, RECQ_LOAD(xr, j));
  } else {
    for (int j = 0; j < n; ++j) RECQ_STORE(yr, j, RECQ_LOAD(xr, j * s));
  }
}
