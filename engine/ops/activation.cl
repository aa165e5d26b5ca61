// The element-wise activation kernel. Global size: (number of output elements).

// y = act(x). x and y may be the same buffer.
__kernel void activation(__global const RECQ_T* x, __global RECQ_T* y, int act, float act_a,
                         float act_b) {
  const int i = get_global_id(0);
  RECQ_STORE(y, i, recq_activate(RECQ_LOAD(x, i), act, act_a, act_b));
}
