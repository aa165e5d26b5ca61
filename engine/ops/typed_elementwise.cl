// Element-wise kernels of any element type (typed_elementwise.cc), built
// per op and type. KIND / OUT_KIND number the input / output type as
// TypedKind does (see common.cl); T / OUT_T are their storage types (ushort for half, uchar for
// bool), read and written through common.cl's LOAD and STORE. OP is the
// op's code. Global size: (number of output elements).

#ifdef BINARY
// y = a op b with numpy broadcasting: `dims` is the output shape padded to
// rank 8 with leading 1s, `sa` and `sb` the inputs' element strides (0 on
// broadcast dimensions). Comparisons and logic write bool (0 or 1);
// integer arithmetic writes the inputs' type, wrapping on overflow, and
// an integer division by 0 gives 0.
__kernel void typed_binary(__global const T* restrict a, __global const T* restrict b,
                           __global OUT_T* restrict y, int8 dims, int8 sa, int8 sb) {
  const int i = get_global_id(0);
  const V x = LOAD(a, recq_broadcast_offset(i, dims, sa));
  const V m = LOAD(b, recq_broadcast_offset(i, dims, sb));
#if OP == 0
  STORE(x == m, y, i);
#elif OP == 1
  STORE(x < m, y, i);
#elif OP == 2
  STORE(x <= m, y, i);
#elif OP == 3
  STORE(x > m, y, i);
#elif OP == 4
  STORE(x >= m, y, i);
#elif OP == 5
  STORE(x != 0 && m != 0, y, i);
#elif OP == 6
  STORE(x != 0 || m != 0, y, i);
#elif OP == 7
  STORE((x != 0) != (m != 0), y, i);
#elif OP == 10
  STORE(x + m, y, i);
#elif OP == 11
  STORE(x - m, y, i);
#elif OP == 12
  STORE(x * m, y, i);
#elif OP == 13
  // Truncates toward zero; x / -1 is -x (MIN / -1 would trap).
#if KIND == 7
  // float64 (which the float32 Div kernel does not take): IEEE division.
  STORE(x / m, y, i);
#elif RECQ_KIND_UNSIGNED(KIND)
  STORE(m == 0 ? (T)0 : (T)(x / m), y, i);
#else
  STORE(m == 0 ? (T)0 : (m == (T)-1 ? (T)(-x) : (T)(x / m)), y, i);
#endif
#elif OP == 14
  STORE(min(x, m), y, i);
#elif OP == 15
  STORE(max(x, m), y, i);
#elif OP == 16
  // x ^ m by squaring, wrapping like repeated multiplication; a negative
  // exponent truncates 1 / x^-m (1, -1 or 0).
  T r = 1;
  if (m < 0) {
    r = x == (T)1 ? (T)1 : (x == (T)-1 ? ((m & 1) ? (T)-1 : (T)1) : (T)0);
  } else {
    T base = x;
    for (T e = m; e > 0; e >>= 1) {
      if (e & 1) r = (T)(r * base);
      base = (T)(base * base);
    }
  }
  STORE(r, y, i);
#elif OP == 17
  STORE(m >= (T)(sizeof(T) * 8) ? (T)0 : (T)(x << m), y, i);
#elif OP == 18
  STORE(m >= (T)(sizeof(T) * 8) ? (T)0 : (T)(x >> m), y, i);
#endif
}
#endif

#ifdef UNARY
// y = f(x): Not (bool), IsNaN and IsInf (float to bool; DETECT_POS and
// DETECT_NEG choose the infinities), Sign (x's type; NaN stays NaN).
__kernel void typed_unary(__global const T* restrict x, __global OUT_T* restrict y) {
  const int i = get_global_id(0);
  const V v = LOAD(x, i);
#if OP == 20
  STORE(v == 0, y, i);
#elif OP == 21
  STORE(isnan(v) ? 1 : 0, y, i);
#elif OP == 22
  STORE(isinf(v) ? (v > 0 ? DETECT_POS : DETECT_NEG) : 0, y, i);
#elif OP == 23
  STORE(v > 0 ? (V)1 : (v < 0 ? (V)-1 : v), y, i);
#endif
}
#endif

#ifdef BROADCAST_COPY
// y = x broadcast to y's shape (Expand of any element type): `dims` is the
// output shape padded to rank 8, `sx` x's element strides (0 on broadcast
// dimensions). T is an unsigned integer of the element's size: the bits
// are copied.
__kernel void broadcast_copy(__global const T* restrict x, __global T* restrict y, int8 dims,
                             int8 sx) {
  const int i = get_global_id(0);
  y[i] = x[recq_broadcast_offset(i, dims, sx)];
}
#endif
