// NCHW pooling. avg_pool: global size (OW, OH, N * C); max_pool_rows
// (below): 8 outputs of a row per work-item.
// Padding never contributes to a max; for averages it counts only when
// count_include_pad is set (ONNX semantics, the window clipped to the padded
// extent).
__kernel void avg_pool(__global const RECQ_T* restrict x, __global RECQ_T* restrict y, int H, int W,
                       int OH, int OW, int KH, int KW, int SH, int SW, int PT, int PL, int PB,
                       int PR, int DH, int DW, int count_include_pad, int act, float act_a,
                       float act_b) {
  const int ow = get_global_id(0);
  const int oh = get_global_id(1);
  const int nc = get_global_id(2);
  if (ow >= OW || oh >= OH) return;
  const __global RECQ_T* xc = x + (size_t)nc * H * W;
  float sum = 0.0f;
  int count = 0;
  for (int kh = 0; kh < KH; ++kh) {
    const int ih = oh * SH - PT + kh * DH;
    if (ih < -PT || ih >= H + PB) continue;
    for (int kw = 0; kw < KW; ++kw) {
      const int iw = ow * SW - PL + kw * DW;
      if (iw < -PL || iw >= W + PR) continue;
      const bool inside = ih >= 0 && ih < H && iw >= 0 && iw < W;
      if (inside) sum += RECQ_LOAD(xc, ih * W + iw);
      if (inside || count_include_pad) ++count;
    }
  }
  RECQ_STORE(y, ((size_t)nc * OH + oh) * OW + ow, recq_activate(count > 0 ? sum / count : 0.0f, act, act_a, act_b));
}

// Mean over the `inner` trailing elements of each of the N * C rows.
// Global size: (N * C).
__kernel void global_avg_pool(__global const RECQ_T* restrict x, __global RECQ_T* restrict y,
                              int inner, int act, float act_a, float act_b) {
  const int row = get_global_id(0);
  const __global RECQ_T* xr = x + (size_t)row * inner;
  float sum = 0.0f;
  for (int i = 0; i < inner; ++i) sum += RECQ_LOAD(xr, i);
  RECQ_STORE(y, row, recq_activate(sum / inner, act, act_a, act_b));
}

// global_avg_pool's contract with one work-group of RECQ_GAP_LOCAL (a power
// of two) work-items per row, reduced in local memory: for GPUs, where one
// item per row runs `inner` serial steps.
// Global size: (N * C * RECQ_GAP_LOCAL); local (RECQ_GAP_LOCAL).
#ifndef RECQ_GAP_LOCAL
#define RECQ_GAP_LOCAL 64
#endif
__kernel void global_avg_pool_rows(__global const RECQ_T* restrict x, __global RECQ_T* restrict y,
                                   int inner, int act, float act_a, float act_b) {
  __local float red[RECQ_GAP_LOCAL];
  const int lid = get_local_id(0);
  const int row = get_group_id(0);
  const __global RECQ_T* xr = x + (size_t)row * inner;
  float sum = 0.0f;
  for (int i = lid; i < inner; i += RECQ_GAP_LOCAL) sum += RECQ_LOAD(xr, i);
  red[lid] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = RECQ_GAP_LOCAL / 2; s > 0; s >>= 1) {
    if (lid < s) red[lid] += red[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) RECQ_STORE(y, row, recq_activate(red[0] / inner, act, act_a, act_b));
}

// The strips of 8 outputs of max_pool_rows and avg_pool_rows.
// recq_pool_taps8: one tap's 8 inputs, lane i at column iw + i * SW of
// `row` (W wide): one vector load where all lie inside the row (stride 1:
// vload8; stride 2: the even lanes of a vload16), else lane by lane with
// columns outside reading `pad`.
inline float8 recq_pool_taps8(const __global RECQ_T* row, int iw, int SW, int W, float pad) {
  if (SW == 1 && iw >= 0 && iw + 8 <= W) return RECQ_LOAD8(row + iw, 0);
  if (SW == 2 && iw >= 0 && iw + 16 <= W) return RECQ_LOAD16(row + iw, 0).even;
  float t[8];
  for (int i = 0; i < 8; ++i) {
    const int col = iw + i * SW;
    t[i] = col >= 0 && col < W ? RECQ_LOAD(row, col) : pad;
  }
  return vload8(0, t);
}

// recq_pool_strip: the first output column of this work-item's strip
// (dimension 0), the last strip moved back to end at OW where OW >= 8; -1
// past the row.
inline int recq_pool_strip(int OW) {
  const int ow0 = get_global_id(0) * 8;
  if (ow0 >= OW) return -1;
  return OW >= 8 ? min(ow0, OW - 8) : ow0;
}

