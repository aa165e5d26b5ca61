// Linear quantization (engine/ops/quantize.cc). Divisions are correctly
// rounded, as numpy's float32 division is: OpenCL lets a device's float
// division be 2.5 ulp off (NVIDIA's is, unless a program is built with
// -cl-fp32-correctly-rounded-divide-sqrt), so the quotient gets one
// correction from its exact residual (an FMA). F_HALF: the float tensors
// (x of QuantizeLinear, y of DequantizeLinear, the scales) are half, read
// and written with vload_half / vstore_half_rte; otherwise float. Q_T is
// the integer type's storage, QMIN / QMAX its range.
inline float recq_div_rn(float a, float b) {
  const float q = a / b;
  if (!isfinite(q) || q == 0.0f) return q;  // a zero scale, an overflow, NaN
  const float r = fma(-q, b, a);            // a - q * b, exact
  return q + r / b;
}
#define RECQ_DIV(a, b) recq_div_rn((a), (b))

#if F_HALF
#define F_T ushort
#define LOADF(p, i) vload_half((i), (__global const half*)(p))
#define STOREF(v, p, i) vstore_half_rte((v), (i), (__global half*)(p))
#else
#define F_T float
#define LOADF(p, i) (p)[(i)]
#define STOREF(v, p, i) ((p)[(i)] = (v))
#endif

// The element of the scale and zero point that applies to element i of x:
// x is [outer, dim, inner] around the quantization axis; per tensor dim =
// inner = 1; per axis the index along it; per block (BLOCKED) the block's
// element of a [outer, nblocks, inner] scale.
inline int recq_quant_param_index(int i, int inner, int dim, int block, int nblocks) {
  const int a = (i / inner) % dim;
#if BLOCKED
  return ((i / (inner * dim)) * nblocks + a / block) * inner + i % inner;
#else
  return a;
#endif
}

#ifdef QUANTIZE
// y = saturate(rint(x / scale) + zero_point); rint rounds half to even.
// Global size: (elements of x).
__kernel void quantize_linear(__global const F_T* restrict x, __global const F_T* restrict scale,
                              __global const Q_T* restrict zero_point, __global Q_T* restrict y,
                              int inner, int dim, int block, int nblocks, int has_zero_point) {
  const int i = get_global_id(0);
  const int p = recq_quant_param_index(i, inner, dim, block, nblocks);
  const float v = RECQ_DIV(LOADF(x, i), LOADF(scale, p));
  // Saturating conversion (NaN gives 0), kept clear of overflow when the
  // zero point is added.
  long q = clamp(convert_long_sat_rte(v), -(1L << 40), 1L << 40);
  if (has_zero_point) q += (long)zero_point[p];
  y[i] = (Q_T)clamp(q, (long)QMIN, (long)QMAX);
}
#endif

#ifdef DEQUANTIZE
// y = (float(x) - float(zero_point)) * scale. Global size: (elements of x).
__kernel void dequantize_linear(__global const Q_T* restrict x, __global const F_T* restrict scale,
                                __global const Q_T* restrict zero_point, __global F_T* restrict y,
                                int inner, int dim, int block, int nblocks, int has_zero_point) {
  const int i = get_global_id(0);
  const int p = recq_quant_param_index(i, inner, dim, block, nblocks);
  float d = (float)x[i];
  if (has_zero_point) d -= (float)zero_point[p];
  STOREF(d * LOADF(scale, p), y, i);
}
#endif

#ifdef DYNAMIC_PARAMS
// ONNX DynamicQuantizeLinear's scale (x's float type) or, with ZERO_POINT,
// its uint8 zero point, from lo = min(0, min x) and hi = max(0, max x). One
// work-group of GROUP (a power of two) work-items reduces all of x.
__kernel void dynamic_quantize_params(__global const F_T* restrict x, int n,
                                      __global void* restrict out) {
  __local float lo[GROUP];
  __local float hi[GROUP];
  const int t = get_local_id(0);
  float mn = 0.0f, mx = 0.0f;
  for (int i = t; i < n; i += GROUP) {
    const float v = LOADF(x, i);
    mn = fmin(mn, v);
    mx = fmax(mx, v);
  }
  lo[t] = mn;
  hi[t] = mx;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = GROUP / 2; s > 0; s >>= 1) {
    if (t < s) {
      lo[t] = fmin(lo[t], lo[t + s]);
      hi[t] = fmax(hi[t], hi[t + s]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (t == 0) {
    const float scale = RECQ_DIV(hi[0] == lo[0] ? 1.0f : hi[0] - lo[0], 255.0f);
#if ZERO_POINT
    const float zp = clamp(0.0f - RECQ_DIV(lo[0], scale), 0.0f, 255.0f);
    ((__global uchar*)out)[0] = (uchar)rint(zp);
#else
    STOREF(scale, (__global F_T*)out, 0);
#endif
  }
}
#endif
