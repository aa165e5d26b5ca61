// PlaneConcat: a Concat whose inputs may each be read through a Gather of
// whole slices along the Concat's axis (ShuffleNet V2's channel shuffle and
// split feeding the next block's Concat), made by the plane_concat pattern
// (engine/patterns/plane_concat.cc). Output slice k along `axis` is slice
// plane[k] of input source[k]:
//   y[o][k][i] = x_source[k][o][plane[k]][i]
// for o over the dimensions before the axis and i over those after it. Up
// to kPlaneConcatMaxSources inputs of one dtype, equal outside the axis.
#ifndef RECQ_ENGINE_OPS_PLANE_CONCAT_H_
#define RECQ_ENGINE_OPS_PLANE_CONCAT_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace recq::internal {

struct PlaneConcatAttrs {
  int64_t axis = 1;  // non-negative
  std::vector<int32_t> source;
  std::vector<int32_t> plane;
};

inline constexpr size_t kPlaneConcatMaxSources = 8;

}  // namespace recq::internal

#endif  // RECQ_ENGINE_OPS_PLANE_CONCAT_H_
