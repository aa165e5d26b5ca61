// GPU-shaped convolutions: one (or a few) outputs per work-item, the global
// range flattened to one dimension with consecutive work-items along output
// pixels (coalesced loads and stores), groups of 64-256 work-items. Each
// kernel bounds-checks the flattened index, so the global size may be
// rounded up to any local size. Bias and activation are fused.

// Pointwise (1x1, stride 1, no padding, groups 1) convolution:
//   Y[n][oc][p] = act(sum_c W[oc][c] * X[n][c][p] + bias[oc] (+ R[n][oc][p])).
// Build options: -DRECQ_PW_OCB=1|2|4 (output channels per work-item),
// -DRECQ_PW_KS=1|2|4|...|32 (slices of C per output, a power of two, summed
// by a tree in local memory) and -DRECQ_PW_LX (local size in dimension 0,
// needed when KS > 1).
// `wp` holds the weights packed by the lowering as [ceil(OC/OCB)][C][OCB],
// zero past OC. `r`, when not NULL, is a residual of Y's shape added before
// the activation (a fused Add).
// Global size: (N * ceil(OC/OCB) * HW rounded up to LX, KS); local (LX, KS).
#ifndef RECQ_PW_OCB
#define RECQ_PW_OCB 1
#endif
#ifndef RECQ_PW_KS
#define RECQ_PW_KS 1
#endif
#ifndef RECQ_PW_LX
#define RECQ_PW_LX 64
#endif

