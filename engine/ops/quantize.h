// Linear quantization ops (engine/ops/quantize.cc, engine/ops/integer_matmul.cc)
// for the import functions and tests that build them.
#ifndef RECQ_ENGINE_OPS_QUANTIZE_H_
#define RECQ_ENGINE_OPS_QUANTIZE_H_

#include <array>
#include <cstdint>

#include "recq/graph.h"
#include "recq/op_registry.h"

namespace recq::internal {

// QuantizeLinear: y = saturate(round_half_even(x / scale) + zero_point) in
// the range of `to` (uint8, int8, uint16, int16 or int32). Inputs: x
// (float32 or float16), scale (x's type) and an optional zero point (of
// type `to`; absent: 0). scale and the zero point are per tensor (one
// element), per axis (1-D of x's size along `axis`) or, with block_size
// > 0, per block (x's shape with ceil(x.shape[axis] / block_size) along
// `axis`).
inline constexpr OpType kQuantizeLinear("QuantizeLinear");
// DequantizeLinear: y = (float(x) - float(zero_point)) * scale, of scale's
// type (float32 or float16); x an integer type of 8 to 32 bits and the zero
// point of x's type. scale and zero point as for QuantizeLinear.
inline constexpr OpType kDequantizeLinear("DequantizeLinear");
struct QuantizeAttrs {
  int64_t axis = 1;
  int64_t block_size = 0;
  DataType to = DataType::kUInt8;  // QuantizeLinear's output type
};

// DynamicQuantizeParams: the scale ([] of x's type) or, with `zero_point`,
// the zero point (uint8 []) that ONNX DynamicQuantizeLinear derives from a
// float32 (or float16) x: lo = min(0, min x), hi = max(0, max x), scale = (hi - lo) /
// 255 (1 / 255 when hi == lo), zero point = round_half_even(clamp(-lo /
// scale, 0, 255)).
inline constexpr OpType kDynamicQuantizeParams("DynamicQuantizeParams");
struct DynamicQuantizeParamsAttrs {
  bool zero_point = false;
};

// MatMulInteger: int32 y = (a - a_zero_point) x (b - b_zero_point), numpy
// matmul broadcasting of the batch dimensions (a and b of rank 2 or
// more); a and b int8 or uint8, the products summed exactly in int32.
// Inputs a, b, a_zero_point, b_zero_point (optional; of a's and b's types;
// one element, or per row of a [M] and per column of b [N]).
inline constexpr OpType kMatMulInteger("MatMulInteger");
// QLinearMatMul: the MatMulInteger sum s requantized: y = saturate(
// round_half_even(s * (a_scale * b_scale / y_scale)) + y_zero_point), of
// y_zero_point's type. Inputs a, a_scale, a_zero_point, b, b_scale,
// b_zero_point, y_scale, y_zero_point; a_scale / a_zero_point per tensor
// or per row of a, b_scale / b_zero_point per tensor or per column of b,
// y_scale and y_zero_point per tensor.
inline constexpr OpType kQLinearMatMul("QLinearMatMul");

// ConvInteger: int32 y = conv2d(x - x_zero_point, w - w_zero_point) on NCHW
// int8 / uint8 tensors, summed exactly in int32. Inputs x, w,
// x_zero_point (per tensor), w_zero_point (per tensor or per output
// channel [OC]). Attributes as Conv2D's.
inline constexpr OpType kConvInteger("ConvInteger");
// QLinearConv: the ConvInteger sum s plus the optional int32 bias b[oc],
// requantized: y = saturate(round_half_even((s + b) * (x_scale *
// w_scale[oc] / y_scale)) + y_zero_point). Inputs x, x_scale,
// x_zero_point, w, w_scale (per tensor or per output channel),
// w_zero_point, y_scale, y_zero_point, bias (optional).
inline constexpr OpType kQLinearConv("QLinearConv");

// QuantRange returns the [lo, hi] range of an integer quantized type.
std::array<int64_t, 2> QuantRange(DataType t);

}  // namespace recq::internal

#endif  // RECQ_ENGINE_OPS_QUANTIZE_H_
