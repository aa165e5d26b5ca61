// Transpose as a strided gather. Global size: (number of output elements).

// Strided gather used by Transpose: y[i] = x[offset(i)], where `dims` is the
// output shape and `strides` the input strides permuted to output order.
__kernel void gather_strided(__global const float* restrict x, __global float* restrict y,
                             int8 dims, int8 strides) {
  const int i = get_global_id(0);
  y[i] = x[recq_broadcast_offset(i, dims, strides)];
}
