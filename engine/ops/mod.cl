// Mod, built per element type: KIND as TypedKind (see common.cl), T its storage type (LOAD, STORE and V
// from common.cl), FMOD 1 for C's fmod (sign of
// the dividend) or 0 for Python's % (sign of the divisor). Global size:
// (number of output elements).

// y = a mod b with numpy broadcasting: `dims` is the output shape padded to
// rank 8 with leading 1s, `sa` and `sb` the inputs' element strides (0 on
// broadcast dimensions). An integer divisor of 0 gives 0.
__kernel void mod_kernel(__global const T* restrict a, __global const T* restrict b,
                         __global T* restrict y, int8 dims, int8 sa, int8 sb) {
  const int i = get_global_id(0);
#if KIND <= 1 || KIND == 7
  const V x = LOAD(a, recq_broadcast_offset(i, dims, sa));
  const V m = LOAD(b, recq_broadcast_offset(i, dims, sb));
  V r = fmod(x, m);
#if !FMOD
  if (r != 0 && ((r < 0) != (m < 0))) r += m;
#endif
  STORE(r, y, i);
#else
  const T x = a[recq_broadcast_offset(i, dims, sa)];
  const T m = b[recq_broadcast_offset(i, dims, sb)];
#if RECQ_KIND_UNSIGNED(KIND)
  const T r = m == 0 ? (T)0 : (T)(x % m);
#else
  // x % -1 is 0 (and INT_MIN % -1 would overflow).
  T r = (m == 0 || m == (T)-1) ? (T)0 : (T)(x % m);
#if !FMOD
  if (r != 0 && ((r < 0) != (m < 0))) r += m;
#endif
#endif
  y[i] = r;
#endif
}
