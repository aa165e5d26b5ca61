// Depthwise KxK convolution (groups == C == OC) on the CPU family: square
// kernels with unit dilation, equal strides S of 1 or 2, any padding, optional
// bias, fused activation. Each work-item computes VW consecutive outputs of
// one output row of one channel: per kernel row it reads the (VW-1)*S+K input
// columns those outputs touch once into private memory (zero outside the
// input), and takes each tap's VW inputs from there with constant indices, so
// the compiler turns them into lane shuffles of float8 / float16 FMAs.
// A partial last strip of a row is moved back to end at OW (strips overlap and
// write identical values); rows narrower than VW are stored lane by lane.
// Build options: -DRECQ_DW_K=K, -DRECQ_DW_S=1|2, -DRECQ_DW_VW=8|16.
#ifndef RECQ_DW_K
#define RECQ_DW_K 5
#endif
#ifndef RECQ_DW_S
#define RECQ_DW_S 1
#endif
#ifndef RECQ_DW_VW
#define RECQ_DW_VW 8
#endif

#if RECQ_DW_VW == 16
#define RECQ_DW_V float16
#define RECQ_DW_VLOAD vload16
#define RECQ_DW_VSTORE vstore16
#define RECQ_DW_STORE RECQ_STORE16
#define RECQ_DW_LOAD RECQ_LOAD16
#define RECQ_DW_ACTIVATE recq_activate16
#define RECQ_DW_ACTIVATE_INLINE recq_activate_inline16
#elif RECQ_DW_VW == 8
#define RECQ_DW_V float8
#define RECQ_DW_VLOAD vload8
#define RECQ_DW_VSTORE vstore8
#define RECQ_DW_STORE RECQ_STORE8
#define RECQ_DW_LOAD RECQ_LOAD8
#define RECQ_DW_ACTIVATE recq_activate8
#define RECQ_DW_ACTIVATE_INLINE recq_activate_inline8
#else
#error "RECQ_DW_VW must be 8 or 16"
#endif

// Input columns one kernel row of a strip reads.
#define RECQ_DW_SPAN ((RECQ_DW_VW - 1) * RECQ_DW_S + RECQ_DW_K)

