// Resize from per-axis tap tables: for axis d and output coordinate o, the
// table holds `count` (source index, weight) pairs of floats from
// offsets[d] on; an axis with count 0 is not resized.

// Any rank up to 8 (leading 1s). Global size: (number of output elements).
// `combos` is the product of the non-zero counts.
__kernel void resize_taps(__global const RECQ_T* restrict x, __global const float* restrict table,
                          __global RECQ_T* restrict y, int8 out_dims, int8 in_strides,
                          int8 offsets, int8 counts, int combos) {
  const int gid = get_global_id(0);
  int od[8], st[8], off[8], cnt[8];
  vstore8(out_dims, 0, od);
  vstore8(in_strides, 0, st);
  vstore8(offsets, 0, off);
  vstore8(counts, 0, cnt);
  int coord[8];
  int i = gid;
  int fixed = 0;  // source offset of the axes that are not resized
  for (int d = 7; d >= 0; --d) {
    coord[d] = i % od[d];
    i /= od[d];
    if (cnt[d] == 0) fixed += coord[d] * st[d];
  }
  float acc = 0.0f;
  for (int t = 0; t < combos; ++t) {
    int r = t;
    int offset = fixed;
    float w = 1.0f;
    for (int d = 7; d >= 0; --d) {
      const int k = cnt[d];
      if (k == 0) continue;
      const int tap = r % k;
      r /= k;
      const int at = off[d] + 2 * (coord[d] * k + tap);
      offset += (int)table[at] * st[d];
      w *= table[at + 1];
    }
    acc += w * RECQ_LOAD(x, offset);
  }
  RECQ_STORE(y, gid, acc);
}

#ifdef KY
// recq_resize_rows: the KY input rows of `plane` (w_in wide) that output
// row oy reads, and their weights, from the H axis's taps at the table's
// start.
inline void recq_resize_rows(__global const RECQ_T* plane, __global const float* table, int oy,
                             int w_in, __global const RECQ_T** rows, float* wy) {
  for (int ty = 0; ty < KY; ++ty) {
    const int ay = 2 * (oy * KY + ty);
    rows[ty] = plane + (int)table[ay] * w_in;
    wy[ty] = table[ay + 1];
  }
}

// Resizing of the last two axes only, KY and KX taps (1 or 2) each. The
// table holds the H axis's taps, then the W axis's from wtab on. Each
// work-item writes XPER consecutive outputs of one row (the H taps and row
// pointers are loaded once for them). Global size: (ceil(w / XPER), h,
// planes), rounded up.
__kernel void resize_2d(__global const RECQ_T* restrict x, __global const float* restrict table,
                        __global RECQ_T* restrict y, int h_in, int w_in, int h, int w, int planes,
                        int wtab) {
  const int ox0 = get_global_id(0) * XPER;
  const int oy = get_global_id(1);
  const int p = get_global_id(2);
  if (ox0 >= w || oy >= h || p >= planes) return;
  __global const RECQ_T* rows[KY];
  float wy[KY];
  recq_resize_rows(x + (size_t)p * h_in * w_in, table, oy, w_in, rows, wy);
  __global RECQ_T* out = y + ((size_t)p * h + oy) * w;
  const int end = min(ox0 + XPER, w);
  for (int ox = ox0; ox < end; ++ox) {
    float acc = 0.0f;
    for (int tx = 0; tx < KX; ++tx) {
      const int ax = wtab + 2 * (ox * KX + tx);
      const int ix = (int)table[ax];
      const float wx = table[ax + 1];
      float col = 0.0f;
      for (int ty = 0; ty < KY; ++ty) col += wy[ty] * RECQ_LOAD(rows[ty], ix);
      acc += wx * col;
    }
    RECQ_STORE(out, ox, acc);
  }
}

