// Winograd F(4x4, 3x3) convolution for CPUs (PoCL): 3x3 kernels, stride 1,
// unit dilation, groups 1, any padding. Output tiles of 4x4 read 6x6 input
// tiles; with the transforms of Lavin and Gray (interpolation points 0, +-1,
// +-2 and infinity)
//   Y_tile = A^T [ (G g G^T) .* (B^T d B) ] A,
// the 3x3 convolution becomes 36 independent products (one per position e
// of the 6x6 transformed tile), each over input channels:
//   M[e][k][t] = sum_c U[e][k][c] * V[e][c][t].
// Three kernels, run in order:
//   conv2d_winograd_input   X -> V [36][C][TP] (float scratch)
//   conv2d_winograd_gemm    U, V -> M [36][K][TP] (float scratch)
//   conv2d_winograd_output  M -> Y, adding the bias and a residual and
//                           applying the activation.
// T = N * TH * TW tiles (TH = ceil(OH/4), TW = ceil(OW/4)), tile
// t = (n * TH + th) * TW + tw, padded to TP (a multiple of VW) with zero
// tiles. Tiles are the vectors' lanes, as pixels are in conv2d_pointwise.cl:
// consecutive work-items of the transforms touch neighbouring tiles, whose
// input and output rows are 4 columns apart. U = G g G^T is computed by
// the lowering and packed as [36][ceil(K/OCB)][C][OCB], zero past K, so one
// item's block of U is a contiguous stream. U, V and M are float under
// either storage precision: the output transform's coefficients (up to 8
// per axis) would amplify half roundings of them.
//
// Build options: -DRECQ_WG_VW=8|16 (tiles per GEMM item, one vector) and
// -DRECQ_WG_OCB=4|8|16 (output channels per GEMM item).
#ifndef RECQ_WG_VW
#define RECQ_WG_VW 16
#endif
#ifndef RECQ_WG_OCB
#define RECQ_WG_OCB 8
#endif

#define WG_CAT_(a, b) a##b
#define WG_CAT(a, b) WG_CAT_(a, b)
#define floatV WG_CAT(float, RECQ_WG_VW)
#define floatB WG_CAT(float, RECQ_WG_OCB)
#define vloadV WG_CAT(vload, RECQ_WG_VW)
#define vstoreV WG_CAT(vstore, RECQ_WG_VW)
#define vloadB WG_CAT(vload, RECQ_WG_OCB)

// One item per (tile, input channel): the 6x6 input tile at rows
// th*4 - pt.., columns tw*4 - pl.. (zero outside the image), transformed to
// B^T d B and stored at V[e][c][t]; tiles from T to TP are zeros.
// Global size: (TP, C).
__kernel void conv2d_winograd_input(__global const RECQ_T* restrict x, __global float* restrict v,
                                    int N, int C, int H, int W, int TH, int TW, int TP, int pt,
                                    int pl) {
  const int t = get_global_id(0);
  const int c = get_global_id(1);
  if (t >= TP || c >= C) return;
  const int T = N * TH * TW;
  const int tc = min(t, T - 1);
  const int tw = tc % TW;
  const int th = (tc / TW) % TH;
  const int n = tc / (TW * TH);
  const int ih0 = th * 4 - pt;
  const int iw0 = tw * 4 - pl;
  const __global RECQ_T* xp = x + ((size_t)n * C + c) * H * W;
  float d[6][6];
  const bool inside = t < T && ih0 >= 0 && iw0 >= 0 && ih0 + 6 <= H && iw0 + 6 <= W;
  if (inside) {
#pragma unroll
    for (int i = 0; i < 6; ++i) {
#pragma unroll
      for (int j = 0; j < 6; ++j) d[i][j] = RECQ_LOAD(xp, (ih0 + i) * W + iw0 + j);
    }
  } else {
#pragma unroll
    for (int i = 0; i < 6; ++i) {
      const int ih = ih0 + i;
#pragma unroll
      for (int j = 0; j < 6; ++j) {
        const int iw = iw0 + j;
        const bool in = t < T && ih >= 0 && ih < H && iw >= 0 && iw < W;
        d[i][j] = in ? RECQ_LOAD(xp, ih * W + iw) : 0.0f;
      }
    }
  }
  // B^T d: the rows combined per column.
  float b[6][6];
#pragma unroll
  for (int j = 0; j < 6; ++j) {
    const float d0 = d[0][j], d1 = d[1][j], d2 = d[2][j], d3 = d[3][j], d4 = d[4][j],
                d5 = d[5][j];
    b[0][j] = 4.0f * d0 - 5.0f * d2 + d4;
    b[1][j] = -4.0f * (d1 + d2) + d3 + d4;
    b[2][j] = 4.0f * (d1 - d2) - d3 + d4;
    b[3][j] = 2.0f * (d3 - d1) - d2 + d4;
    b[4][j] = 2.0f * (d1 - d3) - d2 + d4;
    b[5][j] = 4.0f * d1 - 5.0f * d3 + d5;
  }
  // (B^T d) B: the columns combined per row.
  const size_t plane = (size_t)C * TP;
  __global float* vp = v + (size_t)c * TP + t;
#pragma unroll
  for (int i = 0; i < 6; ++i) {
    const float d0 = b[i][0], d1 = b[i][1], d2 = b[i][2], d3 = b[i][3], d4 = b[i][4],
                d5 = b[i][5];
    vp[(i * 6 + 0) * plane] = 4.0f * d0 - 5.0f * d2 + d4;
    vp[(i * 6 + 1) * plane] = -4.0f * (d1 + d2) + d3 + d4;
    vp[(i * 6 + 2) * plane] = 4.0f * (d1 - d2) - d3 + d4;
    vp[(i * 6 + 3) * plane] = 2.0f * (d3 - d1) - d2 + d4;
    vp[(i * 6 + 4) * plane] = 2.0f * (d1 - d3) - d2 + d4;
    vp[(i * 6 + 5) * plane] = 4.0f * d1 - 5.0f * d3 + d5;
  }
}

