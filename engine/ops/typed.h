// The element-type ops (engine/ops/typed.cc), for the import functions that
// emit them.
#ifndef RECQ_ENGINE_OPS_TYPED_H_
#define RECQ_ENGINE_OPS_TYPED_H_

#include "recq/graph.h"

namespace recq::internal {

// TypedKind numbers an element type for kernels built per type: 0 float,
// 1 half, 2 long, 3 int, 4 char, 5 uchar, 6 bool (the KIND macros of
// typed.cl, mod.cl...). TypedStorage is the OpenCL storage type of its
// elements (ushort for half, uchar for bool); TypedBits the unsigned
// integer type of the element's size, to copy an element as bits.
int TypedKind(DataType t);
const char* TypedStorage(DataType t);
const char* TypedBits(DataType t);

// Cast: y = x converted to `to` (integers truncate toward zero and
// saturate, bool is x != 0, float16 rounds to nearest even).
inline constexpr OpType kCast("Cast");
struct CastAttrs {
  DataType to = DataType::kFloat32;
};

// Where: y = cond ? a : b (cond bool, a and b of one element type), with
// numpy broadcasting over the three.
inline constexpr OpType kWhere("Where");

// Mod (engine/ops/mod.cc): y = a mod b with numpy broadcasting, inputs of
// one numeric type. fmod: C's fmod (the dividend's sign); otherwise
// Python's % (the divisor's sign). An integer divisor of 0 gives 0.
inline constexpr OpType kMod("Mod");
struct ModAttrs {
  bool fmod = false;
};

// ScatterND (engine/ops/scatter_nd.cc): y = data, then for each row r of
// indices [..., k], y[indices[r]] (a slice of data's trailing dims) gets
// updates[r] (kNone) or is combined with it. Negative indices wrap; indices
// still out of range are clamped on the device (ONNX leaves them an error;
// the importer rejects them in constants). With kNone, duplicate rows are
// undefined (ONNX); the reductions apply rows in order.
inline constexpr OpType kScatterND("ScatterND");
enum class ScatterReduction { kNone = 0, kAdd = 1, kMul = 2, kMax = 3, kMin = 4 };
struct ScatterNDAttrs {
  ScatterReduction reduction = ScatterReduction::kNone;
};

// GatherElements (engine/ops/gather_elements.cc): y[..., i_axis, ...] =
// data[..., indices[..., i_axis, ...], ...], y of indices' shape.
inline constexpr OpType kGatherElements("GatherElements");
struct GatherElementsAttrs {
  int64_t axis = 0;
};

// GatherND (engine/ops/gather_nd.cc): y = the slices of data that the
// rows of indices [..., k] name, after `batch_dims` shared leading dims.
inline constexpr OpType kGatherND("GatherND");
struct GatherNDAttrs {
  int64_t batch_dims = 0;
};

}  // namespace recq::internal

#endif  // RECQ_ENGINE_OPS_TYPED_H_
