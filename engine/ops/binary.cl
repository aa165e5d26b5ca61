// Binary element-wise kernels. Global size: (number of output elements).

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
