// Element-wise kernels. Global size: (number of output elements).

// y = act(x). x and y may be the same buffer.
__kernel void activation(__global const float* x, __global float* y, int act, float act_a,
                         float act_b) {
  const int i = get_global_id(0);
  y[i] = recq_activate(x[i], act, act_a, act_b);
}

inline float recq_binary(int op, float a, float b) {
  switch (op) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    default: return a / b;
  }
}

// y = act(a op b) for equal shapes. op: 0 add, 1 sub, 2 mul, 3 div.
__kernel void binary_same(__global const float* restrict a, __global const float* restrict b,
                          __global float* restrict y, int op, int act, float act_a,
                          float act_b) {
  const int i = get_global_id(0);
  y[i] = recq_activate(recq_binary(op, a[i], b[i]), act, act_a, act_b);
}

// y = act(a op b) with numpy broadcasting: `dims` is the output shape padded
// to rank 8 with leading 1s; `sa` and `sb` the inputs' element strides (0 on
// broadcast dimensions).
__kernel void binary_broadcast(__global const float* restrict a, __global const float* restrict b,
                               __global float* restrict y, int op, int8 dims, int8 sa, int8 sb,
                               int act, float act_a, float act_b) {
  const int i = get_global_id(0);
  const float va = a[recq_broadcast_offset(i, dims, sa)];
  const float vb = b[recq_broadcast_offset(i, dims, sb)];
  y[i] = recq_activate(recq_binary(op, va, vb), act, act_a, act_b);
}

// y[i] = x[i]
__kernel void copy(__global const float* restrict x, __global float* restrict y) {
  const int i = get_global_id(0);
  y[i] = x[i];
}

// Strided gather used by Transpose: y[i] = x[offset(i)], where `dims` is the
// output shape and `strides` the input strides permuted to output order.
__kernel void gather_strided(__global const float* restrict x, __global float* restrict y,
                             int8 dims, int8 strides) {
  const int i = get_global_id(0);
  y[i] = x[recq_broadcast_offset(i, dims, strides)];
}

// Concat helper: copies x [outer, inner_x] into y [outer, inner_y] at column
// `offset`. Global size: (outer * inner_x).
__kernel void concat_copy(__global const float* restrict x, __global float* restrict y,
                          int inner_x, int inner_y, int offset) {
  const int i = get_global_id(0);
  const int o = i / inner_x;
  const int j = i % inner_x;
  y[o * inner_y + offset + j] = x[i];
}
