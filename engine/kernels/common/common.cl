// Prepended to every recq kernel program.
// Activation codes match recq::ActivationKind.
#define RECQ_ACT_NONE 0
#define RECQ_ACT_RELU 1
#define RECQ_ACT_CLIP 2
#define RECQ_ACT_LEAKY_RELU 3
#define RECQ_ACT_SIGMOID 4
#define RECQ_ACT_HARD_SIGMOID 5
#define RECQ_ACT_HARD_SWISH 6
#define RECQ_ACT_SILU 7
#define RECQ_ACT_GELU 8
#define RECQ_ACT_GELU_TANH 9

// recq_act_erfc: erfc(w) from Numerical Recipes' Chebyshev fit (erfcc):
// fractional error below 1.2e-7 everywhere, so also in the tail where
// erf(w) rounds to -1; one exp and a polynomial, several times faster than
// the built-in erf on CPU OpenCL (PoCL), where it is not vectorised. For
// float, float4, float8 and float16: GELU as 0.5 x erfc(-x / sqrt 2),
// accurate for negative x too (the activation epilogues, the Gelu unary
// op and fused element-wise kernels).
#define RECQ_DEFINE_ACT_ERFC(T, N)                                                              \
  __attribute__((always_inline)) inline T recq_act_erfc##N(T w) {                               \
    const T z = fabs(w);                                                                        \
    const T t = 1.0f / (1.0f + 0.5f * z);                                                       \
    const T p =                                                                                 \
        -1.26551223f +                                                                          \
        t * (1.00002368f +                                                                      \
             t * (0.37409196f +                                                                 \
                  t * (0.09678418f +                                                            \
                       t * (-0.18628806f +                                                      \
                            t * (0.27886807f +                                                  \
                                 t * (-1.13520398f +                                            \
                                      t * (1.48851587f + t * (-0.82215223f + t * 0.17087277f))))))));  \
    const T r = t * exp(-z * z + p);                                                            \
    return select(2.0f - r, r, w >= 0.0f);                                                      \
  }
RECQ_DEFINE_ACT_ERFC(float, )
RECQ_DEFINE_ACT_ERFC(float4, 4)
RECQ_DEFINE_ACT_ERFC(float8, 8)
RECQ_DEFINE_ACT_ERFC(float16, 16)
#undef RECQ_DEFINE_ACT_ERFC

// RECQ_ACT_FIXED (a build option): the activation every recq_activate of
// the program applies, known when the lowering built it, so that the
// switch folds away: a product's epilogue unrolls it once per accumulator,
// and on an H100 ConvNeXt-T's 3136x384x96 products with exact GELU ran at
// 4-6 TFLOP/s with the switch, 14 without an epilogue.
#ifdef RECQ_ACT_FIXED
#define RECQ_ACT_FIX(act) act = RECQ_ACT_FIXED
#else
#define RECQ_ACT_FIX(act) (void)0
#endif
inline float recq_activate(float v, int act, float a, float b) {
  RECQ_ACT_FIX(act);
  switch (act) {
    case RECQ_ACT_RELU: return fmax(v, 0.0f);
    case RECQ_ACT_CLIP: return fmin(fmax(v, a), b);
    case RECQ_ACT_LEAKY_RELU: return v >= 0.0f ? v : a * v;
    case RECQ_ACT_SIGMOID: return 1.0f / (1.0f + exp(-v));
    case RECQ_ACT_HARD_SIGMOID: return clamp(a * v + b, 0.0f, 1.0f);
    case RECQ_ACT_HARD_SWISH: return v * clamp(v / 6.0f + 0.5f, 0.0f, 1.0f);
    case RECQ_ACT_SILU: return v / (1.0f + exp(-v));
    case RECQ_ACT_GELU: return 0.5f * v * recq_act_erfc(v * -0.70710678118654752f);
    case RECQ_ACT_GELU_TANH:
      return 0.5f * v * (1.0f + tanh(0.79788456080286536f * (v + 0.044715f * v * v * v)));
    default: return v;
  }
}

