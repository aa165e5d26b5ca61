// Winograd F(4x4, 3x3) convolution for CPUs (PoCL): 3x3 kernels, stride 1,
// unit dilation, groups 1, any padding. Output tiles of 4x4 read 6x6 input
// tiles; with the transforms of Lavin and Gray (interpolation points 0, +-1,
// +-2 and infinity)
//   Y_tile = A^T [ (G g G^T) .* (B^T d B) ] A,
// the 3x3 convolution becomes 36 independent products (one per position e
// of the 6x6 transformed tile), each over input channels:
//   M[e][k][t] = sum_c U[e][k][c] * V[e][c][t].
// Four kernels, run in order:
//   conv2d_pad_columns      X -> XP, rows copied to zero-padded rows of Wp
//                           columns (conv2d_cpu.cl), at the scratch's start
//   conv2d_winograd_input   XP -> V [36][C][TP] (float scratch)
//   conv2d_winograd_gemm    U, V -> M [36][K][TP] (float scratch)
//   conv2d_winograd_output  M -> Y, adding the bias and a residual and
//                           applying the activation.
// Tiles: TH = ceil(OH/4) rows of TW = ceil(OW/4), each row padded to TWP
// (a multiple of 8) so that the transforms take whole vectors of 8 tiles of
// one row; tile t = (n * TH + th) * TWP + tw, and TP is N * TH * TWP
// rounded up to 16 (the widest GEMM vector). Tiles past TW in a row are
// transformed from the padded copy's zeros (or the row's last columns) and
// never stored; tiles past N * TH * TWP are not written, and the products
// the GEMM forms from whatever the scratch holds there are never read.
// Tiles are the vectors' lanes, as pixels are in conv2d_pointwise.cl. U =
// G g G^T is computed by
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
#define vloadV WG_CAT(vload, RECQ_WG_VW)
#define vstoreV WG_CAT(vstore, RECQ_WG_VW)

// One item per (row of 8 tiles, tile row th, image and channel nc): the
// 6x6 input tiles of tiles tw0 .. tw0+7 (tw0 = 8 * g), read from `xp`, the
// input's rows copied to column PL of zero-filled rows of Wp >= 4 * TWP + 2
// columns (conv2d_pad_columns), so that each of the six rows is two
// vector loads whose lanes are split four ways: lane j of column vector d
// is the input at column 4 * (tw0 + j) + d. Rows above and below the image
// are zero vectors. B^T d B is computed on whole vectors (lane j: tile
// tw0 + j) and stored at V[e][c][t0 ..], t0 = (n * TH + th) * TWP + tw0.
// Global size: (TWP / 8, TH, N * C).
__kernel void conv2d_winograd_input(__global float* scratch, int v_offset, int N, int C, int H,
                                    int Wp, int TH, int TWP, int TP, int pt) {
  const int g = get_global_id(0);
  const int th = get_global_id(1);
  const int nc = get_global_id(2);
  if (g * 8 >= TWP || th >= TH || nc >= N * C) return;
  const int n = nc / C;
  const int c = nc - n * C;
  const __global RECQ_T* xp = (const __global RECQ_T*)scratch + (size_t)nc * H * Wp + g * 32;
  const int ih0 = th * 4 - pt;
  float8 d[6][6];
#pragma unroll
  for (int i = 0; i < 6; ++i) {
    const int ih = ih0 + i;
    if (ih < 0 || ih >= H) {
#pragma unroll
      for (int j = 0; j < 6; ++j) d[i][j] = (float8)(0.0f);
      continue;
    }
    const __global RECQ_T* row = xp + (size_t)ih * Wp;
    const float16 a = RECQ_LOAD16(row, 0);
    const float16 b = RECQ_LOAD16(row, 1);
    const float e0 = RECQ_LOAD(row, 32), e1 = RECQ_LOAD(row, 33);
    d[i][0] = (float8)(a.s048c, b.s048c);
    d[i][1] = (float8)(a.s159d, b.s159d);
    d[i][2] = (float8)(a.s26ae, b.s26ae);
    d[i][3] = (float8)(a.s37bf, b.s37bf);
    d[i][4] = (float8)(a.s48c, b.s048c, e0);
    d[i][5] = (float8)(a.s59d, b.s159d, e1);
  }
  // B^T d: the rows combined per column.
  float8 bt[6][6];
#pragma unroll
  for (int j = 0; j < 6; ++j) {
    const float8 d0 = d[0][j], d1 = d[1][j], d2 = d[2][j], d3 = d[3][j], d4 = d[4][j],
                 d5 = d[5][j];
    bt[0][j] = 4.0f * d0 - 5.0f * d2 + d4;
    bt[1][j] = -4.0f * (d1 + d2) + d3 + d4;
    bt[2][j] = 4.0f * (d1 - d2) - d3 + d4;
    bt[3][j] = 2.0f * (d3 - d1) - d2 + d4;
    bt[4][j] = 2.0f * (d1 - d3) - d2 + d4;
    bt[5][j] = 4.0f * d1 - 5.0f * d3 + d5;
  }
  // (B^T d) B: the columns combined per row.
  const size_t plane = (size_t)C * TP;
  __global float* vp =
      scratch + v_offset + (size_t)c * TP + ((size_t)n * TH + th) * TWP + g * 8;
#pragma unroll
  for (int i = 0; i < 6; ++i) {
    const float8 d0 = bt[i][0], d1 = bt[i][1], d2 = bt[i][2], d3 = bt[i][3], d4 = bt[i][4],
                 d5 = bt[i][5];
    vstore8(4.0f * d0 - 5.0f * d2 + d4, 0, vp + (i * 6 + 0) * plane);
    vstore8(-4.0f * (d1 + d2) + d3 + d4, 0, vp + (i * 6 + 1) * plane);
    vstore8(4.0f * (d1 - d2) - d3 + d4, 0, vp + (i * 6 + 2) * plane);
    vstore8(2.0f * (d3 - d1) - d2 + d4, 0, vp + (i * 6 + 3) * plane);
    vstore8(2.0f * (d1 - d3) - d2 + d4, 0, vp + (i * 6 + 4) * plane);
    vstore8(4.0f * d1 - 5.0f * d3 + d5, 0, vp + (i * 6 + 5) * plane);
  }
}

