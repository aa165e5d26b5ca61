// Mod, built per element type: KIND as TypedKind (0 float, 1 half, 2 long,
// 3 int, 4 char, 5 uchar), T its storage type, FMOD 1 for C's fmod (sign of
// the dividend) or 0 for Python's % (sign of the divisor). Global size:
// (number of output elements).

#if KIND == 1
#define LOAD(p, i) vload_half((i), (__global const half*)(p))
#define STORE(v, p, i) vstore_half_rte((v), (i), (__global half*)(p))
#else
#define LOAD(p, i) (p)[(i)]
#define STORE(v, p, i) ((p)[(i)] = (v))
#endif

// y = a mod b with numpy broadcasting: `dims` is the output shape padded to
// rank 8 with leading 1s, `sa` and `sb` the inputs' element strides (0 on
// broadcast dimensions). An integer divisor of 0 gives 0.
__kernel void mod_kernel(__global const T* restrict a, __global const T* restrict b,
                         __global T* restrict y, int8 dims, int8 sa, int8 sb) {
  const int i = get_global_id(0);
#if KIND <= 1
  const float x = LOAD(a, recq_broadcast_offset(i, dims, sa));
  const float m = LOAD(b, recq_broadcast_offset(i, dims, sb));
  float r = fmod(x, m);
#if !FMOD
  if (r != 0.0f && ((r < 0.0f) != (m < 0.0f))) r += m;
#endif
  STORE(r, y, i);
#else
  const T x = a[recq_broadcast_offset(i, dims, sa)];
  const T m = b[recq_broadcast_offset(i, dims, sb)];
#if KIND == 5
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