// Offset of flat index `i` of a tensor of shape `dims` (rank 8, leading 1s)
// in a tensor with element strides `strides` (0 for broadcast dimensions).
inline int recq_broadcast_offset(int i, int8 dims, int8 strides) {
  int offset = 0;
  int d;
  d = i % dims.s7; i /= dims.s7; offset += d * strides.s7;
  d = i % dims.s6; i /= dims.s6; offset += d * strides.s6;
  d = i % dims.s5; i /= dims.s5; offset += d * strides.s5;
  d = i % dims.s4; i /= dims.s4; offset += d * strides.s4;
  d = i % dims.s3; i /= dims.s3; offset += d * strides.s3;
  d = i % dims.s2; i /= dims.s2; offset += d * strides.s2;
  d = i % dims.s1; i /= dims.s1; offset += d * strides.s1;
  offset += i * strides.s0;
  return offset;
}

// recq_sum16 / recq_max16: the sum (halves added: 8 + 8, 4 + 4, then
// (x + y) + (z + w)) and the maximum of a float16's lanes.
inline float recq_sum16(float16 v) {
  const float8 a = v.lo + v.hi;
  const float4 b = a.lo + a.hi;
  return (b.x + b.y) + (b.z + b.w);
}
inline float recq_max16(float16 v) {
  const float8 a = fmax(v.lo, v.hi);
  const float4 b = fmax(a.lo, a.hi);
  return fmax(fmax(b.x, b.y), fmax(b.z, b.w));
}

// recq_activate applied to every lane of a float8 / float16 (same codes).
#define RECQ_DEFINE_VECTOR_ACTIVATE(T, N)                                             \
  inline T recq_activate##N(T v, int act, float a, float b) {                         \
    RECQ_ACT_FIX(act);                                                                \
    switch (act) {                                                                    \
      case RECQ_ACT_RELU: return fmax(v, (T)(0.0f));                                  \
      case RECQ_ACT_CLIP: return fmin(fmax(v, (T)(a)), (T)(b));                       \
      case RECQ_ACT_LEAKY_RELU: return select(a * v, v, v >= (T)(0.0f));              \
      case RECQ_ACT_SIGMOID: return (T)(1.0f) / ((T)(1.0f) + exp(-v));                \
      case RECQ_ACT_HARD_SIGMOID: return clamp(a * v + b, 0.0f, 1.0f);                \
      case RECQ_ACT_HARD_SWISH: return v * clamp(v / 6.0f + 0.5f, 0.0f, 1.0f);        \
      case RECQ_ACT_SILU: return v / ((T)(1.0f) + exp(-v));                           \
      case RECQ_ACT_GELU: return 0.5f * v * recq_act_erfc##N(v * -0.70710678118654752f); \
      case RECQ_ACT_GELU_TANH:                                                        \
        return 0.5f * v * (1.0f + tanh(0.79788456080286536f * (v + 0.044715f * v * v * v))); \
      default: return v;                                                              \
    }                                                                                 \
  }
RECQ_DEFINE_VECTOR_ACTIVATE(float8, 8)
RECQ_DEFINE_VECTOR_ACTIVATE(float16, 16)
#undef RECQ_DEFINE_VECTOR_ACTIVATE

// recq_gelu8 / 16: GELU (erf form) as recq_activate8 / 16 computes it,
// always inlined: an epilogue that applies it to each of its accumulator
// rows in one unrolled loop lets the compiler interleave the rows' long
// chains (a division, a polynomial, exp), which one call per row, as
// PoCL 3.1 compiles recq_activate16, runs one after another.
#define RECQ_DEFINE_GELU(T, N)                                           \
  __attribute__((always_inline)) inline T recq_gelu##N(T v) {            \
    return 0.5f * v * recq_act_erfc##N(v * -0.70710678118654752f);       \
  }
RECQ_DEFINE_GELU(float8, 8)
RECQ_DEFINE_GELU(float16, 16)
#undef RECQ_DEFINE_GELU

