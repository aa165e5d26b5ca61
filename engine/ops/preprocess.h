// The Preprocess op (engine/ops/preprocess.cc): what ApplyPrePostProcessing
// (recq/preprocess.h) inserts in front of a model input.
#ifndef RECQ_ENGINE_OPS_PREPROCESS_H_
#define RECQ_ENGINE_OPS_PREPROCESS_H_

#include <cstdint>
#include <vector>

#include "recq/dispatch.h"
#include "recq/engine.h"
#include "recq/graph.h"
#include "recq/preprocess.h"

namespace recq::internal {

// Preprocess: inputs are the source binding(s) (one, or the Y and UV planes
// of a two-plane NV12 frame); the output is the model's input, [N, C, H, W]
// of float32 or float16. `spec` has its sizes and uv_offset resolved (no
// zeros) and mean / scale of C values each.
inline constexpr OpType kPreprocess("Preprocess");
struct PreprocessAttrs {
  InputPreprocess spec;
  TensorDesc model;  // the output
};

// SourceDescs returns the descriptions of the source binding(s) of `a`
// (the table in recq/preprocess.h): shapes and element types. An image2d
// binding is described as [1, H, W, channels] of u8 or float32.
std::vector<TensorDesc> SourceDescs(const PreprocessAttrs& a);

// KernelReadsImage tells whether argument `arg` of `kernel` is an image2d
// (a Preprocess kernel reading an image source): the engine marks the slot
// bound there as an image (Slot::image), from the dispatch list alone, so
// that engines loaded from engine files know it too.
bool KernelReadsImage(const KernelRef& kernel, uint32_t arg);

// DescribeSource fills `info`'s pre-processing fields (BindingInfo) when
// argument `arg` of `kernel` is a Preprocess kernel's source, from the
// kernel's build options alone (so engine files describe it too); returns
// whether it is.
bool DescribeSource(const KernelRef& kernel, uint32_t arg, BindingInfo& info);

}  // namespace recq::internal

#endif  // RECQ_ENGINE_OPS_PREPROCESS_H_
