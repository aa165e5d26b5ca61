// The copy kernel the framework uses where a value cannot alias. Global size:
// (number of elements).

// y[i] = x[i]
__kernel void copy(__global const float* restrict x, __global float* restrict y) {
  const int i = get_global_id(0);
  y[i] = x[i];
}