__kernel void conv2d_pointwise_gpu(__global const RECQ_T* restrict x,
                                   __global const RECQ_T* restrict wp,
                                   __global const RECQ_T* restrict bias,
                                   __global const RECQ_T* restrict r, __global RECQ_T* restrict y,
                                   int N, int C, int HW, int OC, int act, float act_a,
                                   float act_b) {
  const int gid = get_global_id(0);
  const int ocbs = (OC + RECQ_PW_OCB - 1) / RECQ_PW_OCB;
  const bool live = gid < N * ocbs * HW;
  int p = 0, ocb = 0, n = 0;
  if (live) {
    p = gid % HW;
    const int t = gid / HW;
    ocb = t % ocbs;
    n = t / ocbs;
  }
#if RECQ_PW_KS == 1
  const int c0 = 0;
  const int c1 = C;
#else
  const int ks = get_local_id(1);
  const int slice = (C + RECQ_PW_KS - 1) / RECQ_PW_KS;
  const int c0 = min(C, ks * slice);
  const int c1 = min(C, c0 + slice);
#endif
  float acc[RECQ_PW_OCB];
#pragma unroll
  for (int j = 0; j < RECQ_PW_OCB; ++j) acc[j] = 0.0f;
  if (live) {
    const __global RECQ_T* xp = x + (size_t)n * C * HW + p;
    const __global RECQ_T* w = wp + (size_t)ocb * C * RECQ_PW_OCB;
#pragma unroll 4
    for (int c = c0; c < c1; ++c) {
      const float xv = RECQ_LOAD(xp, (size_t)c * HW);
#pragma unroll
      for (int j = 0; j < RECQ_PW_OCB; ++j) acc[j] = fma(RECQ_LOAD(w, c * RECQ_PW_OCB + j), xv, acc[j]);
    }
  }
#if RECQ_PW_KS > 1
  // The KS partial sums of each column meet in slice 0 by a tree.
  __local float part[RECQ_PW_KS * RECQ_PW_OCB * RECQ_PW_LX];
  const int lx = get_local_id(0);
#pragma unroll
  for (int j = 0; j < RECQ_PW_OCB; ++j) part[(ks * RECQ_PW_OCB + j) * RECQ_PW_LX + lx] = acc[j];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = RECQ_PW_KS / 2; s > 0; s >>= 1) {
    if (ks < s) {
#pragma unroll
      for (int j = 0; j < RECQ_PW_OCB; ++j) {
        part[(ks * RECQ_PW_OCB + j) * RECQ_PW_LX + lx] +=
            part[((ks + s) * RECQ_PW_OCB + j) * RECQ_PW_LX + lx];
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (ks > 0 || !live) return;
#pragma unroll
  for (int j = 0; j < RECQ_PW_OCB; ++j) acc[j] = part[j * RECQ_PW_LX + lx];
#else
  if (!live) return;
#endif
#pragma unroll
  for (int j = 0; j < RECQ_PW_OCB; ++j) {
    const int oc = ocb * RECQ_PW_OCB + j;
    if (oc >= OC) break;
    const size_t at = ((size_t)n * OC + oc) * HW + p;
    float v = acc[j] + (bias ? RECQ_LOAD(bias, oc) : 0.0f);
    if (r) v += RECQ_LOAD(r, at);
    RECQ_STORE(y, at, recq_activate(v, act, act_a, act_b));
  }
}

// Depthwise convolution (groups == C == OC), any stride, padding and
// dilation; RECQ_DW_RN consecutive outputs of a row per work-item. With
// RN > 1 (stride and dilation 1 along the row, set by the lowering) the
// item reads each input row's RN + KW - 1 values once into registers and
// slides the kernel over them (ConvNeXt's 7x7: 10 loads a row for 4
// outputs, against 28). Build options: -DRECQ_DW_KH, -DRECQ_DW_KW (kernel
// size, so the taps unroll), -DRECQ_DW_RN.
// Global size: N * C * OH * ceil(OW / RN), rounded up to the local size.
#ifndef RECQ_DW_KH
#define RECQ_DW_KH 3
#endif
#ifndef RECQ_DW_KW
#define RECQ_DW_KW 3
#endif
#ifndef RECQ_DW_RN
#define RECQ_DW_RN 1
#endif

__kernel void conv2d_depthwise_gpu(__global const RECQ_T* restrict x,
                                   __global const RECQ_T* restrict w,
                                   __global const RECQ_T* restrict bias, __global RECQ_T* restrict y,
                                   int N, int C, int H, int W, int OH, int OW, int SH, int SW,
                                   int PT, int PL, int DH, int DW, int act, float act_a,
                                   float act_b) {
  const int owb = (OW + RECQ_DW_RN - 1) / RECQ_DW_RN;
  const int gid = get_global_id(0);
  if (gid >= N * C * OH * owb) return;
  const int ow0 = (gid % owb) * RECQ_DW_RN;
  const int t = gid / owb;
  const int oh = t % OH;
  const int nc = t / OH;
  const int c = nc % C;
  const __global RECQ_T* xc = x + (size_t)nc * H * W;
  const __global RECQ_T* wc = w + c * (RECQ_DW_KH * RECQ_DW_KW);
  const int ih0 = oh * SH - PT;
  const int iw0 = ow0 * SW - PL;
  const float b0 = bias ? RECQ_LOAD(bias, c) : 0.0f;
#if RECQ_DW_RN > 1
  float acc[RECQ_DW_RN];
#pragma unroll
  for (int j = 0; j < RECQ_DW_RN; ++j) acc[j] = b0;
#pragma unroll
  for (int kh = 0; kh < RECQ_DW_KH; ++kh) {
    const int ih = ih0 + kh * DH;
    if (ih < 0 || ih >= H) continue;
    float xr[RECQ_DW_RN + RECQ_DW_KW - 1];
#pragma unroll
    for (int e = 0; e < RECQ_DW_RN + RECQ_DW_KW - 1; ++e) {
      const int iw = iw0 + e;
      xr[e] = iw >= 0 && iw < W ? RECQ_LOAD(xc, ih * W + iw) : 0.0f;
    }
#pragma unroll
    for (int kw = 0; kw < RECQ_DW_KW; ++kw) {
      const float wv = RECQ_LOAD(wc, kh * RECQ_DW_KW + kw);
#pragma unroll
      for (int j = 0; j < RECQ_DW_RN; ++j) acc[j] = fma(xr[j + kw], wv, acc[j]);
    }
  }
  __global RECQ_T* yr = y + ((size_t)nc * OH + oh) * OW;
#pragma unroll
  for (int j = 0; j < RECQ_DW_RN; ++j) {
    if (ow0 + j < OW) RECQ_STORE(yr, ow0 + j, recq_activate(acc[j], act, act_a, act_b));
  }
#else
  float acc = b0;
#pragma unroll
  for (int kh = 0; kh < RECQ_DW_KH; ++kh) {
    const int ih = ih0 + kh * DH;
    if (ih < 0 || ih >= H) continue;
#pragma unroll
    for (int kw = 0; kw < RECQ_DW_KW; ++kw) {
      const int iw = iw0 + kw * DW;
      if (iw < 0 || iw >= W) continue;
      acc = fma(RECQ_LOAD(xc, ih * W + iw), RECQ_LOAD(wc, kh * RECQ_DW_KW + kw), acc);
    }
  }
  RECQ_STORE(y, gid, recq_activate(acc, act, act_a, act_b));
#endif
}

// Direct NCHW convolution with groups, dilation, padding, optional bias and a
// fused activation (conv2d.cl's contract); OCB consecutive output channels
// of one pixel per work-item, which share the input loads. Build options:
// -DRECQ_DG_KH, -DRECQ_DG_KW (kernel size, so the taps unroll) and
// -DRECQ_DG_OCB (output channels per item; OC / groups must be a multiple).
// Global size: N * OC/OCB * OH * OW, rounded up to the local size.
#ifndef RECQ_DG_KH
#define RECQ_DG_KH 3
#endif
#ifndef RECQ_DG_KW
#define RECQ_DG_KW 3
#endif
#ifndef RECQ_DG_OCB
#define RECQ_DG_OCB 1
#endif

__kernel void conv2d_direct_gpu(__global const RECQ_T* restrict x, __global const RECQ_T* restrict w,
                                __global const RECQ_T* restrict bias, __global RECQ_T* restrict y,
                                int N, int C, int H, int W, int OC, int OH, int OW, int SH,
                                int SW, int PT, int PL, int DH, int DW, int groups, int act,
                                float act_a, float act_b) {
  const int gid = get_global_id(0);
  const int ocbs = OC / RECQ_DG_OCB;
  if (gid >= N * ocbs * OH * OW) return;
  const int ow = gid % OW;
  int t = gid / OW;
  const int oh = t % OH;
  t /= OH;
  const int oc = (t % ocbs) * RECQ_DG_OCB;
  const int n = t / ocbs;
  const int cpg = C / groups;
  const int g = oc / (OC / groups);
  float acc[RECQ_DG_OCB];
#pragma unroll
  for (int j = 0; j < RECQ_DG_OCB; ++j) acc[j] = bias ? RECQ_LOAD(bias, oc + j) : 0.0f;
  const int ih0 = oh * SH - PT;
  const int iw0 = ow * SW - PL;
  for (int ic = 0; ic < cpg; ++ic) {
    const __global RECQ_T* xc = x + ((size_t)(n * C + g * cpg + ic)) * H * W;
    const __global RECQ_T* wc = w + ((size_t)(oc * cpg + ic)) * (RECQ_DG_KH * RECQ_DG_KW);
    const size_t wstride = (size_t)cpg * (RECQ_DG_KH * RECQ_DG_KW);  // next output channel
#pragma unroll
    for (int kh = 0; kh < RECQ_DG_KH; ++kh) {
      const int ih = ih0 + kh * DH;
      if (ih < 0 || ih >= H) continue;
#pragma unroll
      for (int kw = 0; kw < RECQ_DG_KW; ++kw) {
        const int iw = iw0 + kw * DW;
        if (iw < 0 || iw >= W) continue;
        const float xv = RECQ_LOAD(xc, ih * W + iw);
#pragma unroll
        for (int j = 0; j < RECQ_DG_OCB; ++j) {
          acc[j] = fma(xv, RECQ_LOAD(wc, j * wstride + kh * RECQ_DG_KW + kw), acc[j]);
        }
      }
    }
  }
  __global RECQ_T* yp = y + (((size_t)n * OC + oc) * OH + oh) * OW + ow;
#pragma unroll
  for (int j = 0; j < RECQ_DG_OCB; ++j) {
    RECQ_STORE(yp, (size_t)j * OH * OW, recq_activate(acc[j], act, act_a, act_b));
  }
}
