// Gather along one axis. Global size: (number of output elements).

// y[o, k, i] = x[o, indices[k], i] with x viewed as [outer, dim, inner] and
// y as [outer, count, inner]; indices are floats holding integers < 2^24.
__kernel void gather_axis(__global const float* restrict x, __global const float* restrict indices,
                          __global float* restrict y, int dim, int count, int inner) {
  const int i = get_global_id(0);
  const int in = i % inner;
  const int t = i / inner;
  const int k = t % count;
  const int o = t / count;
  y[i] = x[(o * dim + (int)indices[k]) * inner + in];
}