// The 36 products, register-blocked as conv2d_pointwise: each item computes
// VW tiles (one vector) by OCB output channels of one position e; per input
// channel one vector of V feeds OCB FMAs, each weight broadcast from memory
// into its FMA (a vload of the OCB weights and a shuffle per FMA ran
// slower).
// Channels past K are not written. V and M lie at float offsets v_offset
// and m_offset of the scratch (one buffer argument: the regions do not
// overlap). Global size: (TP/VW, ceil(K/OCB), 36).
__kernel void conv2d_winograd_gemm(__global float* scratch, __global const float* restrict up,
                                   int v_offset, int m_offset, int TP, int C, int K) {
  const int t0 = get_global_id(0) * RECQ_WG_VW;
  const int kb = get_global_id(1);
  const int e = get_global_id(2);
  const int k0 = kb * RECQ_WG_OCB;
  if (t0 >= TP || k0 >= K || e >= 36) return;
  const int blocks = (K + RECQ_WG_OCB - 1) / RECQ_WG_OCB;
  const __global float* vp = scratch + v_offset + (size_t)e * C * TP + t0;
  const __global float* w = up + ((size_t)e * blocks + kb) * C * RECQ_WG_OCB;
  floatV acc[RECQ_WG_OCB];
#pragma unroll
  for (int j = 0; j < RECQ_WG_OCB; ++j) acc[j] = (floatV)(0.0f);
  for (int c = 0; c < C; ++c) {
    const floatV xv = vloadV(0, vp + (size_t)c * TP);
    const __global float* wc = w + (size_t)c * RECQ_WG_OCB;
#pragma unroll
    for (int j = 0; j < RECQ_WG_OCB; ++j) acc[j] = fma((floatV)(wc[j]), xv, acc[j]);
  }
  __global float* mp = scratch + m_offset + ((size_t)e * K + k0) * TP + t0;
#pragma unroll
  for (int j = 0; j < RECQ_WG_OCB; ++j) {
    if (k0 + j < K) vstoreV(acc[j], 0, mp + (size_t)j * TP);
  }
}

