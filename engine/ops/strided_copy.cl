// Slice, Split, Tile and Expand as one strided copy. Global size: (number of
// output elements).

// y[i] = x[base + sum_d (coord_d(i) % mods_d) * strides_d], where coord_d is
// i's coordinate in the output `dims` (rank 8, leading 1s). Strides may be
// negative (a Slice with a negative step) or 0 (a broadcast axis).
__kernel void strided_copy(__global const float* restrict x, __global float* restrict y, int base,
                           int8 dims, int8 strides, int8 mods) {
  const int gid = get_global_id(0);
  int i = gid;
  int offset = base;
  int c;
  c = i % dims.s7; i /= dims.s7; offset += (c % mods.s7) * strides.s7;
  c = i % dims.s6; i /= dims.s6; offset += (c % mods.s6) * strides.s6;
  c = i % dims.s5; i /= dims.s5; offset += (c % mods.s5) * strides.s5;
  c = i % dims.s4; i /= dims.s4; offset += (c % mods.s4) * strides.s4;
  c = i % dims.s3; i /= dims.s3; offset += (c % mods.s3) * strides.s3;
  c = i % dims.s2; i /= dims.s2; offset += (c % mods.s2) * strides.s2;
  c = i % dims.s1; i /= dims.s1; offset += (c % mods.s1) * strides.s1;
  offset += (i % mods.s0) * strides.s0;
  y[gid] = x[offset];
}
