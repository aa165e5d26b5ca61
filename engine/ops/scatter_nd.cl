// ScatterND's update step (the output already holds a copy of data). KIND
// as TypedKind (LOAD, STORE and V from common.cl);
// T the storage type (for scatter_nd, the unsigned type of the element's
// size: elements are copied as bits); REDUCTION 1 add, 2 mul, 3 max, 4 min.
// `dims` holds data's first k dimensions; `slice` is the number of elements
// of data's remaining dimensions.

inline int recq_dim_at(int8 dims, int j) {
  switch (j) {
    case 0: return dims.s0;
    case 1: return dims.s1;
    case 2: return dims.s2;
    case 3: return dims.s3;
    case 4: return dims.s4;
    case 5: return dims.s5;
    case 6: return dims.s6;
    default: return dims.s7;
  }
}

// The slice number index row `r` names: negative indices wrap, indices
// still out of range are clamped to the dimension.
inline int recq_scatter_row(__global const long* indices, int r, int k, int8 dims) {
  int offset = 0;
  for (int j = 0; j < k; ++j) {
    const int dim = recq_dim_at(dims, j);
    long idx = indices[(long)r * k + j];
    if (idx < 0) idx += dim;
    idx = clamp(idx, (long)0, (long)(dim - 1));
    offset = offset * dim + (int)idx;
  }
  return offset;
}

// reduction none: one work-item per update element (rows * slice).
__kernel void scatter_nd(__global const long* restrict indices, __global const T* restrict updates,
                         __global T* restrict y, int8 dims, int k, int rows, int slice) {
  const int i = get_global_id(0);
  const int r = i / slice;
  const int e = i - r * slice;
  y[recq_scatter_row(indices, r, k, dims) * slice + e] = updates[i];
}

#define ACC V

#if REDUCTION == 1
#define COMBINE(a, b) ((a) + (b))
#elif REDUCTION == 2
#define COMBINE(a, b) ((a) * (b))
#elif REDUCTION == 3
#define COMBINE(a, b) ((a) > (b) ? (a) : (b))
#else
#define COMBINE(a, b) ((a) < (b) ? (a) : (b))
#endif

// add / mul / max / min: one work-item per slice element, applying the rows
// in order (so duplicate rows combine deterministically, without atomics).
__kernel void scatter_nd_reduce(__global const long* restrict indices,
                                __global const T* restrict updates, __global T* restrict y,
                                int8 dims, int k, int rows, int slice) {
  const int e = get_global_id(0);
  for (int r = 0; r < rows; ++r) {
    const int to = recq_scatter_row(indices, r, k, dims) * slice + e;
    const ACC a = LOAD(y, to);
    const ACC b = LOAD(updates, r * slice + e);
    STORE((ACC)COMBINE(a, b), y, to);
  }
}
