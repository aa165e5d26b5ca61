// Det (engine/ops/det.cc), for the import and the tests that emit it.
#ifndef RECQ_ENGINE_OPS_DET_H_
#define RECQ_ENGINE_OPS_DET_H_

#include "recq/graph.h"

namespace recq::internal {

// Det: y[...] = the determinant of the square matrix x[..., M, M]
// (float32, float16 or float64; y of x's type and shape without the last
// two dims). Each matrix is factored by Gaussian elimination with partial
// pivoting, in float (double for float64), by one work-item.
inline constexpr OpType kDet("Det");

}  // namespace recq::internal

#endif  // RECQ_ENGINE_OPS_DET_H_
