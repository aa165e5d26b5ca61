// Element-wise kernels of two operands. Global size: (number of output
// elements). op: 0 add, 1 sub, 2 mul, 3 div, 4 min, 5 max, 6 prelu (a: x,
// b: slope), 7 pow. `scale` multiplies the result before the activation
// (Mean's 1/n; 1 otherwise).

// recq_binary (float) and recq_binary16 (float16 lanes): `a op b`.
#define RECQ_DEFINE_BINARY(T, NAME)                    \
  inline T NAME(int op, T a, T b) {                    \
    switch (op) {                                      \
      case 0: return a + b;                            \
      case 1: return a - b;                            \
      case 2: return a * b;                            \
      case 3: return a / b;                            \
      case 4: return fmin(a, b);                       \
      case 5: return fmax(a, b);                       \
      case 6: return select(a, a * b, a < (T)(0.0f));  \
      default: return pow(a, b);                       \
    }                                                  \
  }
RECQ_DEFINE_BINARY(float, recq_binary)
RECQ_DEFINE_BINARY(float16, recq_binary16)
#undef RECQ_DEFINE_BINARY

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
// output's shape. Global size: (ceil(inner / 16), outer * mid): work-item
// (i, r) computes elements 16i .. 16i+15 of row r, whose small value is
// small[r % mid], as one float16 when the row holds all 16 (no division per
// element: the one-element form ran at 0.5-2 GB/s on PoCL).
__kernel void binary_mid_rows(__global const RECQ_T* restrict a, __global const RECQ_T* restrict b,
                              __global RECQ_T* restrict y, int op, int small, int mid, int inner,
                              float scale, int act, float act_a, float act_b) {
  const int r = get_global_id(1);
  const float s = RECQ_LOAD(small == 0 ? a : b, r % mid);
  __global const RECQ_T* big = (small == 0 ? b : a) + (size_t)r * inner;
  __global RECQ_T* out = y + (size_t)r * inner;
  const int start = get_global_id(0) * 16;
  if (start + 16 <= inner) {
    const float16 v = RECQ_LOAD16(big + start, 0);
    const float16 z =
        small == 0 ? recq_binary16(op, (float16)(s), v) : recq_binary16(op, v, (float16)(s));
    RECQ_STORE16(out + start, 0, recq_activate16(z * scale, act, act_a, act_b));
  } else {
    for (int k = start; k < inner; ++k) {
      const float v = RECQ_LOAD(big, k);
      const float z = small == 0 ? recq_binary(op, s, v) : recq_binary(op, v, s);
      RECQ_STORE(out, k, recq_activate(z * scale, act, act_a, act_b));
    }
  }
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