// recq_activate_inline8 / 16: the same, with none, Relu, Clip and HardSwish
// inline and the rest through recq_activate8 / 16. PoCL 3.1 compiles that
// switch into a function call, with the vector passed through the stack,
// wherever it is called: an epilogue over few taps per output pays it in
// full (MobileNet V2's 1x1 expansions over 16 to 24 channels took
// 0.77-0.81x as long without it, AVX2), and a kernel holding its weights in
// registers reloads them after it. SiLU and Sigmoid inline (exp in every
// unrolled epilogue) measured no faster on EfficientNet-B0 and lengthened
// each kernel's first-enqueue compile.
#define RECQ_DEFINE_INLINE_ACTIVATE(T, N)                                   \
  inline T recq_activate_inline##N(T v, int act, float a, float b) {        \
    RECQ_ACT_FIX(act);                                                      \
    if (act == RECQ_ACT_NONE) return v;                                     \
    if (act == RECQ_ACT_RELU) return fmax(v, (T)(0.0f));                    \
    if (act == RECQ_ACT_CLIP) return fmin(fmax(v, (T)(a)), (T)(b));         \
    if (act == RECQ_ACT_HARD_SWISH) return v * clamp(v / 6.0f + 0.5f, 0.0f, 1.0f); \
    return recq_activate##N(v, act, a, b);                                  \
  }
RECQ_DEFINE_INLINE_ACTIVATE(float8, 8)
RECQ_DEFINE_INLINE_ACTIVATE(float16, 16)
#undef RECQ_DEFINE_INLINE_ACTIVATE

