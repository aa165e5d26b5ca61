// MaxUnpool (max_unpool.h), per element size (VAL_T: the unsigned type of
// that size) and index type (IDX_T: int or long).

// Global size: (elements of y).
__kernel void max_unpool_zero(__global VAL_T* restrict y) { y[get_global_id(0)] = 0; }

// `inferred` is the inferred shape and `strides` y's element strides, both
// padded in front to rank 8 (1 and 0). Global size: (elements of x).
__kernel void max_unpool_scatter(__global const VAL_T* restrict x,
                                 __global const IDX_T* restrict indices, __global VAL_T* restrict y,
                                 int8 inferred, int8 strides, long total) {
  const int i = get_global_id(0);
  long idx = indices[i];
  if (idx < 0 || idx >= total) return;
  int d_[8], s_[8];
  vstore8(inferred, 0, d_);
  vstore8(strides, 0, s_);
  long offset = 0;
  for (int d = 7; d >= 0; --d) {
    offset += (idx % d_[d]) * s_[d];
    idx /= d_[d];
  }
  y[offset] = x[i];
}
