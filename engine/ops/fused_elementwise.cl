// The generated element-wise kernel of FusedElementwise
// (fused_elementwise.cc). Build options:
//   RECQ_FUSED_BODY  RECQ_LET(tK,expr) statements over a0 .. a7 (required)
//   RECQ_FUSED_OUT   the variable holding the output element (required)
//   RECQ_FUSED_VEC   elements per work-item: 1 or 4 (float4 loads/stores)
//   RECQ_INk         input k is present, read as: 0 the output's shape,
//                    1 a scalar, 2 [mid] broadcast over [outer, mid, inner]
//                    (element (e / inner) % mid), 3 general broadcasting
//                    (element strides stk over the output shape `dims`,
//                    RECQ_FUSED_VEC 1 only)
// Global size: (number of output elements / RECQ_FUSED_VEC). Arithmetic in
// float; storage through RECQ_LOAD / RECQ_STORE (either precision).
#ifndef RECQ_FUSED_VEC
#define RECQ_FUSED_VEC 1
#endif
#if RECQ_FUSED_VEC == 4
typedef float4 recq_v;
#define RECQ_VLOAD(p, i) RECQ_LOAD4(p, i)
#define RECQ_VSTORE(p, i, v) RECQ_STORE4(p, i, v)
#else
typedef float recq_v;
#define RECQ_VLOAD(p, i) RECQ_LOAD(p, i)
#define RECQ_VSTORE(p, i, v) RECQ_STORE(p, i, v)
#endif
#define RECQ_LET(t, e) const recq_v t = (e);

// common.cl's erfc for recq_v (the name the generated expressions use).
#if RECQ_FUSED_VEC == 4
#define recq_fused_erfc recq_act_erfc4
#else
#define recq_fused_erfc recq_act_erfc
#endif

// Input element(s) of work-item i for read mode `mode` (a build-time
// constant, so that one branch is left).
inline recq_v recq_fused_load(__global const RECQ_T* p, int mode, int i, int mid, int inner,
                              int8 dims, int8 st) {
  if (mode == 0) return RECQ_VLOAD(p, i);
  if (mode == 1) return (recq_v)(RECQ_LOAD(p, 0));
  if (mode == 2) return (recq_v)(RECQ_LOAD(p, (i * RECQ_FUSED_VEC / inner) % mid));
  return (recq_v)(RECQ_LOAD(p, recq_broadcast_offset(i, dims, st)));
}

#define RECQ_FUSED_PARAM(k) \
  , __global const RECQ_T *restrict p##k, int mid##k, int inner##k, int8 st##k
#define RECQ_FUSED_READ(k) \
  const recq_v a##k = recq_fused_load(p##k, RECQ_IN##k, i, mid##k, inner##k, dims, st##k);

__kernel void fused_elementwise(__global RECQ_T* restrict y, int8 dims
#ifdef RECQ_IN0
                                RECQ_FUSED_PARAM(0)
#endif
#ifdef RECQ_IN1
                                RECQ_FUSED_PARAM(1)
#endif
#ifdef RECQ_IN2
                                RECQ_FUSED_PARAM(2)
#endif
#ifdef RECQ_IN3
                                RECQ_FUSED_PARAM(3)
#endif
#ifdef RECQ_IN4
                                RECQ_FUSED_PARAM(4)
#endif
#ifdef RECQ_IN5
                                RECQ_FUSED_PARAM(5)
#endif
#ifdef RECQ_IN6
                                RECQ_FUSED_PARAM(6)
#endif
#ifdef RECQ_IN7
                                RECQ_FUSED_PARAM(7)
#endif
) {
  const int i = get_global_id(0);
#ifdef RECQ_IN0
  RECQ_FUSED_READ(0)
#endif
#ifdef RECQ_IN1
  RECQ_FUSED_READ(1)
#endif
#ifdef RECQ_IN2
  RECQ_FUSED_READ(2)
#endif
#ifdef RECQ_IN3
  RECQ_FUSED_READ(3)
#endif
#ifdef RECQ_IN4
  RECQ_FUSED_READ(4)
#endif
#ifdef RECQ_IN5
  RECQ_FUSED_READ(5)
#endif
#ifdef RECQ_IN6
  RECQ_FUSED_READ(6)
#endif
#ifdef RECQ_IN7
  RECQ_FUSED_READ(7)
#endif
  RECQ_FUSED_BODY
  RECQ_VSTORE(y, i, RECQ_FUSED_OUT);
}
