// Prepended to every recq kernel program.
// Activation codes match recq::ActivationKind.
#define RECQ_ACT_NONE 0
#define RECQ_ACT_RELU 1
#define RECQ_ACT_CLIP 2
#define RECQ_ACT_LEAKY_RELU 3
#define RECQ_ACT_SIGMOID 4
#define RECQ_ACT_HARD_SIGMOID 5
#define RECQ_ACT_HARD_SWISH 6
#define RECQ_ACT_SILU 7

inline float recq_activate(float v, int act, float a, float b) {
  switch (act) {
    case RECQ_ACT_RELU: return fmax(v, 0.0f);
    case RECQ_ACT_CLIP: return fmin(fmax(v, a), b);
    case RECQ_ACT_LEAKY_RELU: return v >= 0.0f ? v : a * v;
    case RECQ_ACT_SIGMOID: return 1.0f / (1.0f + exp(-v));
    case RECQ_ACT_HARD_SIGMOID: return clamp(a * v + b, 0.0f, 1.0f);
    case RECQ_ACT_HARD_SWISH: return v * clamp(v / 6.0f + 0.5f, 0.0f, 1.0f);
    case RECQ_ACT_SILU: return v / (1.0f + exp(-v));
    default: return v;
  }
}

// Offset of flat index `i` of a tensor of shape `dims` (rank 8, leading 1s)
// in a tensor with element strides `strides` (0 for broadcast dimensions).
inline int recq_broadcast_offset(int i, int8 dims, int8 strides) {
  int offset = 0;
  int d;
  d = i % dims.s7; i /= dims.s7; offset += d * strides.s7;
  d = i % dims.s6; i /= dims.s6; offset += d * strides.s6;
  d = i % dims.s5; i /= dims.s5; offset += d * strides.s5;
  d = i % dims.s4; i /= dims.s4; offset += d * strides.s4;
  d = i % dims.s3; i /= dims.s3; offset += d * strides.s3;
  d = i % dims.s2; i /= dims.s2; offset += d * strides.s2;
  d = i % dims.s1; i /= dims.s1; offset += d * strides.s1;
  offset += i * strides.s0;
  return offset;
}

// recq_activate applied to every lane of a float8 / float16 (same codes).
#define RECQ_DEFINE_VECTOR_ACTIVATE(T, N)                                             \
  inline T recq_activate##N(T v, int act, float a, float b) {                         \
    switch (act) {                                                                    \
      case RECQ_ACT_RELU: return fmax(v, (T)(0.0f));                                  \
      case RECQ_ACT_CLIP: return fmin(fmax(v, (T)(a)), (T)(b));                       \
      case RECQ_ACT_LEAKY_RELU: return select(a * v, v, v >= (T)(0.0f));              \
      case RECQ_ACT_SIGMOID: return (T)(1.0f) / ((T)(1.0f) + exp(-v));                \
      case RECQ_ACT_HARD_SIGMOID: return clamp(a * v + b, 0.0f, 1.0f);                \
      case RECQ_ACT_HARD_SWISH: return v * clamp(v / 6.0f + 0.5f, 0.0f, 1.0f);        \
      case RECQ_ACT_SILU: return v / ((T)(1.0f) + exp(-v));                           \
      default: return v;                                                              \
    }                                                                                 \
  }
RECQ_DEFINE_VECTOR_ACTIVATE(float8, 8)
RECQ_DEFINE_VECTOR_ACTIVATE(float16, 16)
#undef RECQ_DEFINE_VECTOR_ACTIVATE
