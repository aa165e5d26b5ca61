// y = erf(x), the Gauss error function. Global size: (number of elements).
__kernel void erf_kernel(__global const float* restrict x, __global float* restrict y) {
  const int i = get_global_id(0);
  y[i] = erf(x[i]);
}