// Global size: (ceil(OW/VW), OH, N*C), rounded up to the local size.
// w: [C][K][K]; bias: [C] or NULL.
__kernel void conv2d_depthwise_kxk(__global const RECQ_T* restrict x,
                                   __global const RECQ_T* restrict w,
                                   __global const RECQ_T* restrict bias,
                                   __global RECQ_T* restrict y, int N, int C, int H, int W, int OH,
                                   int OW, int PT, int PL, int act, float act_a, float act_b) {
  int ow0 = get_global_id(0) * RECQ_DW_VW;
  const int oh = get_global_id(1);
  const int nc = get_global_id(2);
  if (ow0 >= OW || oh >= OH || nc >= N * C) return;
  if (OW >= RECQ_DW_VW) ow0 = min(ow0, OW - RECQ_DW_VW);
  const int c = nc % C;
  const __global RECQ_T* xc = x + (size_t)nc * H * W;
  const __global RECQ_T* wc = w + c * (RECQ_DW_K * RECQ_DW_K);
  RECQ_DW_V acc = (RECQ_DW_V)(bias ? RECQ_LOAD(bias, c) : 0.0f);
  const int q = ow0 * RECQ_DW_S - PL;  // input column of tap 0 of lane 0
  const bool inside = q >= 0 && q + RECQ_DW_SPAN <= W;
  for (int kh = 0; kh < RECQ_DW_K; ++kh) {
    const int ih = oh * RECQ_DW_S - PT + kh;
    if (ih < 0 || ih >= H) continue;
    const __global RECQ_T* row = xc + (size_t)ih * W;
#if RECQ_DW_S == 1
    // Stride 1 inside the row: each tap's VW inputs are one unaligned
    // vector load (the cache line is already there for the next tap).
    if (inside) {
#pragma unroll
      for (int kw = 0; kw < RECQ_DW_K; ++kw) {
        acc = fma((RECQ_DW_V)(RECQ_LOAD(wc, kh * RECQ_DW_K + kw)), RECQ_DW_LOAD(row + q + kw, 0),
                  acc);
      }
      continue;
    }
#endif
    float seg[RECQ_DW_SPAN];
    if (inside) {
#pragma unroll
      for (int j = 0; j < RECQ_DW_SPAN; ++j) seg[j] = RECQ_LOAD(row, q + j);
    } else {
#pragma unroll
      for (int j = 0; j < RECQ_DW_SPAN; ++j) {
        const int col = q + j;
        seg[j] = col >= 0 && col < W ? RECQ_LOAD(row, col) : 0.0f;
      }
    }
#pragma unroll
    for (int kw = 0; kw < RECQ_DW_K; ++kw) {
      float tap[RECQ_DW_VW];
#pragma unroll
      for (int i = 0; i < RECQ_DW_VW; ++i) tap[i] = seg[kw + RECQ_DW_S * i];
      acc = fma((RECQ_DW_V)(RECQ_LOAD(wc, kh * RECQ_DW_K + kw)), RECQ_DW_VLOAD(0, tap), acc);
    }
  }
  const RECQ_DW_V v = RECQ_DW_ACTIVATE(acc, act, act_a, act_b);
  __global RECQ_T* yp = y + ((size_t)nc * OH + oh) * OW + ow0;
  if (OW >= RECQ_DW_VW) {
    RECQ_DW_STORE(yp, 0, v);
  } else {
    float t[RECQ_DW_VW];
    RECQ_DW_VSTORE(v, 0, t);
    for (int i = 0; i < OW; ++i) RECQ_STORE(yp, i, t[i]);
  }
}

// conv2d_depthwise_staged: the same convolution, each work-item computing
// RB output rows of one channel, every strip of each. The (RB-1)*S+K input
// rows those read are first copied with their zero padding into a private
// buffer of WP = (max(OW, VW)-1)*S+K columns a row, so that each tap's VW
// inputs are one unaligned vector load (stride 1) or the even lanes of two
// (stride 2), with no bounds checks. conv2d_depthwise_kxk assembles the
// strips at a row's edges and rows narrower than a strip lane by lane; on
// MobileNet V3's and EfficientNet's 14x14 and 7x7 planes every strip is
// such a strip.
// Rows narrower than a strip (OW < VW) are stored as whole vectors that run
// into the rows after them where this item writes those rows later (in
// order, so that their own stores leave the right values); elsewhere lane
// by lane.
// Build options: RECQ_DW_K, RECQ_DW_S, RECQ_DW_VW as above, and
// -DRECQ_DW_BUF=F, the buffer's floats: the lowering keeps
// ((RB-1)*S+K)*WP <= F.
#ifndef RECQ_DW_BUF
#define RECQ_DW_BUF 4096
#endif

