// Integer matrix products and 2-D convolutions (engine/ops/integer_matmul.cc):
// MatMulInteger / ConvInteger (int32 y) and, with QLINEAR, QLinearMatMul /
// QLinearConv (y requantized to Y_T in [QMIN, QMAX]). A_T and B_T are the
// storage types of the two operands (char or uchar), Y_T the output's.
// Products of the zero-point-shifted operands are summed exactly in int.
// The requantization runs in double where the device has cl_khr_fp64 (as
// ONNX's reference does: an int32 sum times a float32 multiplier), else in
// float.
#if QLINEAR
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define REQ_T double
#else
#define REQ_T float
#endif
// m = sa * sb / sy in float, the division correctly rounded with fp64.
inline float recq_multiplier(float sa, float sb, float sy) {
#ifdef cl_khr_fp64
  return (float)((double)(sa * sb) / (double)sy);
#else
  return sa * sb / sy;
#endif
}
// saturate(rint(acc * m) + zp).
inline Y_T recq_requantize(int acc, float m, int zp) {
  const REQ_T v = rint((REQ_T)acc * (REQ_T)m + (REQ_T)zp);
  return (Y_T)clamp(v, (REQ_T)QMIN, (REQ_T)QMAX);
}
#endif

#ifdef MATMUL
// y[b, i, j] = sum_k (a[b, i, k] - azp) * (b[b, k, j] - bzp). Global size
// (N, M, batch). The batch index is broadcast numpy-style: `dims` is the
// output's batch shape padded to rank 8, `sa` / `sb` the operands' batch
// strides in matrices (0 on broadcast dimensions). A zero point or scale
// count of 1 is per tensor, M (a) or N (b) per row / column, 0 absent.
__kernel void int_matmul(__global const A_T* restrict a, __global const B_T* restrict b,
                         __global const A_T* restrict azp, __global const B_T* restrict bzp,
                         int n_azp, int n_bzp,
#if QLINEAR
                         __global const float* restrict as, __global const float* restrict bs,
                         __global const float* restrict ys, __global const Y_T* restrict yzp,
                         int n_as, int n_bs, int has_yzp,
#endif
                         __global Y_T* restrict y, int M, int N, int K, int8 dims, int8 sa,
                         int8 sb) {
  const int j = get_global_id(0), i = get_global_id(1), batch = get_global_id(2);
  __global const A_T* ar =
      a + (size_t)recq_broadcast_offset(batch, dims, sa) * M * K + (size_t)i * K;
  __global const B_T* bc = b + (size_t)recq_broadcast_offset(batch, dims, sb) * K * N + j;
  const int za = n_azp == 0 ? 0 : (int)azp[n_azp == 1 ? 0 : i];
  const int zb = n_bzp == 0 ? 0 : (int)bzp[n_bzp == 1 ? 0 : j];
  int acc = 0;
  for (int k = 0; k < K; ++k) acc += ((int)ar[k] - za) * ((int)bc[(size_t)k * N] - zb);
  const size_t out = ((size_t)batch * M + i) * N + j;
#if QLINEAR
  const float m = recq_multiplier(as[n_as == 1 ? 0 : i], bs[n_bs == 1 ? 0 : j], ys[0]);
  y[out] = recq_requantize(acc, m, has_yzp ? (int)yzp[0] : 0);
#else
  y[out] = acc;
#endif
}
#endif

#ifdef CONV
// NCHW 2-D convolution: y[n, oc, oh, ow] = sum over the group's input
// channels and the kernel window of (x - xzp) * (w[oc] - wzp), windows
// reaching into the padding adding nothing (x - xzp is padded with 0).
// Global size (OW, OH, N * OC).
__kernel void int_conv2d(__global const A_T* restrict x, __global const B_T* restrict w,
                         __global const A_T* restrict xzp, __global const B_T* restrict wzp,
                         int n_xzp, int n_wzp,
#if QLINEAR
                         __global const float* restrict xs, __global const float* restrict ws,
                         __global const float* restrict ys, __global const Y_T* restrict yzp,
                         int n_ws, int has_yzp, __global const int* restrict bias, int has_bias,
#endif
                         __global Y_T* restrict y, int C, int H, int W, int OC, int OH, int OW,
                         int KH, int KW, int sh, int sw, int dh, int dw, int pt, int pl,
                         int groups) {
  const int ow = get_global_id(0), oh = get_global_id(1), noc = get_global_id(2);
  const int n = noc / OC, oc = noc % OC;
  const int cg = C / groups, ocg = OC / groups;
  const int c0 = (oc / ocg) * cg;
  const int zx = n_xzp == 0 ? 0 : (int)xzp[0];
  const int zw = n_wzp == 0 ? 0 : (int)wzp[n_wzp == 1 ? 0 : oc];
  int acc = 0;
  for (int c = 0; c < cg; ++c) {
    __global const A_T* xc = x + ((size_t)n * C + c0 + c) * H * W;
    __global const B_T* wc = w + ((size_t)oc * cg + c) * KH * KW;
    for (int kh = 0; kh < KH; ++kh) {
      const int ih = oh * sh - pt + kh * dh;
      if (ih < 0 || ih >= H) continue;
      for (int kw = 0; kw < KW; ++kw) {
        const int iw = ow * sw - pl + kw * dw;
        if (iw < 0 || iw >= W) continue;
        acc += ((int)xc[ih * W + iw] - zx) * ((int)wc[kh * KW + kw] - zw);
      }
    }
  }
  const size_t out = ((size_t)noc * OH + oh) * OW + ow;
#if QLINEAR
  if (has_bias) acc += bias[oc];
  const float m = recq_multiplier(xs[0], ws[n_ws == 1 ? 0 : oc], ys[0]);
  y[out] = recq_requantize(acc, m, has_yzp ? (int)yzp[0] : 0);
#else
  y[out] = acc;
#endif
}
#endif
