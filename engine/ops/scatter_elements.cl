// ScatterElements (scatter_elements.cc), built per element type (KIND as
// TypedKind, T its storage type; LOAD, STORE and V from common.cl), index type (IDX_T: int or long) and
// REDUCTION (0 none, 1 add, 2 mul, 3 max, 4 min). `dims` is the output
// (data) shape and `idims` the indices' shape, both padded to rank 8 with
// leading 1s; `axis` is the scattered position among the 8 and `dim` the
// data's size there. Global size: (number of output elements).

// y[i] = x[i], then each update whose index (along the axis, at i's other
// coordinates) names i's coordinate on the axis is applied, in order.
__kernel void scatter_elements(__global const T* restrict x, __global const IDX_T* restrict indices,
                               __global const T* restrict updates, __global T* restrict y,
                               int8 dims, int8 idims, int axis, int dim) {
  const int i = get_global_id(0);
  int d_[8], id_[8], c[8];
  vstore8(dims, 0, d_);
  vstore8(idims, 0, id_);
  int rest = i;
  for (int d = 7; d >= 0; --d) {
    c[d] = rest % d_[d];
    rest /= d_[d];
  }
  V acc = LOAD(x, i);
  int reachable = 1;
  int base = 0, stride = 1, axis_stride = 1;
  for (int d = 7; d >= 0; --d) {
    if (d == axis) {
      axis_stride = stride;
    } else {
      if (c[d] >= id_[d]) reachable = 0;
      base += c[d] * stride;
    }
    stride *= id_[d];
  }
  if (reachable) {
    for (int k = 0; k < id_[axis]; ++k) {
      const int off = base + k * axis_stride;
      long t = indices[off];
      if (t < 0) t += dim;
      t = clamp(t, (long)0, (long)(dim - 1));
      if (t != c[axis]) continue;
      const V u = LOAD(updates, off);
#if REDUCTION == 0
      acc = u;
#elif REDUCTION == 1
      acc = acc + u;
#elif REDUCTION == 2
      acc = acc * u;
#elif REDUCTION == 3
      acc = max(acc, u);
#else
      acc = min(acc, u);
#endif
    }
  }
  STORE(acc, y, i);
}
