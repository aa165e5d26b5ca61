// Concat, one copy per input. Global size: (number of elements of the input).

// Concat helper: copies x [outer, inner_x] into y [outer, inner_y] at column
// `offset`. Global size: (outer * inner_x).
__kernel void concat_copy(__global const float* restrict x, __global float* restrict y,
                          int inner_x, int inner_y, int offset) {
  const int i = get_global_id(0);
  const int o = i / inner_x;
  const int j = i % inner_x;
  y[o * inner_y + offset + j] = x[i];
}