// recq_group_sum returns v summed over a work-group of `items` items (a
// power of two; the caller's compile-time group size), through `red`, local
// memory of `items` floats; every item of the group calls it and gets the
// sum.
inline float recq_group_sum(__local float* red, int lid, int items, float v) {
  red[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = items / 2; s > 0; s >>= 1) {
    if (lid < s) red[lid] += red[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  v = red[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return v;
}

// Matrix units (matmul_mma.cl, conv2d_igemm.cl's RECQ_IG_MMA): products at
// fp32 accuracy from tf32 matrix instructions (NVIDIA's mma.sync through
// inline PTX, under -DRECQ_MM_PTX) by splitting each operand x into a tf32
// head h = rna(x) and a tail t = x - h, of which the unit reads the top 19
// bits, and summing x*z ~ xt*zh + xh*zt + xh*zh (xt*zt, below 2^-22 of the
// product, dropped). Without RECQ_MM_PTX the kernels compute the same sums
// per element with recq_tf32x3_product (the tests' emulation on PoCL).
// Under -DRECQ_MMA_TF32 (EngineOptions::Precision::kTf32) the tail is zero
// and only xh*zh is computed: one tf32 product, as PyTorch's allow_tf32.

// recq_tf32 rounds x to tf32 (10 mantissa bits), to nearest with ties away
// from zero, as cvt.rna.tf32.f32 does; infinities and NaNs pass unchanged.
inline uint recq_tf32(float x) {
#ifdef RECQ_MM_PTX
  uint r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
#else
  const uint u = as_uint(x);
  return (u & 0x7f800000u) == 0x7f800000u ? u : (u + 0x1000u) & 0xffffe000u;
#endif
}

// The head and tail of x, as the matrix instructions take them.
#ifdef RECQ_MMA_TF32
#define RECQ_TF32_SPLIT(x, h, t) \
  do {                           \
    (h) = recq_tf32((x));        \
    (t) = 0u;                    \
  } while (0)
#else
#define RECQ_TF32_SPLIT(x, h, t)             \
  do {                                       \
    const float recq_x_ = (x);               \
    (h) = recq_tf32(recq_x_);                \
    (t) = as_uint(recq_x_ - as_float((h)));  \
  } while (0)
#endif

// x*z as the three tf32 products sum it (the tail as the unit reads it),
// or as the one product does under RECQ_MMA_TF32 (exact in fp32: two
// 11-bit significands).
inline float recq_tf32x3_product(float x, float z) {
  const float xh = as_float(recq_tf32(x)), zh = as_float(recq_tf32(z));
#ifdef RECQ_MMA_TF32
  return xh * zh;
#else
  const float xt = as_float(as_uint(x - xh) & 0xffffe000u);
  const float zt = as_float(as_uint(z - zh) & 0xffffe000u);
  return xt * zh + xh * zt + xh * zh;
#endif
}

#ifdef RECQ_MM_PTX
// d[0..3] += a * b on one 16x8x8 tile: tf32 operands a[0..3] (A's rows g,
// g+8 at columns t, t+4 for lane 4g+t) and b[0..1] (B's rows t, t+4 at
// column g), fp32 accumulators d (rows g, g+8 at columns 2t, 2t+1).
#define RECQ_MMA(d, a, b)                                                                 \
  asm volatile(                                                                           \
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, " \
      "{%8,%9}, {%0,%1,%2,%3};"                                                           \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                    \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))
// d += A*B from split operands (heads ah/bh, tails at/bt) on the unit
// itself: the three tf32 products (the heads' alone under RECQ_MMA_TF32),
// accumulated in d by the unit.
#ifdef RECQ_MMA_TF32
#define RECQ_MMA3_UNIT(d, ah, at, bh, bt) RECQ_MMA(d, ah, bh)
#else
#define RECQ_MMA3_UNIT(d, ah, at, bh, bt) \
  do {                                    \
    RECQ_MMA(d, at, bh);                  \
    RECQ_MMA(d, ah, bt);                  \
    RECQ_MMA(d, ah, bh);                  \
  } while (0)
#endif
// The kernels accumulate so into a zeroed partial sum over one staging
// step (a few steps of 8) and add that to their fp32 accumulators in the
// fp32 units: the unit's own accumulation truncates to about fp32's width
// relative to the largest term, a bias that grows with the number of steps
// where the whole sum stays in the unit (Inception-v3's output measured
// 6.3e-4 from onnxruntime's in relative L2 that way on an H100, 4.3e-5 on
// the fp32 units).
#endif

// Copies from global to local memory for tiles staged several steps ahead
// (matmul_mma.cl's and conv2d_igemm.cl's local stages): RECQ_CP_ASYNC16
// (16 bytes, both addresses 16-byte aligned) and RECQ_CP_ASYNC4 (4 bytes)
// copy `n` bytes from src (0: none, the destination gets zeros; src must
// still be a valid address) to dst. With the instructions (cp.async, sm_80
// and later, under RECQ_MM_PTX with float storage) the copies bypass
// registers and complete asynchronously: each item commits its copies of
// a step as one group (RECQ_CP_COMMIT) and RECQ_CP_WAIT(n) waits until at
// most n of its groups are pending (a literal); a barrier after the wait
// makes every item's copies visible. Elsewhere they are plain copies (half
// storage widened as it is read) and commit and wait do nothing.
#if defined(RECQ_MM_PTX) && !defined(RECQ_HALF_STORAGE)
#define RECQ_CP_ASYNC16(dst, src, n)                                                         \
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"((uint)(size_t)(dst)), \
               "l"((ulong)(src)), "r"(n)                                                   \
               : "memory")
#define RECQ_CP_ASYNC4(dst, src, n)                                                         \
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"((uint)(size_t)(dst)), \
               "l"((ulong)(src)), "r"(n)                                                  \
               : "memory")
#define RECQ_CP_COMMIT() asm volatile("cp.async.commit_group;" ::: "memory")
#define RECQ_CP_WAIT(n) asm volatile("cp.async.wait_group " #n ";" ::: "memory")
#else
#define RECQ_CP_ASYNC16(dst, src, n) \
  vstore4((n) != 0 ? RECQ_LOAD4((src), 0) : (float4)(0.0f), 0, (dst))
#define RECQ_CP_ASYNC4(dst, src, n) (*(dst) = (n) != 0 ? RECQ_LOAD((src), 0) : 0.0f)
#define RECQ_CP_COMMIT() \
  do {                   \
  } while (0)
#define RECQ_CP_WAIT(n) \
  do {                  \
  } while (0)
#endif

// RECQ_MMA_UNROLL unrolls a loop over fragments or accumulators where they
// are registers (the matrix instructions); the emulation's are not, and its
// compiles stay small.
#ifdef RECQ_MM_PTX
#define RECQ_MMA_UNROLL _Pragma("unroll")
#else
#define RECQ_MMA_UNROLL
#endif

// Storage of float tensors. Kernels declare float tensors as RECQ_T and read
// and write them only through these macros, so that one source serves both
// precisions: float (the default), or half storage under -DRECQ_HALF_STORAGE
// (weights and activations stored as half with the core vload_half /
// vstore_half built-ins, arithmetic in float; no cl_khr_fp16 needed). The
// vector forms take a vector index, as vloadN does (elements N*i .. N*i+N-1).
#ifdef RECQ_HALF_STORAGE
#define RECQ_T half
#define RECQ_LOAD(p, i) vload_half((i), (p))
#define RECQ_LOAD4(p, i) vload_half4((i), (p))
// Eight and sixteen halves move four at a time: PoCL 3.1 on AVX2 hosts
// (its pthread-haswell target) compiled vload_half8/16 inside work-group
// loops into aligned 16-byte moves (vmovaps), which fault on the 2-byte
// alignment vload_halfn allows (binary_mid_rows over rows of 36 halves
// crashed so); a run of four is an 8-byte move, which has no alignment
// requirement.
#define RECQ_LOAD8(p, i) recq_load_half8((i), (p))
#define RECQ_LOAD16(p, i) recq_load_half16((i), (p))
#define RECQ_STORE(p, i, v) vstore_half_rte((v), (i), (p))
#define RECQ_STORE4(p, i, v) vstore_half4_rte((v), (i), (p))
#define RECQ_STORE8(p, i, v) recq_store_half8((v), (i), (p))
#define RECQ_STORE16(p, i, v) recq_store_half16((v), (i), (p))
inline float8 recq_load_half8(size_t i, const __global half* p) {
  return (float8)(vload_half4(2 * i, p), vload_half4(2 * i + 1, p));
}
inline float16 recq_load_half16(size_t i, const __global half* p) {
  return (float16)(vload_half4(4 * i, p), vload_half4(4 * i + 1, p), vload_half4(4 * i + 2, p),
                   vload_half4(4 * i + 3, p));
}
inline void recq_store_half8(float8 v, size_t i, __global half* p) {
  vstore_half4_rte(v.lo, 2 * i, p);
  vstore_half4_rte(v.hi, 2 * i + 1, p);
}
inline void recq_store_half16(float16 v, size_t i, __global half* p) {
  recq_store_half8(v.lo, 2 * i, p);
  recq_store_half8(v.hi, 2 * i + 1, p);
}
#else
#define RECQ_T float
#define RECQ_LOAD(p, i) ((p)[(i)])
#define RECQ_LOAD4(p, i) vload4((i), (p))
#define RECQ_LOAD8(p, i) vload8((i), (p))
#define RECQ_LOAD16(p, i) vload16((i), (p))
#define RECQ_STORE(p, i, v) ((p)[(i)] = (v))
#define RECQ_STORE4(p, i, v) vstore4((v), (i), (p))
#define RECQ_STORE8(p, i, v) vstore8((v), (i), (p))
#define RECQ_STORE16(p, i, v) vstore16((v), (i), (p))
#endif

// Element access of the kernels built per element type (typed.cl's Cast
// aside): -DKIND numbers the element type as TypedKind does (0 float,
// 1 half, 2 long, 3 int, 4 char, 5 uchar, 6 bool as uchar 0/1, 7 double,
// 8 ushort, 9 short, 10 uint, 11 ulong) and -DT is its storage type
// (ushort for half). RECQ_KIND_UNSIGNED(k) is whether kind k is an
// unsigned integer. LOAD(p, i) reads element
// i as V, the type arithmetic runs in (float for float and half, T
// otherwise); STORE(v, p, i) writes v to element i of an output of type
// OUT_KIND / OUT_T where those are given (typed_elementwise.cl: bool
// results of comparisons), else of type KIND / T. half is read and written
// with vload_half / vstore_half_rte (no cl_khr_fp16 needed); double needs
// cl_khr_fp64, which the lowering checks before it builds a double kernel.
#define RECQ_KIND_UNSIGNED(k) ((k) == 5 || (k) == 8 || (k) == 10 || (k) == 11)
#if defined(KIND) || defined(SRC_KIND)
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#endif
#ifdef KIND
#if KIND == 1
#define LOAD(p, i) vload_half((i), (__global const half*)(p))
#define V float
#elif KIND == 0
#define LOAD(p, i) (p)[(i)]
#define V float
#else
#define LOAD(p, i) (p)[(i)]
#define V T
#endif
#ifdef OUT_KIND
#define RECQ_STORE_KIND OUT_KIND
#define RECQ_STORE_T OUT_T
#else
#define RECQ_STORE_KIND KIND
#define RECQ_STORE_T T
#endif
#if RECQ_STORE_KIND == 1
#define STORE(v, p, i) vstore_half_rte((float)(v), (i), (__global half*)(p))
#else
#define STORE(v, p, i) ((p)[(i)] = (RECQ_STORE_T)(v))
#endif
#endif
