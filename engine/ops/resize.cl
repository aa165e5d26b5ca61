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
  __global const RECQ_T* plane = x + (size_t)p * h_in * w_in;
  __global const RECQ_T* rows[KY];
  float wy[KY];
  for (int ty = 0; ty < KY; ++ty) {
    const int ay = 2 * (oy * KY + ty);
    rows[ty] = plane + (int)table[ay] * w_in;
    wy[ty] = table[ay + 1];
  }
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
#endif
