// Det, built per element type: KIND and T as TypedKind / TypedStorage
// (LOAD, STORE and V from common.cl).
//
// y[b] = det of matrix b of x ([batch, n, n]), one work-item per matrix:
// the matrix is copied to `work` (n * n elements of V per matrix, the
// node's scratch) and eliminated there with partial pivoting; the
// determinant is the product of the pivots, negated per row swap. Global
// size: (batch).
__kernel void det_lu(__global const T* restrict x, __global V* restrict work,
                     __global T* restrict y, int n) {
  const int b = get_global_id(0);
  const int base = b * n * n;
  __global V* a = work + base;
  for (int i = 0; i < n * n; ++i) a[i] = LOAD(x, base + i);
  V det = (V)1;
  for (int k = 0; k < n; ++k) {
    int p = k;
    V best = fabs(a[k * n + k]);
    for (int r = k + 1; r < n; ++r) {
      const V v = fabs(a[r * n + k]);
      if (v > best) {
        best = v;
        p = r;
      }
    }
    if (best == (V)0) {
      det = (V)0;
      break;
    }
    if (p != k) {
      for (int c = k; c < n; ++c) {
        const V t = a[k * n + c];
        a[k * n + c] = a[p * n + c];
        a[p * n + c] = t;
      }
      det = -det;
    }
    const V pivot = a[k * n + k];
    det *= pivot;
    for (int r = k + 1; r < n; ++r) {
      const V f = a[r * n + k] / pivot;
      for (int c = k + 1; c < n; ++c) a[r * n + c] -= f * a[k * n + c];
    }
  }
  STORE(det, y, b);
}
