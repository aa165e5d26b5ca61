// GatherElements, built per element size (VAL_T: the unsigned type of the
// element's size) and index type (IDX_T: int or long). `dims` is the
// output (indices) shape padded to rank 8 with leading 1s, `strides` data's
// element strides padded the same way, `axis` the gathered position among
// the 8, `dim` data's size there. A negative index adds dim once; one still
// out of range is clamped. Global size: (number of output elements).
__kernel void gather_elements(__global const VAL_T* restrict x,
                              __global const IDX_T* restrict indices, __global VAL_T* restrict y,
                              int8 dims, int8 strides, int axis, int dim) {
  const int i = get_global_id(0);
  long idx = indices[i];
  if (idx < 0) idx += dim;
  idx = clamp(idx, (long)0, (long)(dim - 1));
  int d_[8], s_[8];
  vstore8(dims, 0, d_);
  vstore8(strides, 0, s_);
  int rest = i;
  long offset = 0;
  for (int d = 7; d >= 0; --d) {
    const int c = rest % d_[d];
    rest /= d_[d];
    offset += (d == axis ? idx : (long)c) * s_[d];
  }
  y[i] = x[offset];
}
