// The attributes of ScatterElements (engine/ops/scatter_elements.cc), for
// graphs built through the API and for the CPU reference.
#ifndef RECQ_ENGINE_OPS_SCATTER_ELEMENTS_H_
#define RECQ_ENGINE_OPS_SCATTER_ELEMENTS_H_

#include <cstdint>

#include "recq/graph.h"

namespace recq::internal {

// ScatterElements: y = data, then for each element u of updates (of
// indices' shape), y at u's coordinates with the one on `axis` replaced by
// the index gets u (reduction 0) or is combined with it (1 add, 2 mul,
// 3 max, 4 min), in the order of the indices along the axis.
inline constexpr OpType kScatterElements("ScatterElements");
struct ScatterElementsAttrs {
  int64_t axis = 0;
  int reduction = 0;
};

}  // namespace recq::internal

#endif  // RECQ_ENGINE_OPS_SCATTER_ELEMENTS_H_
