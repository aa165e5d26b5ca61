// Winograd F(4x4, 3x3) convolution for CPUs (PoCL): 3x3 kernels, stride 1,
// unit dilation, groups 1, any padding. Output tiles of 4x4 read 6x6 input
// tiles; with the transforms of Lavin and Gray (interpolation points 0, +-1,
// +-2 and infinity)
//   Y_tile = A^T [ (G g G^T) .* (B^T d B) ] A,
// the 3x3 convolution becomes 36 independent products (one per position e
// of the 6x6 transformed tile), each over input channels:
//   M[e][t][k] = sum_c V[e][t][c] * U[e][c][k].
// Three kernels, run in order:
//   conv2d_winograd_input   X -> V [36][T][C] (float scratch)
//   conv2d_winograd_gemm    V, U -> M [36][T][KP] (float scratch)
//   conv2d_winograd_output  M -> Y, adding the bias and a residual and
//                           applying the activation.
// T = N * TH * TW tiles (TH = ceil(OH/4), TW = ceil(OW/4)), tile
// t = (n * TH + th) * TW + tw. U = G g G^T is computed by the lowering and
// packed as [36][KP/VW][C][VW], zero past K (KP = K rounded up to VW), so one
// item's panel of U is a contiguous stream, as in matmul_packed.cl. U, V and
// M are float under either storage precision: the output transform's
// coefficients (up to 8 per axis) would amplify half roundings of them.
//
// Build options: -DRECQ_WG_VW=8|16 (output channels per GEMM item, one
// vector) and -DRECQ_WG_RM=1|4|8 (tiles per GEMM item).
#ifndef RECQ_WG_VW
#define RECQ_WG_VW 16
#endif
#ifndef RECQ_WG_RM
#define RECQ_WG_RM 8
#endif

#define WG_CAT_(a, b) a##b
#define WG_CAT(a, b) WG_CAT_(a, b)
#define floatV WG_CAT(float, RECQ_WG_VW)
#define vloadV WG_CAT(vload, RECQ_WG_VW)
#define vstoreV WG_CAT(vstore, RECQ_WG_VW)

// One item per (input channel, tile): the 6x6 input tile at rows
// th*4 - pt.., columns tw*4 - pl.. (zero outside the image), transformed to
// B^T d B and stored at V[e][t][c]. Global size: (C, T).
__kernel void conv2d_winograd_input(__global const RECQ_T* restrict x, __global float* restrict v,
                                    int N, int C, int H, int W, int TH, int TW, int pt, int pl) {
  const int c = get_global_id(0);
  const int t = get_global_id(1);
  const int T = N * TH * TW;
  if (c >= C || t >= T) return;
  const int tw = t % TW;
  const int th = (t / TW) % TH;
  const int n = t / (TW * TH);
  const int ih0 = th * 4 - pt;
  const int iw0 = tw * 4 - pl;
  const __global RECQ_T* xp = x + ((size_t)n * C + c) * H * W;
  float d[6][6];
  const bool inside = ih0 >= 0 && iw0 >= 0 && ih0 + 6 <= H && iw0 + 6 <= W;
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
        d[i][j] = (ih >= 0 && ih < H && iw >= 0 && iw < W) ? RECQ_LOAD(xp, ih * W + iw) : 0.0f;
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
  const size_t plane = (size_t)T * C;
  __global float* vp = v + (size_t)t * C + c;
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

// The 36 products, register-blocked as matmul_packed: each item computes RM
// tiles by VW output channels of one position e, four input channels at a
// time (one vload4 per tile feeds 4 x RM FMAs). Tiles past T read tile T-1
// and are not written. V is the scratch's start and M lies at float offset
// m_offset in it (one buffer argument: the regions do not overlap).
// Global size: (ceil(T/RM), KP/VW, 36).
__kernel void conv2d_winograd_gemm(__global float* scratch, __global const float* restrict up,
                                   int m_offset, int T, int C, int KP) {
  const __global float* v = scratch;
  __global float* m = scratch + m_offset;
  const int t0 = get_global_id(0) * RECQ_WG_RM;
  const int panel = get_global_id(1);
  const int e = get_global_id(2);
  const int panels = KP / RECQ_WG_VW;
  if (t0 >= T || panel >= panels || e >= 36) return;
  const __global float* bq = up + ((size_t)e * panels + panel) * C * RECQ_WG_VW;
  const __global float* ar[RECQ_WG_RM];
#pragma unroll
  for (int i = 0; i < RECQ_WG_RM; ++i) ar[i] = v + ((size_t)e * T + min(t0 + i, T - 1)) * C;
  floatV acc[RECQ_WG_RM];
#pragma unroll
  for (int i = 0; i < RECQ_WG_RM; ++i) acc[i] = (floatV)(0.0f);
  int c = 0;
  for (; c + 4 <= C; c += 4) {
    const __global float* bk = bq + (size_t)c * RECQ_WG_VW;
    const floatV b0 = vloadV(0, bk), b1 = vloadV(1, bk), b2 = vloadV(2, bk), b3 = vloadV(3, bk);
#pragma unroll
    for (int i = 0; i < RECQ_WG_RM; ++i) {
      const float4 av = vload4(0, ar[i] + c);
      acc[i] = fma((floatV)(av.x), b0, acc[i]);
      acc[i] = fma((floatV)(av.y), b1, acc[i]);
      acc[i] = fma((floatV)(av.z), b2, acc[i]);
      acc[i] = fma((floatV)(av.w), b3, acc[i]);
    }
  }
  for (; c < C; ++c) {
    const floatV bv = vloadV(0, bq + (size_t)c * RECQ_WG_VW);
#pragma unroll
    for (int i = 0; i < RECQ_WG_RM; ++i) acc[i] = fma((floatV)(ar[i][c]), bv, acc[i]);
  }
  __global float* mp = m + ((size_t)e * T + t0) * KP + panel * RECQ_WG_VW;
#pragma unroll
  for (int i = 0; i < RECQ_WG_RM; ++i) {
    if (t0 + i >= T) break;
    vstoreV(acc[i], 0, mp + (size_t)i * KP);
  }
}

// One item per (output channel, tile): A^T M A for the tile's 36 products,
// plus the bias, plus the residual `r` (Y's shape, NULL: none), then the
// activation; rows and columns past OH and OW are not written. `m` is read
// at float offset m_offset. Global size: (K, T).
__kernel void conv2d_winograd_output(__global const float* restrict m, int m_offset,
                                     __global const RECQ_T* restrict bias,
                                     __global const RECQ_T* restrict r,
                                     __global RECQ_T* restrict y, int N, int K, int KP, int OH,
                                     int OW, int TH, int TW, int act, float act_a, float act_b) {
  const int k = get_global_id(0);
  const int t = get_global_id(1);
  const int T = N * TH * TW;
  if (k >= K || t >= T) return;
  const int tw = t % TW;
  const int th = (t / TW) % TH;
  const int n = t / (TW * TH);
  const size_t plane = (size_t)T * KP;
  const __global float* mp = m + m_offset + (size_t)t * KP + k;
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
    if (oh >= OH) break;
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
      if (ow >= OW) break;
      float s = o[j] + b;
      if (r) s += RECQ_LOAD(r, row + ow);
      RECQ_STORE(y, row + ow, recq_activate(s, act, act_a, act_b));
    }
  }
}
