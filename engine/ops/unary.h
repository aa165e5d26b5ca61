// The shared element-wise unary kernel (unary.cl), for the ops of unary.cc
// and for fast paths of other ops (Pow with a constant exponent 2 or 0.5).
#ifndef RECQ_ENGINE_OPS_UNARY_H_
#define RECQ_ENGINE_OPS_UNARY_H_

#include "recq/op_registry.h"

namespace recq::internal {

// The functions of unary.cl (RECQ_UNARY).
enum class UnaryCode {
  kSqrt = 0,
  kExp = 1,
  kLog = 2,
  kTanh = 3,
  kNeg = 4,
  kAbs = 5,
  kReciprocal = 6,
  kFloor = 7,
  kCeil = 8,
  kSoftplus = 9,
  kMish = 10,
  kGelu = 11,
  kGeluTanh = 12,
  kSquare = 13,
};

// EmitUnary emits y = f(x) element-wise; x and y have the same shape.
void EmitUnary(LoweringContext& ctx, ValueId x, ValueId y, UnaryCode code);

}  // namespace recq::internal

#endif  // RECQ_ENGINE_OPS_UNARY_H_
