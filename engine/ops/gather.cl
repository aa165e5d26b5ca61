// Gather along one axis, built per element size (VAL_T: the unsigned type
// of the element's size; elements are copied as bits) and index type
// (IDX_T: int or long). Global size: (number of output elements).

// y[o, k, i] = x[o, indices[k], i] with x viewed as [outer, dim, inner] and
// y as [outer, count, inner]. A negative index adds dim once; an index
// still outside [0, dim) is clamped to it (no error can leave a recorded
// run; constant indices are checked at import).
__kernel void gather_axis(__global const VAL_T* restrict x, __global const IDX_T* restrict indices,
                          __global VAL_T* restrict y, int dim, int count, int inner) {
  const int i = get_global_id(0);
  const int in = i % inner;
  const int t = i / inner;
  const int k = t % count;
  const int o = t / count;
  long idx = indices[k];
  if (idx < 0) idx += dim;
  idx = clamp(idx, (long)0, (long)(dim - 1));
  y[i] = x[((long)o * dim + idx) * inner + in];
}

// gather_axis for indices known at compile time over whole planes (inner
// elements each): y[o, k, i] = x[o, indices[k], i] over a range (inner
// rounded up to the local size, count, outer), with no division per
// element (ShuffleNet's channel shuffles on CPUs, engine/patterns/
// channel_gather.cc). The indices are in range (checked at import).
__kernel void gather_planes(__global const VAL_T* restrict x,
                            __global const IDX_T* restrict indices, __global VAL_T* restrict y,
                            int dim, int count, int inner) {
  const int i = get_global_id(0);
  if (i >= inner) return;
  const int k = get_global_id(1);
  const int o = get_global_id(2);
  y[((long)o * count + k) * inner + i] = x[((long)o * dim + indices[k]) * inner + i];
}

// gather_planes for CPUs: an item per plane, copying its inner elements in
// runs of 16 (a Slice's row copy, strided_copy_rows, does the same). Global
// size (count rounded up to the local size, outer).
__kernel void gather_planes_rows(__global const VAL_T* restrict x,
                                 __global const IDX_T* restrict indices,
                                 __global VAL_T* restrict y, int dim, int count, int inner) {
  const int k = get_global_id(0);
  if (k >= count) return;
  const int o = get_global_id(1);
  const __global VAL_T* src = x + ((long)o * dim + indices[k]) * inner;
  __global VAL_T* dst = y + ((long)o * count + k) * inner;
  int i = 0;
  for (; i + 16 <= inner; i += 16) vstore16(vload16(0, src + i), 0, dst + i);
  for (; i < inner; ++i) dst[i] = src[i];
}
