// The element-type ops (engine/ops/typed.cc), for the import functions that
// emit them.
#ifndef RECQ_ENGINE_OPS_TYPED_H_
#define RECQ_ENGINE_OPS_TYPED_H_

#include "absl/status/status.h"
#include "recq/graph.h"
#include "recq/op_registry.h"

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

// Element-wise ops on any element type (engine/ops/typed_elementwise.cc),
// with numpy broadcasting of their two inputs.
//
// Comparisons: bool y = a op b, inputs of one element type (bool too for
// Equal).
inline constexpr OpType kEqual("Equal");
inline constexpr OpType kLess("Less");
inline constexpr OpType kLessOrEqual("LessOrEqual");
inline constexpr OpType kGreater("Greater");
inline constexpr OpType kGreaterOrEqual("GreaterOrEqual");
// Logic on bools: y = a and / or / xor b.
inline constexpr OpType kAnd("And");
inline constexpr OpType kOr("Or");
inline constexpr OpType kXor("Xor");
// Integer arithmetic (ONNX Add, Sub, Mul, Div, Min, Max of integer tensors;
// the float ops of binary.cc keep float32 and float16): inputs of one
// integer type, y of that type. Div truncates toward zero; a divisor of 0
// gives 0 (ONNX leaves it undefined). Results wrap on overflow.
inline constexpr OpType kIntAdd("IntAdd");
inline constexpr OpType kIntSub("IntSub");
inline constexpr OpType kIntMul("IntMul");
inline constexpr OpType kIntDiv("IntDiv");
inline constexpr OpType kIntMin("IntMin");
inline constexpr OpType kIntMax("IntMax");
// IntPow (ONNX Pow of an integer base): y = a ^ b exactly, by repeated
// squaring in a's type (wrapping on overflow). A negative exponent gives
// the truncated 1 / a^-b: 1 for a = 1, +-1 for a = -1, otherwise 0.
inline constexpr OpType kIntPow("IntPow");
// BitShiftLeft / BitShiftRight (ONNX BitShift, direction LEFT / RIGHT):
// y = a << b or a >> b of unsigned integers, 0 where b is the type's width
// or more.
inline constexpr OpType kBitShiftLeft("BitShiftLeft");
inline constexpr OpType kBitShiftRight("BitShiftRight");
// IntegerOpFor returns the integer twin of Add, Sub, Mul, Div, Min or Max,
// or `op` itself for any other op.
OpType IntegerOpFor(OpType op);

// Unary: Not (bool), IsNaN and IsInf (float to bool), Sign (any numeric
// type, y of x's type).
inline constexpr OpType kNot("Not");
inline constexpr OpType kIsNaN("IsNaN");
inline constexpr OpType kIsInf("IsInf");
inline constexpr OpType kSign("Sign");
struct IsInfAttrs {
  bool detect_positive = true;
  bool detect_negative = true;
};

// CumSum (engine/ops/scan_ops.cc): y = running sums of x along `axis`
// (the float types and the integers of 16 bits or more); exclusive leaves out the element
// itself, reverse runs from the end.
inline constexpr OpType kCumSum("CumSum");
struct CumSumAttrs {
  int64_t axis = 0;
  bool exclusive = false;
  bool reverse = false;
};

// Trilu (engine/ops/scan_ops.cc): the upper (j - i >= k) or lower
// (j - i <= k) triangle of the last two dimensions, zeros elsewhere; any
// element type.
inline constexpr OpType kTrilu("Trilu");
struct TriluAttrs {
  bool upper = true;
  int64_t k = 0;
};

// ArgMax / ArgMin (engine/ops/scan_ops.cc): int64 index of the largest /
// smallest element along `axis` (the first one, or the last with
// select_last_index); keepdims keeps the axis as 1.
inline constexpr OpType kArgMax("ArgMax");
inline constexpr OpType kArgMin("ArgMin");
struct ArgReduceAttrs {
  int64_t axis = 0;
  bool keepdims = true;
  bool select_last_index = false;
};

// TopK (engine/ops/scan_ops.cc): the k largest (or smallest) elements
// along `axis`, in order (ties: the lower index first), as values
// (indices = false, x's type) or as their int64 indices (indices = true);
// ONNX TopK imports as one node per output.
inline constexpr OpType kTopK("TopK");
struct TopKAttrs {
  int64_t axis = -1;
  int64_t k = 1;
  bool largest = true;
  bool indices = false;
};

// Hardmax (engine/ops/scan_ops.cc): 1 at the first largest element of each
// line along `axis`, 0 elsewhere (float32 or float16). With `coerce` (ONNX
// opsets 1-12) the line is every dimension from `axis` on.
inline constexpr OpType kHardmax("Hardmax");
struct HardmaxAttrs {
  int64_t axis = -1;
  bool coerce = false;
};

// EmitBroadcastCopy emits y = x broadcast to y's shape (numpy rules), the
// elements copied as bits: Expand of any element type.
[[nodiscard]] absl::Status EmitBroadcastCopy(LoweringContext& ctx, const Node& node);

}  // namespace recq::internal

#endif  // RECQ_ENGINE_OPS_TYPED_H_
