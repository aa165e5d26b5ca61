// Pad. Global size: (number of output elements).

// Modes match recq::internal::PadMode.
#define PAD_CONSTANT 0
#define PAD_REFLECT 1
#define PAD_EDGE 2
#define PAD_WRAP 3

// y[i] = x at i's coordinates minus `begin` (rank 8, leading 1s), mapped
// back into x by `mode` where they fall outside, or `value` (constant mode).
__kernel void pad(__global const RECQ_T* restrict x, __global RECQ_T* restrict y, int8 out_dims,
                  int8 in_dims, int8 begin, int mode, float value) {
  const int gid = get_global_id(0);
  int od[8], id[8], pb[8];
  vstore8(out_dims, 0, od);
  vstore8(in_dims, 0, id);
  vstore8(begin, 0, pb);
  int i = gid;
  int offset = 0;
  int stride = 1;
  for (int d = 7; d >= 0; --d) {
    int c = i % od[d] - pb[d];
    i /= od[d];
    const int n = id[d];
    if (c < 0 || c >= n) {
      if (mode == PAD_CONSTANT) {
        RECQ_STORE(y, gid, value);
        return;
      } else if (mode == PAD_EDGE) {
        c = clamp(c, 0, n - 1);
      } else if (mode == PAD_WRAP) {
        c %= n;
        if (c < 0) c += n;
      } else if (n == 1) {
        c = 0;
      } else {
        const int period = 2 * (n - 1);
        c %= period;
        if (c < 0) c += period;
        if (c >= n) c = period - c;
      }
    }
    offset += c * stride;
    stride *= n;
  }
  RECQ_STORE(y, gid, RECQ_LOAD(x, offset));
}