// Four vectors of 8 tiles' output columns 0..3, interleaved into one row of
// their 32 output pixels: h selects pixels 0..15 (tiles 0..3) or 16..31.
#define WG_ROW16(o0, o1, o2, o3, l0, l1, l2, l3)                                             \
  (float16)(o0.l0, o1.l0, o2.l0, o3.l0, o0.l1, o1.l1, o2.l1, o3.l1, o0.l2, o1.l2, o2.l2,     \
            o3.l2, o0.l3, o1.l3, o2.l3, o3.l3)

// One item per (row of 8 tiles, tile row th, image and output channel nk):
// A^T M A for the 8 tiles' 36 products as vectors (lane j: tile tw0 + j),
// then per output row the 32 pixels interleaved from the four column
// vectors, plus the bias, plus the residual `r` (Y's shape, NULL: none),
// the activation, and whole-vector stores where the 16 pixels lie in the
// row. Rows and columns past OH and OW are not written. `m` is read at
// float offset m_offset. Global size: (TWP / 8, TH, N * K).
__kernel void conv2d_winograd_output(__global const float* restrict m, int m_offset,
                                     __global const RECQ_T* restrict bias,
                                     __global const RECQ_T* restrict r,
                                     __global RECQ_T* restrict y, int N, int K, int OH, int OW,
                                     int TH, int TWP, int TP, int act, float act_a, float act_b) {
  const int g = get_global_id(0);
  const int th = get_global_id(1);
  const int nk = get_global_id(2);
  if (g * 8 >= TWP || th >= TH || nk >= N * K) return;
  const int n = nk / K;
  const int k = nk - n * K;
  const size_t plane = (size_t)K * TP;
  const __global float* mp =
      m + m_offset + (size_t)k * TP + ((size_t)n * TH + th) * TWP + g * 8;
  // A^T M: the six rows combined per column.
  float8 a[4][6];
#pragma unroll
  for (int j = 0; j < 6; ++j) {
    const float8 m0 = vload8(0, mp + (0 * 6 + j) * plane), m1 = vload8(0, mp + (1 * 6 + j) * plane),
                 m2 = vload8(0, mp + (2 * 6 + j) * plane), m3 = vload8(0, mp + (3 * 6 + j) * plane),
                 m4 = vload8(0, mp + (4 * 6 + j) * plane), m5 = vload8(0, mp + (5 * 6 + j) * plane);
    const float8 s12 = m1 + m2, d12 = m1 - m2, s34 = m3 + m4, d34 = m3 - m4;
    a[0][j] = m0 + s12 + s34;
    a[1][j] = d12 + 2.0f * d34;
    a[2][j] = s12 + 4.0f * s34;
    a[3][j] = d12 + 8.0f * d34 + m5;
  }
  const float b = bias ? RECQ_LOAD(bias, k) : 0.0f;
  const int ow0 = g * 32;
  const size_t base = ((size_t)n * K + k) * OH * OW;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int oh = th * 4 + i;
    if (oh >= OH) break;
    const float8 m0 = a[i][0], m1 = a[i][1], m2 = a[i][2], m3 = a[i][3], m4 = a[i][4],
                 m5 = a[i][5];
    const float8 s12 = m1 + m2, d12 = m1 - m2, s34 = m3 + m4, d34 = m3 - m4;
    const float8 o0 = m0 + s12 + s34;
    const float8 o1 = d12 + 2.0f * d34;
    const float8 o2 = s12 + 4.0f * s34;
    const float8 o3 = d12 + 8.0f * d34 + m5;
    const size_t row = base + (size_t)oh * OW;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int ow = ow0 + 16 * h;
      if (ow >= OW) break;
      float16 s = (h == 0 ? WG_ROW16(o0, o1, o2, o3, s0, s1, s2, s3)
                          : WG_ROW16(o0, o1, o2, o3, s4, s5, s6, s7)) +
                  b;
      const size_t at = row + ow;
      if (ow + 16 <= OW) {
        if (r) s += RECQ_LOAD16(r + at, 0);
        RECQ_STORE16(y + at, 0, recq_activate_inline16(s, act, act_a, act_b));
      } else {
        float v[16];
        vstore16(s, 0, v);
        for (int j = 0; ow + j < OW; ++j) {
          const float e = v[j] + (r ? RECQ_LOAD(r, at + j) : 0.0f);
          RECQ_STORE(y, at + j, recq_activate(e, act, act_a, act_b));
        }
      }
    }
  }
}
