// The element-type ops (engine/ops/typed.cc), for the import functions that
// emit them.
#ifndef RECQ_ENGINE_OPS_TYPED_H_
#define RECQ_ENGINE_OPS_TYPED_H_

#include "recq/graph.h"

namespace recq::internal {

// Cast: y = x converted to `to` (integers truncate toward zero and
// saturate, bool is x != 0, float16 rounds to nearest even).
inline constexpr OpType kCast("Cast");
struct CastAttrs {
  DataType to = DataType::kFloat32;
};

// Where: y = cond ? a : b (cond bool, a and b of one element type), with
// numpy broadcasting over the three.
inline constexpr OpType kWhere("Where");

}  // namespace recq::internal

#endif  // RECQ_ENGINE_OPS_TYPED_H_
