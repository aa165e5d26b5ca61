// GatherND, built per element size (VAL_T: the unsigned type of the
// element's size; elements are copied as bits). `dims` holds data's k
// indexed dims (after the batch dims), `rows` the index rows per batch,
// `slice` the elements of data's remaining dims, `batch_stride` the
// elements of one batch of data. Global size: (number of output elements).
__kernel void gather_nd(__global const VAL_T* restrict x, __global const long* restrict indices,
                        __global VAL_T* restrict y, int8 dims, int k, int rows, int slice,
                        int batch_stride) {
  const int i = get_global_id(0);
  const int e = i % slice;
  const int t = i / slice;  // the index row, over all batches
  const int batch = t / rows;
  int d_[8];
  vstore8(dims, 0, d_);
  long offset = 0;
  for (int j = 0; j < k; ++j) {
    long idx = indices[(long)t * k + j];
    if (idx < 0) idx += d_[j];
    offset = offset * d_[j] + clamp(idx, (long)0, (long)(d_[j] - 1));
  }
  y[i] = x[(long)batch * batch_stride + offset * slice + e];
}
