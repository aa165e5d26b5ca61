// Kernels of element-type ops: Cast and Where, built once per element-type
// combination (-DCAST with SRC_KIND/DST_KIND, -DWHERE with VAL_T). Global
// size: (number of output elements).

#ifdef CAST
// SRC_KIND and DST_KIND: 0 float, 1 half, 2 long, 3 int, 4 char, 5 uchar,
// 6 bool (uchar 0/1), 7 double (cl_khr_fp64, enabled in common.cl),
// 8 ushort, 9 short, 10 uint, 11 ulong. SRC_T
// and DST_T are the storage types (ushort for half, read and written with
// vload_half/vstore_half).
#if SRC_KIND == 1
#define CAST_LOAD(p, i) vload_half((i), (__global const half*)(p))
#else
#define CAST_LOAD(p, i) (p)[(i)]
#endif
#define SRC_IS_FLOAT (SRC_KIND <= 1 || SRC_KIND == 7)

#if DST_KIND == 0
#define CONVERT(v) convert_float(v)
#elif DST_KIND == 7
#define CONVERT(v) convert_double(v)
#elif DST_KIND == 2 && SRC_IS_FLOAT
#define CONVERT(v) convert_long_sat_rtz(v)
#elif DST_KIND == 2
#define CONVERT(v) convert_long_sat(v)
#elif DST_KIND == 3 && SRC_IS_FLOAT
#define CONVERT(v) convert_int_sat_rtz(v)
#elif DST_KIND == 3
#define CONVERT(v) convert_int_sat(v)
#elif DST_KIND == 4 && SRC_IS_FLOAT
#define CONVERT(v) convert_char_sat_rtz(v)
#elif DST_KIND == 4
#define CONVERT(v) convert_char_sat(v)
#elif DST_KIND == 5 && SRC_IS_FLOAT
#define CONVERT(v) convert_uchar_sat_rtz(v)
#elif DST_KIND == 5
#define CONVERT(v) convert_uchar_sat(v)
#elif DST_KIND == 6
#define CONVERT(v) ((uchar)((v) != 0))
#elif DST_KIND == 8 && SRC_IS_FLOAT
#define CONVERT(v) convert_ushort_sat_rtz(v)
#elif DST_KIND == 8
#define CONVERT(v) convert_ushort_sat(v)
#elif DST_KIND == 9 && SRC_IS_FLOAT
#define CONVERT(v) convert_short_sat_rtz(v)
#elif DST_KIND == 9
#define CONVERT(v) convert_short_sat(v)
#elif DST_KIND == 10 && SRC_IS_FLOAT
#define CONVERT(v) convert_uint_sat_rtz(v)
#elif DST_KIND == 10
#define CONVERT(v) convert_uint_sat(v)
#elif DST_KIND == 11 && SRC_IS_FLOAT
#define CONVERT(v) convert_ulong_sat_rtz(v)
#elif DST_KIND == 11
#define CONVERT(v) convert_ulong_sat(v)
#endif

// y[i] = x[i] converted: integers truncate toward zero and saturate (NaN
// becomes 0), bool is x != 0, half and float round to nearest even (a
// double rounds to half once, not through float).
__kernel void cast(__global const SRC_T* restrict x, __global DST_T* restrict y) {
  const size_t i = get_global_id(0);
#if DST_KIND == 1 && SRC_KIND == 7
  vstore_half_rte(CAST_LOAD(x, i), i, (__global half*)y);
#elif DST_KIND == 1
  vstore_half_rte(convert_float(CAST_LOAD(x, i)), i, (__global half*)y);
#else
  y[i] = CONVERT(CAST_LOAD(x, i));
#endif
}
#endif

#ifdef WHERE
// y = cond ? a : b with numpy broadcasting: `dims` is the output shape padded
// to rank 8 with leading 1s, `sc`, `sa`, `sb` the inputs' element strides
// (0 on broadcast dimensions). Values are copied as their bits (VAL_T is an
// unsigned integer of the element's size).
__kernel void where(__global const uchar* restrict cond, __global const VAL_T* restrict a,
                    __global const VAL_T* restrict b, __global VAL_T* restrict y, int8 dims,
                    int8 sc, int8 sa, int8 sb) {
  const int i = get_global_id(0);
  y[i] = cond[recq_broadcast_offset(i, dims, sc)] ? a[recq_broadcast_offset(i, dims, sa)]
                                                  : b[recq_broadcast_offset(i, dims, sb)];
}
#endif
