// Concat: copies of up to eight inputs per dispatch.

// Picks input K when chunk `c` falls in it; else steps past its chunks and
// columns.
#define RECQ_CONCAT_PICK(K)           \
  if (src == 0) {                     \
    const int n = (w.s##K + 15) >> 4; \
    if (c < n) {                      \
      src = x##K;                     \
      width = w.s##K;                 \
    } else {                          \
      c -= n;                         \
      col += w.s##K;                  \
    }                                 \
  }

// RECQ_CONCAT_FIND: the input (src, width), its first column in the output
// row (col) and the chunk within it (c) of work-item (c, o), from the
// kernel's x0..x7, w and offset; items past the inputs' chunks return.
#define RECQ_CONCAT_FIND          \
  const int o = get_global_id(1); \
  int c = get_global_id(0);       \
  int col = offset;               \
  int width = 0;                  \
  __global const RECQ_T* src = 0; \
  RECQ_CONCAT_PICK(0)             \
  RECQ_CONCAT_PICK(1)             \
  RECQ_CONCAT_PICK(2)             \
  RECQ_CONCAT_PICK(3)             \
  RECQ_CONCAT_PICK(4)             \
  RECQ_CONCAT_PICK(5)             \
  RECQ_CONCAT_PICK(6)             \
  RECQ_CONCAT_PICK(7)             \
  if (src == 0) return;

// Up to 8 inputs in one dispatch (DenseNet's concatenations take up to 32
// inputs): x0..x7 [outer, w.sK] go into y [outer, inner_y] one after the
// other from column `offset`; w.sK is 0 for an unused input (NULL). Each
// input's row is cut into chunks of 16 elements. Global size:
// (sum over K of ceil(w.sK / 16), outer): work-item (i, o) copies chunk i of
// row o, as one float16 when the chunk is whole. (One element per work-item,
// with a division and a search for each, copied 1-8 GB/s on PoCL.)
__kernel void concat_chunks8(__global RECQ_T* restrict y, __global const RECQ_T* restrict x0,
                             __global const RECQ_T* restrict x1, __global const RECQ_T* restrict x2,
                             __global const RECQ_T* restrict x3, __global const RECQ_T* restrict x4,
                             __global const RECQ_T* restrict x5, __global const RECQ_T* restrict x6,
                             __global const RECQ_T* restrict x7, int8 w, int inner_y, int offset) {
  RECQ_CONCAT_FIND
  const int start = c * 16;
  __global const RECQ_T* from = src + (size_t)o * width + start;
  __global RECQ_T* to = y + (size_t)o * inner_y + col + start;
  if (start + 16 <= width) {
    RECQ_STORE16(to, 0, RECQ_LOAD16(from, 0));
  } else {
    for (int k = 0; k < width - start; ++k) RECQ_STORE(to, k, RECQ_LOAD(from, k));
  }
}

// AffineConcat (affine_concat.cc): concat_chunks8, then each element of
// output channel ch = (column / plane) % channels becomes
// act(x * scale[ch] + shift[ch]) (a BatchNorm and activation after a
// channel Concat: DenseNet's layers).
__kernel void concat_affine_chunks8(
    __global RECQ_T* restrict y, __global const RECQ_T* restrict x0,
    __global const RECQ_T* restrict x1, __global const RECQ_T* restrict x2,
    __global const RECQ_T* restrict x3, __global const RECQ_T* restrict x4,
    __global const RECQ_T* restrict x5, __global const RECQ_T* restrict x6,
    __global const RECQ_T* restrict x7, int8 w, int inner_y, int offset,
    __global const RECQ_T* restrict scale, __global const RECQ_T* restrict shift, int plane,
    int act, float act_a, float act_b) {
  RECQ_CONCAT_FIND
  const int start = c * 16;
  const int end = min(width, start + 16);
  __global const RECQ_T* from = src + (size_t)o * width;
  __global RECQ_T* to = y + (size_t)o * inner_y + col;
  if (end == start + 16 && plane >= 16) {
    // A whole chunk spans at most two channels: lanes from `cut` on are in
    // the second.
    const int ch = (col + start) / plane;
    const int cut = (ch + 1) * plane - (col + start);
    const float s0 = RECQ_LOAD(scale, ch);
    const float t0 = RECQ_LOAD(shift, ch);
    const float s1 = cut < 16 ? RECQ_LOAD(scale, ch + 1) : s0;
    const float t1 = cut < 16 ? RECQ_LOAD(shift, ch + 1) : t0;
    const int16 second =
        (int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15) >= (int16)(cut);
    const float16 v = RECQ_LOAD16(from + start, 0) * select((float16)(s0), (float16)(s1), second) +
                      select((float16)(t0), (float16)(t1), second);
    RECQ_STORE16(to + start, 0, recq_activate16(v, act, act_a, act_b));
    return;
  }
  for (int k = start; k < end; ++k) {
    const int ch = (col + k) / plane;
    const float v = RECQ_LOAD(from, k) * RECQ_LOAD(scale, ch) + RECQ_LOAD(shift, ch);
    RECQ_STORE(to, k, recq_activate(v, act, act_a, act_b));
  }
}
#undef RECQ_CONCAT_FIND
#undef RECQ_CONCAT_PICK
