// Einsum, built per element type: KIND and T as TypedKind / TypedStorage
// (LOAD, STORE and V from common.cl), TWO 1 with a second operand.
//
// y[i] = sum over j < total of a[oa + ka(j)] (* b[ob + kb(j)]): `dims` is
// y's shape and `sa` / `sb` the operands' element strides per output label
// (summed over a label's repeats, 0 where it is absent or broadcast);
// `kdims`, `ka` and `kb` the same for the summed labels. All padded to rank
// 8 in front (dims with 1, strides with 0). Global size: (y's elements).
__kernel void einsum_naive(__global const T* restrict a, __global const T* restrict b,
                           __global T* restrict y, int8 dims, int8 sa, int8 sb, int8 kdims,
                           int8 ka, int8 kb, int total) {
  const int i = get_global_id(0);
  const int oa = recq_broadcast_offset(i, dims, sa);
#if TWO
  const int ob = recq_broadcast_offset(i, dims, sb);
#endif
  V acc = (V)0;
  for (int j = 0; j < total; ++j) {
    V v = LOAD(a, oa + recq_broadcast_offset(j, kdims, ka));
#if TWO
    v *= LOAD(b, ob + recq_broadcast_offset(j, kdims, kb));
#endif
    acc += v;
  }
  STORE(acc, y, i);
}
