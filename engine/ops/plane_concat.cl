// PlaneConcat (plane_concat.cc): work-item (j, k, o) copies elements
// [16 j, 16 j + 16) of output slice k of outer index o from slice plane[k]
// of input source[k]; table holds (source, plane) pairs, dims each input's
// extent along the axis.
#define RECQ_PLANE_PICK(i) \
  if (src_index == i) {    \
    src = x##i;            \
    dim = dims.s##i;       \
  }

__kernel void plane_concat(__global RECQ_T* restrict y, __global const RECQ_T* restrict x0,
                           __global const RECQ_T* restrict x1, __global const RECQ_T* restrict x2,
                           __global const RECQ_T* restrict x3, __global const RECQ_T* restrict x4,
                           __global const RECQ_T* restrict x5, __global const RECQ_T* restrict x6,
                           __global const RECQ_T* restrict x7, __global const int* restrict table,
                           int8 dims, int count, int inner, int outer) {
  const int start = get_global_id(0) * 16;
  const int k = get_global_id(1);
  const int o = get_global_id(2);
  if (start >= inner || k >= count || o >= outer) return;
  const int src_index = table[2 * k];
  const int plane = table[2 * k + 1];
  __global const RECQ_T* src = x0;
  int dim = dims.s0;
  RECQ_PLANE_PICK(1)
  RECQ_PLANE_PICK(2)
  RECQ_PLANE_PICK(3)
  RECQ_PLANE_PICK(4)
  RECQ_PLANE_PICK(5)
  RECQ_PLANE_PICK(6)
  RECQ_PLANE_PICK(7)
  __global const RECQ_T* from = src + ((size_t)o * dim + plane) * inner + start;
  __global RECQ_T* to = y + ((size_t)o * count + k) * inner + start;
  if (start + 16 <= inner) {
    RECQ_STORE16(to, 0, RECQ_LOAD16(from, 0));
  } else {
    for (int e = 0; e < inner - start; ++e) RECQ_STORE(to, e, RECQ_LOAD(from, e));
  }
}
#undef RECQ_PLANE_PICK