// recq_pool_store8 stores a strip at `yp`: as one vector where OW >= 8 (the
// last strip was moved back to end at OW), else its first OW lanes.
inline void recq_pool_store8(__global RECQ_T* yp, float8 r, int OW) {
  if (OW >= 8) {
    RECQ_STORE8(yp, 0, r);
    return;
  }
  float t[8];
  vstore8(r, 0, t);
  for (int i = 0; i < OW; ++i) RECQ_STORE(yp, i, t[i]);
}

// MaxPool over rows of 8 outputs: work-item (i, oh, nc) computes outputs
// 8i .. 8i+7 of row oh of plane nc (the last strip moved back to end at OW
// where OW >= 8; narrower rows stored lane by lane) as one float8. Taps whose
// 8 inputs lie inside the row come from one vector load (stride 1: vload8;
// stride 2: the even lanes of a vload16); others lane by lane, padding
// reading as -INFINITY. Global size: (ceil(OW/8), OH, N*C). (One output per
// work-item with a branch per tap ran at ~1 GB/s on PoCL.)
__kernel void max_pool_rows(__global const RECQ_T* restrict x, __global RECQ_T* restrict y, int H,
                            int W, int OH, int OW, int KH, int KW, int SH, int SW, int PT, int PL,
                            int DH, int DW, int act, float act_a, float act_b) {
  const int ow0 = recq_pool_strip(OW);
  if (ow0 < 0) return;
  const int oh = get_global_id(1);
  const int nc = get_global_id(2);
  const __global RECQ_T* xc = x + (size_t)nc * H * W;
  float8 m = (float8)(-INFINITY);
  for (int kh = 0; kh < KH; ++kh) {
    const int ih = oh * SH - PT + kh * DH;
    if (ih < 0 || ih >= H) continue;
    const __global RECQ_T* row = xc + (size_t)ih * W;
    for (int kw = 0; kw < KW; ++kw) {
      m = fmax(m, recq_pool_taps8(row, ow0 * SW - PL + kw * DW, SW, W, -INFINITY));
    }
  }
  const float8 r = recq_activate8(m, act, act_a, act_b);
  recq_pool_store8(y + ((size_t)nc * OH + oh) * OW + ow0, r, OW);
}

// AveragePool over rows of 8 outputs, for CPUs: avg_pool's contract with
// max_pool_rows' strips (the last strip moved back to end at OW where
// OW >= 8; narrower rows stored lane by lane; taps whose 8 inputs lie inside
// the row come from one vector load, others lane by lane with padding
// reading as zero). The window is a rectangle, so each lane's count is the
// rows that count times that lane's columns that count (inside the input,
// or inside the padded extent with count_include_pad).
// Global size: (ceil(OW/8), OH, N*C).
__kernel void avg_pool_rows(__global const RECQ_T* restrict x, __global RECQ_T* restrict y, int H,
                            int W, int OH, int OW, int KH, int KW, int SH, int SW, int PT, int PL,
                            int PB, int PR, int DH, int DW, int count_include_pad, int act,
                            float act_a, float act_b) {
  const int ow0 = recq_pool_strip(OW);
  if (ow0 < 0) return;
  const int oh = get_global_id(1);
  const int nc = get_global_id(2);
  const __global RECQ_T* xc = x + (size_t)nc * H * W;
  const int lo_h = count_include_pad ? -PT : 0;
  const int hi_h = count_include_pad ? H + PB : H;
  const int lo_w = count_include_pad ? -PL : 0;
  const int hi_w = count_include_pad ? W + PR : W;
  float8 s = (float8)(0.0f);
  int rows = 0;
  for (int kh = 0; kh < KH; ++kh) {
    const int ih = oh * SH - PT + kh * DH;
    if (ih >= lo_h && ih < hi_h) ++rows;
    if (ih < 0 || ih >= H) continue;
    const __global RECQ_T* row = xc + (size_t)ih * W;
    for (int kw = 0; kw < KW; ++kw) {
      s += recq_pool_taps8(row, ow0 * SW - PL + kw * DW, SW, W, 0.0f);
    }
  }
  const int8 lane = (int8)(0, 1, 2, 3, 4, 5, 6, 7);
  float8 cols = (float8)(0.0f);
  for (int kw = 0; kw < KW; ++kw) {
    const int8 col = (ow0 + lane) * SW - PL + kw * DW;
    cols += select((float8)(0.0f), (float8)(1.0f), (col >= lo_w) & (col < hi_w));
  }
  const float8 count = cols * (float)rows;
  const float8 avg = select((float8)(0.0f), s / count, count > 0.0f);
  const float8 r = recq_activate8(avg, act, act_a, act_b);
  recq_pool_store8(y + ((size_t)nc * OH + oh) * OW + ow0, r, OW);
}