// resize_2d for CPUs: 16 consecutive outputs of a row per work-item, summed
// as one vector. The W axis's table is planar from wtab on: for tap tx, w
// source indices then w weights, so that a strip's are a vector load each;
// only the source values are gathered lane by lane. A partial last strip
// moves back to end at w (strips overlap and write identical values); rows
// narrower than 16 take a loop over their outputs. Global size:
// (ceil(w / 16), h, planes), rounded up.
__kernel void resize_2d_strips(__global const RECQ_T* restrict x,
                               __global const float* restrict table, __global RECQ_T* restrict y,
                               int h_in, int w_in, int h, int w, int planes, int wtab) {
  int ox0 = get_global_id(0) * 16;
  const int oy = get_global_id(1);
  const int p = get_global_id(2);
  if (ox0 >= w || oy >= h || p >= planes) return;
  __global const RECQ_T* rows[KY];
  float wy[KY];
  recq_resize_rows(x + (size_t)p * h_in * w_in, table, oy, w_in, rows, wy);
  __global RECQ_T* out = y + ((size_t)p * h + oy) * w;
  if (w < 16) {
    for (int ox = 0; ox < w; ++ox) {
      float acc = 0.0f;
      for (int tx = 0; tx < KX; ++tx) {
        const __global float* tt = table + wtab + 2 * tx * w;
        const int ix = (int)tt[ox];
        float col = 0.0f;
        for (int ty = 0; ty < KY; ++ty) col += wy[ty] * RECQ_LOAD(rows[ty], ix);
        acc += tt[w + ox] * col;
      }
      RECQ_STORE(out, ox, acc);
    }
    return;
  }
  ox0 = min(ox0, w - 16);
  float16 acc = (float16)(0.0f);
  for (int tx = 0; tx < KX; ++tx) {
    const __global float* tt = table + wtab + 2 * tx * w + ox0;
    int ix[16];
    vstore16(convert_int16(vload16(0, tt)), 0, ix);
    float col[16];
#pragma unroll
    for (int i = 0; i < 16; ++i) {
      float c = 0.0f;
      for (int ty = 0; ty < KY; ++ty) c += wy[ty] * RECQ_LOAD(rows[ty], ix[i]);
      col[i] = c;
    }
    acc = fma(vload16(0, tt + w), vload16(0, col), acc);
  }
  RECQ_STORE16(out + ox0, 0, acc);
}

// The CPU family's two passes where the output has 16 or more columns and
// no fewer rows than the input. resize_2d_rows interpolates every input row
// along W, 16 outputs per work-item (the W taps planar, as for
// resize_2d_strips), into `t` [planes][h_in][w] (floats); resize_2d_cols
// then blends the KY rows of `t` that each output row reads, 16 columns per
// work-item, with vector loads only. The last strip of a row moves back to
// end at w. Global sizes: (ceil(w / 16), h_in, planes) and (ceil(w / 16), h,
// planes), rounded up.
__kernel void resize_2d_rows(__global const RECQ_T* restrict x,
                             __global const float* restrict table, __global float* restrict t,
                             int h_in, int w_in, int w, int planes, int wtab) {
  const int ox0 = min((int)get_global_id(0) * 16, w - 16);
  const int r = get_global_id(1);
  const int p = get_global_id(2);
  if ((int)get_global_id(0) * 16 >= w || r >= h_in || p >= planes) return;
  __global const RECQ_T* src = x + ((size_t)p * h_in + r) * w_in;
  float16 acc = (float16)(0.0f);
  for (int tx = 0; tx < KX; ++tx) {
    const __global float* tt = table + wtab + 2 * tx * w + ox0;
    int ix[16];
    vstore16(convert_int16(vload16(0, tt)), 0, ix);
    float v[16];
#pragma unroll
    for (int i = 0; i < 16; ++i) v[i] = RECQ_LOAD(src, ix[i]);
    acc = fma(vload16(0, tt + w), vload16(0, v), acc);
  }
  vstore16(acc, 0, t + ((size_t)p * h_in + r) * w + ox0);
}

__kernel void resize_2d_cols(__global const float* restrict t, __global const float* restrict table,
                             __global RECQ_T* restrict y, int h_in, int h, int w, int planes) {
  const int ox0 = min((int)get_global_id(0) * 16, w - 16);
  const int oy = get_global_id(1);
  const int p = get_global_id(2);
  if ((int)get_global_id(0) * 16 >= w || oy >= h || p >= planes) return;
  float16 acc = (float16)(0.0f);
  for (int ty = 0; ty < KY; ++ty) {
    const int ay = 2 * (oy * KY + ty);
    const __global float* row = t + ((size_t)p * h_in + (int)table[ay]) * w + ox0;
    acc = fma((float16)(table[ay + 1]), vload16(0, row), acc);
  }
  RECQ_STORE16(y + ((size_t)p * h + oy) * w + ox0, 0, acc);
}
#endif
