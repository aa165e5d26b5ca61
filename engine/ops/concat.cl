// Concat: copies of up to eight inputs per dispatch.

// Up to 8 inputs in one dispatch (DenseNet's concatenations take up to 32
// inputs): x0..x7 [outer, w.sK] go into y [outer, inner_y] one after the
// other from column `offset`; w.sK is 0 for an unused input (NULL).
// Global size: (outer * sum of w).
__kernel void concat_copy8(__global RECQ_T* restrict y, __global const RECQ_T* restrict x0,
                           __global const RECQ_T* restrict x1, __global const RECQ_T* restrict x2,
                           __global const RECQ_T* restrict x3, __global const RECQ_T* restrict x4,
                           __global const RECQ_T* restrict x5, __global const RECQ_T* restrict x6,
                           __global const RECQ_T* restrict x7, int8 w, int inner_y, int offset) {
  const int total = w.s0 + w.s1 + w.s2 + w.s3 + w.s4 + w.s5 + w.s6 + w.s7;
  const int i = get_global_id(0);
  const int o = i / total;
  const int j = i - o * total;
  int at = j;
  float v;
  if (at < w.s0) {
    v = RECQ_LOAD(x0, o * w.s0 + at);
  } else if ((at -= w.s0) < w.s1) {
    v = RECQ_LOAD(x1, o * w.s1 + at);
  } else if ((at -= w.s1) < w.s2) {
    v = RECQ_LOAD(x2, o * w.s2 + at);
  } else if ((at -= w.s2) < w.s3) {
    v = RECQ_LOAD(x3, o * w.s3 + at);
  } else if ((at -= w.s3) < w.s4) {
    v = RECQ_LOAD(x4, o * w.s4 + at);
  } else if ((at -= w.s4) < w.s5) {
    v = RECQ_LOAD(x5, o * w.s5 + at);
  } else if ((at -= w.s5) < w.s6) {
    v = RECQ_LOAD(x6, o * w.s6 + at);
  } else {
    at -= w.s6;
    v = RECQ_LOAD(x7, o * w.s7 + at);
  }
  RECQ_STORE(y, o * inner_y + offset + j, v);
}
