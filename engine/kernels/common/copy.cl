// The copy kernel the framework uses where a value cannot alias. Global size:
// (number of elements).

// y[i] = x[i]
__kernel void copy(__global const RECQ_T* restrict x, __global RECQ_T* restrict y) {
  const int i = get_global_id(0);
  RECQ_STORE(y, i, RECQ_LOAD(x, i));
}

// Copies of any element type, as 32-bit words or bytes (EmitCopyOf).
__kernel void copy_words(__global const uint* restrict x, __global uint* restrict y) {
  const size_t i = get_global_id(0);
  y[i] = x[i];
}

__kernel void copy_bytes(__global const uchar* restrict x, __global uchar* restrict y) {
  const size_t i = get_global_id(0);
  y[i] = x[i];
}
