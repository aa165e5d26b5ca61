// Element-wise kernels of two operands. Global size: (number of output
// elements). op: 0 add, 1 sub, 2 mul, 3 div, 4 min, 5 max, 6 prelu (a: x,
// b: slope), 7 pow. `scale` multiplies the result before the activation
// (Mean's 1/n; 1 otherwise).

inline float recq_binary(int op, float a, float b) {
  switch (op) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    case 3: return a / b;
    case 4: return fmin(a, b);
    case 5: return fmax(a, b);
    case 6: return a < 0.0f ? a * b : a;
    default: return pow(a, b);
  }
}

// y = act((a op b) * scale) for equal shapes.
__kernel void binary_same(__global const RECQ_T* restrict a, __global const RECQ_T* restrict b,
                          __global RECQ_T* restrict y, int op, float scale, int act, float act_a,
                          float act_b) {
  const int i = get_global_id(0);
  RECQ_STORE(y, i, recq_activate(recq_binary(op, RECQ_LOAD(a, i), RECQ_LOAD(b, i)) * scale, act, act_a, act_b));
}

// y = act((a op b) * scale) with numpy broadcasting: `dims` is the output
// shape padded to rank 8 with leading 1s; `sa` and `sb` the inputs' element
// strides (0 on broadcast dimensions).
__kernel void binary_broadcast(__global const RECQ_T* restrict a, __global const RECQ_T* restrict b,
                               __global RECQ_T* restrict y, int op, int8 dims, int8 sa, int8 sb,
                               float scale, int act, float act_a, float act_b) {
  const int i = get_global_id(0);
  const float va = RECQ_LOAD(a, recq_broadcast_offset(i, dims, sa));
  const float vb = RECQ_LOAD(b, recq_broadcast_offset(i, dims, sb));
  RECQ_STORE(y, i, recq_activate(recq_binary(op, va, vb) * scale, act, act_a, act_b));
}

// y = act((a op b) * scale) where one operand (`small`: 0 for a, 1 for b)
// is broadcast as [mid] over the output viewed as [outer, mid, inner] (a
// per-channel scale, a per-feature bias, a scalar); the other has the
// output's shape.
__kernel void binary_mid(__global const RECQ_T* restrict a, __global const RECQ_T* restrict b,
                         __global RECQ_T* restrict y, int op, int small, int mid, int inner,
                         float scale, int act, float act_a, float act_b) {
  const int i = get_global_id(0);
  const int j = (i / inner) % mid;
  const float va = small == 0 ? RECQ_LOAD(a, j) : RECQ_LOAD(a, i);
  const float vb = small == 1 ? RECQ_LOAD(b, j) : RECQ_LOAD(b, i);
  RECQ_STORE(y, i, recq_activate(recq_binary(op, va, vb) * scale, act, act_a, act_b));
}

// One step of a variadic op: y = act((y op b) * scale), or with op -1
// y = act(b * scale), b broadcast to y's shape `dims` with strides `sb`.
__kernel void binary_accumulate(__global const RECQ_T* restrict b, __global RECQ_T* restrict y,
                                int op, int8 dims, int8 sb, float scale, int act, float act_a,
                                float act_b) {
  const int i = get_global_id(0);
  const float vb = RECQ_LOAD(b, recq_broadcast_offset(i, dims, sb));
  const float v = op < 0 ? vb : recq_binary(op, RECQ_LOAD(y, i), vb);
  RECQ_STORE(y, i, recq_activate(v * scale, act, act_a, act_b));
}