// Global size: (N*C, ceil(OH/RB), 1), rounded up to the local size.
__kernel void conv2d_depthwise_staged(__global const RECQ_T* restrict x,
                                      __global const RECQ_T* restrict w,
                                      __global const RECQ_T* restrict bias,
                                      __global RECQ_T* restrict y, int N, int C, int H, int W,
                                      int OH, int OW, int PT, int PL, int RB, int act, float act_a,
                                      float act_b) {
  const int nc = get_global_id(0);
  const int oh0 = get_global_id(1) * RB;
  if (nc >= N * C || oh0 >= OH) return;
  const int c = nc % C;
  const int rows = min(RB, OH - oh0);
  const int WP = (max(OW, RECQ_DW_VW) - 1) * RECQ_DW_S + RECQ_DW_K;
  // Stride 2 reads 2*VW columns from a tap's first, the last odd lane one
  // past its row; the rows' zeros are written 8 columns at a time.
  float buf[RECQ_DW_BUF + 2 * RECQ_DW_VW];
  // Padded column j holds input column j - PL: columns [PL, hi) come from
  // the input, the rest are zero. Each row is written in vectors: zeros
  // from column 0 past PL, the input in chunks of 8 (the last moved back to
  // end at hi; rows of fewer than 8 columns read past their end where the
  // tensor goes on), then zeros from hi, which may run into the next row's
  // columns before that row is written.
  const int lo = min(PL, WP), n = min(PL + W, WP) - lo, hi = lo + n;
  const size_t end = (size_t)N * C * H * W;
  for (int r = 0; r < (rows - 1) * RECQ_DW_S + RECQ_DW_K; ++r) {
    float* dst = buf + r * WP;
    const int ih = oh0 * RECQ_DW_S - PT + r;
    if (ih < 0 || ih >= H) {
      for (int j = 0; j < WP; j += 8) vstore8((float8)(0.0f), 0, dst + j);
      continue;
    }
    for (int j = 0; j < lo; j += 8) vstore8((float8)(0.0f), 0, dst + j);
    const size_t at = ((size_t)nc * H + ih) * W;
    const __global RECQ_T* src = x + at;
    if (n >= 8) {
      for (int j = 0; j < n; j += 8) {
        const int q = min(j, n - 8);
        vstore8(RECQ_LOAD8(src + q, 0), 0, dst + lo + q);
      }
    } else if (at + 8 <= end) {
      vstore8(RECQ_LOAD8(src, 0), 0, dst + lo);
    } else {
      for (int j = 0; j < n; ++j) dst[lo + j] = RECQ_LOAD(src, j);
    }
    for (int j = hi; j < WP; j += 8) vstore8((float8)(0.0f), 0, dst + j);
  }
  const __global RECQ_T* wc = w + c * (RECQ_DW_K * RECQ_DW_K);
  const float b = bias ? RECQ_LOAD(bias, c) : 0.0f;
  const int strips = (OW + RECQ_DW_VW - 1) / RECQ_DW_VW;
  // Rows a vector store at a row's start reaches when OW < VW.
  const int spill = (RECQ_DW_VW - 1) / OW;
  for (int j = 0; j < rows; ++j) {
    __global RECQ_T* yr = y + ((size_t)nc * OH + oh0 + j) * OW;
    for (int s = 0; s < strips; ++s) {
      const int ow0 = OW >= RECQ_DW_VW ? min(s * RECQ_DW_VW, OW - RECQ_DW_VW) : 0;
      RECQ_DW_V acc = (RECQ_DW_V)(b);
#pragma unroll
      for (int kh = 0; kh < RECQ_DW_K; ++kh) {
        const float* br = buf + (j * RECQ_DW_S + kh) * WP + ow0 * RECQ_DW_S;
#pragma unroll
        for (int kw = 0; kw < RECQ_DW_K; ++kw) {
#if RECQ_DW_S == 1
          const RECQ_DW_V t = RECQ_DW_VLOAD(0, br + kw);
#elif RECQ_DW_VW == 8
          const float8 t = vload16(0, br + kw).even;
#else
          const float16 t = (float16)(vload16(0, br + kw).even, vload16(0, br + kw + 16).even);
#endif
          acc = fma((RECQ_DW_V)(RECQ_LOAD(wc, kh * RECQ_DW_K + kw)), t, acc);
        }
      }
      const RECQ_DW_V v = RECQ_DW_ACTIVATE_INLINE(acc, act, act_a, act_b);
      if (OW >= RECQ_DW_VW || j + spill < rows) {
        RECQ_DW_STORE(yr + ow0, 0, v);
      } else {
        float t[RECQ_DW_VW];
        RECQ_DW_VSTORE(v, 0, t);
        for (int i = 0; i < OW; ++i) RECQ_STORE(yr, i, t[i]);
      }
    }
  }
}
