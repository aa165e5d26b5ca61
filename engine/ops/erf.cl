// y = erf(x), the Gauss error function. Global size: (number of elements).
__kernel void erf_kernel(__global const RECQ_T* restrict x, __global RECQ_T* restrict y) {
  const int i = get_global_id(0);
  RECQ_STORE(y, i, erf(RECQ_LOAD(x, i)));
}
