// The element-wise activation kernel. Global size: (number of output elements).

// y = act(x). x and y may be the same buffer.
__kernel void activation(__global const float* x, __global float* y, int act, float act_a,
                         float act_b) {
  const int i = get_global_id(0);
  y[i] = recq_activate(x[i], act, act_a, act_b);
}