// The 36 products, register-blocked as conv2d_pointwise: each item computes
// VW tiles (one vector) by OCB output channels of one position e; per input
// channel one vector of V and one vload of OCB weights feed OCB FMAs.
// Channels past K are not written. V is the scratch's start and M lies at
// float offset m_offset in it (one buffer argument: the regions do not
// overlap). Global size: (TP/VW, ceil(K/OCB), 36).
__kernel void conv2d_winograd_gemm(__global float* scratch, __global const float* restrict up,
                                   int m_offset, int TP, int C, int K) {
  const int t0 = get_global_id(0) * RECQ_WG_VW;
  const int kb = get_global_id(1);
  const int e = get_global_id(2);
  const int k0 = kb * RECQ_WG_OCB;
  if (t0 >= TP || k0 >= K || e >= 36) return;
  const int blocks = (K + RECQ_WG_OCB - 1) / RECQ_WG_OCB;
  const __global float* vp = scratch + (size_t)e * C * TP + t0;
  const __global float* w = up + ((size_t)e * blocks + kb) * C * RECQ_WG_OCB;
  floatV acc[RECQ_WG_OCB];
#pragma unroll
  for (int j = 0; j < RECQ_WG_OCB; ++j) acc[j] = (floatV)(0.0f);
  for (int c = 0; c < C; ++c) {
    const floatV xv = vloadV(0, vp + (size_t)c * TP);
    const floatB wv = vloadB(c, w);
#pragma unroll
    for (int j = 0; j < RECQ_WG_OCB; ++j) acc[j] = fma((floatV)(wv[j]), xv, acc[j]);
  }
  __global float* mp = scratch + m_offset + ((size_t)e * K + k0) * TP + t0;
#pragma unroll
  for (int j = 0; j < RECQ_WG_OCB; ++j) {
    if (k0 + j < K) vstoreV(acc[j], 0, mp + (size_t)j * TP);
  }
}

// One item per (tile, output channel): A^T M A for the tile's 36 products,
// plus the bias, plus the residual `r` (Y's shape, NULL: none), then the
// activation; rows and columns past OH and OW are not written. `m` is read
// at float offset m_offset. Global size: (T, K).
__kernel void conv2d_winograd_output(__global const float* restrict m, int m_offset,
                                     __global const RECQ_T* restrict bias,
                                     __global const RECQ_T* restrict r,
                                     __global RECQ_T* restrict y, int N, int K, int OH, int OW,
                                     int TH, int TW, int TP, int act, float act_a, float act_b) {
  const int t = get_global_id(0);
  const int k = get_global_id(1);
  const int T = N * TH * TW;
  if (t >= T || k >= K) return;
  const int tw = t % TW;
  const int th = (t / TW) % TH;
  const int n = t / (TW * TH);
  const size_t plane = (size_t)K * TP;
  const __global float* mp = m + m_offset + (size_t)k * TP + t;
  // A^T M: the six rows combined per column.
  float a[4][6];
#pragma unroll
  for (int j = 0; j < 6; ++j) {
    const float m0 = mp[(0 * 6 + j) * plane], m1 = mp[(1 * 6 + j) * plane],
                m2 = mp[(2 * 6 + j) * plane], m3 = mp[(3 * 6 + j) * plane],
                m4 = mp[(4 * 6 + j) * plane], m5 = mp[(5 * 6 + j) * plane];
    const float s12 = m1 + m2, d12 = m1 - m2, s34 = m3 + m4, d34 = m3 - m4;
    a[0][j] = m0 + s12 + s34;
    a[1][j] = d12 + 2.0f * d34;
    a[2][j] = s12 + 4.0f * s34;
    a[3][j] = d12 + 8.0f * d34 + m5;
  }
  const float b = bias ? RECQ_LOAD(bias, k) : 0.0f;
  const int oh0 = th * 4, ow0 = tw * 4;
  const size_t base = ((size_t)n * K + k) * OH * OW;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int oh = oh0 + i;
    const float m0 = a[i][0], m1 = a[i][1], m2 = a[i][2], m3 = a[i][3], m4 = a[i][4],
                m5 = a[i][5];
    const float s12 = m1 + m2, d12 = m1 - m2, s34 = m3 + m4, d34 = m3 - m4;
    float o[4];
    o[0] = m0 + s12 + s34;
    o[1] = d12 + 2.0f * d34;
    o[2] = s12 + 4.0f * s34;
    o[3] = d12 + 8.0f * d34 + m5;
    const size_t row = base + (size_t)oh * OW;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int ow = ow0 + j;
      if (oh < OH && ow < OW) {
        float s = o[j] + b;
        if (r) s += RECQ_LOAD(r, row + ow);
        RECQ_STORE(y, row + ow, recq_activate(s, act, act_a, act_b));
      }
    }
  }
}
