// CPU reference implementations of every recq op, for tests.
//
// Each function transcribes the op's ONNX definition directly: float32
// storage, double accumulation, dense row-major tensors. They are written to
// be obviously correct first; loop orders are only chosen so that a
// MobileNet-size model still runs in well under a second.
//
// The functions use the attribute structs of recq/graph.h but not Graph
// itself. Each computes its own output shape, independently of recq's shape
// inference, and returns InvalidArgument naming what does not fit when the
// inputs are inconsistent with the op. They are pure and thread-safe.
#ifndef RECQ_TESTS_REFERENCE_REFERENCE_OPS_H_
#define RECQ_TESTS_REFERENCE_REFERENCE_OPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "recq/graph.h"

namespace recq::reference {

// HostTensor is a dense row-major float32 tensor in host memory. It is
// well-formed when data.size() equals the product of shape (1 for {}).
struct HostTensor {
  std::vector<int64_t> shape;
  // The elements as floats: integers and bools (0/1) of the other element
  // types are exact in a float up to 2^24, which every test stays within.
  std::vector<float> data;
  DataType dtype = DataType::kFloat32;

  // NumElements returns the product of `shape` (1 for a scalar).
  int64_t NumElements() const;
};

// NumElements returns the product of `shape` (1 for an empty shape).
int64_t NumElements(absl::Span<const int64_t> shape);
// ShapeString renders {2, 3} as "[2,3]".
std::string ShapeString(absl::Span<const int64_t> shape);

// ApplyActivation returns `activation` applied to `x` (x itself for kNone).
// kClip clamps to [alpha, beta]; kLeakyRelu uses slope alpha; kHardSigmoid
// computes clamp(alpha * x + beta, 0, 1).
float ApplyActivation(const Activation& activation, float x);
// ApplyActivation applies `activation` to every element of `t` in place.
void ApplyActivation(const Activation& activation, HostTensor& t);

// Conv2D: x [N,C,H,W], w [OC,C/groups,KH,KW], optional bias [OC] (nullptr if
// absent); returns [N,OC,OH,OW] with
// OH = floor((H + pad_top + pad_bottom - dilation * (KH - 1) - 1) / stride) + 1.
[[nodiscard]] absl::StatusOr<HostTensor> Conv2D(const HostTensor& x, const HostTensor& w,
                                                const HostTensor* bias, const Conv2DAttrs& attrs);

// BatchNorm (inference): x [N,C,...] and per-channel scale, bias, mean, var
// of shape [C]; y = (x - mean) / sqrt(var + epsilon) * scale + bias.
[[nodiscard]] absl::StatusOr<HostTensor> BatchNorm(const HostTensor& x, const HostTensor& scale,
                                                   const HostTensor& bias, const HostTensor& mean,
                                                   const HostTensor& var,
                                                   const BatchNormAttrs& attrs);

// Element-wise activations; the output has the input's shape.
HostTensor Relu(const HostTensor& x);
HostTensor Clip(const HostTensor& x, float min, float max);
HostTensor LeakyRelu(const HostTensor& x, float alpha);
HostTensor Sigmoid(const HostTensor& x);
HostTensor HardSigmoid(const HostTensor& x, float alpha, float beta);
HostTensor HardSwish(const HostTensor& x);

// BroadcastShapes returns the numpy multidirectional broadcast of `a` and
// `b`, or InvalidArgument if a dimension pair is neither equal nor has a 1.
[[nodiscard]] absl::StatusOr<std::vector<int64_t>> BroadcastShapes(absl::Span<const int64_t> a,
                                                                   absl::Span<const int64_t> b);

// Binary element-wise ops with numpy broadcasting. Division follows IEEE
// float semantics (x / 0 is +-inf or NaN).
[[nodiscard]] absl::StatusOr<HostTensor> Add(const HostTensor& a, const HostTensor& b);
[[nodiscard]] absl::StatusOr<HostTensor> Sub(const HostTensor& a, const HostTensor& b);
[[nodiscard]] absl::StatusOr<HostTensor> Mul(const HostTensor& a, const HostTensor& b);
[[nodiscard]] absl::StatusOr<HostTensor> Div(const HostTensor& a, const HostTensor& b);

// PoolOutputSize returns the ONNX pooled size of one spatial dimension:
// floor or (ceil_mode) ceil of (in + pad_begin + pad_end - dilation*(k-1) - 1)
// / stride, plus one; with ceil_mode a last window that would start in the
// end padding (at or past in + pad_begin) is dropped.
[[nodiscard]] absl::StatusOr<int64_t> PoolOutputSize(int64_t in, int64_t kernel, int64_t stride,
                                                     int64_t dilation, int64_t pad_begin,
                                                     int64_t pad_end, bool ceil_mode);

// MaxPool: x [N,C,H,W]. Padding never wins: only taps inside the input count.
// A window with no tap inside the input yields -infinity.
[[nodiscard]] absl::StatusOr<HostTensor> MaxPool(const HostTensor& x, const PoolAttrs& attrs);
// AveragePool: x [N,C,H,W]. The sum is over taps inside the input; the
// divisor is the number of taps inside the input, or with count_include_pad
// the number of taps inside the explicitly padded extent
// [-pad_begin, in + pad_end) (taps past it, which only ceil_mode produces,
// never count; this matches PyTorch and onnxruntime). A window with a zero
// divisor yields 0.
[[nodiscard]] absl::StatusOr<HostTensor> AveragePool(const HostTensor& x, const PoolAttrs& attrs);
// GlobalAveragePool: x [N,C,d1,...] (rank >= 3) -> [N,C,1,...], the mean over
// all spatial positions.
[[nodiscard]] absl::StatusOr<HostTensor> GlobalAveragePool(const HostTensor& x);

// Gemm: y = alpha * A' * B' + beta * C, where A' is a [M,K] (or a^T with
// trans_a), B' is b [K,N] (or b^T with trans_b), and C (nullptr if absent)
// broadcasts unidirectionally to [M,N] (shapes {}, [N], [1,N], [M,1],
// [M,N]...). Returns [M,N].
[[nodiscard]] absl::StatusOr<HostTensor> Gemm(const HostTensor& a, const HostTensor& b,
                                              const HostTensor* c, const GemmAttrs& attrs);
// MatMul with numpy semantics: a 1-D `a` gets a leading 1 and a 1-D `b` a
// trailing 1, both removed from the result; batch dimensions broadcast.
[[nodiscard]] absl::StatusOr<HostTensor> MatMul(const HostTensor& a, const HostTensor& b);

// Flatten: axis in [-rank, rank]; returns [prod(d[:axis]), prod(d[axis:])].
[[nodiscard]] absl::StatusOr<HostTensor> Flatten(const HostTensor& x, int64_t axis);
// ReshapeOutputShape resolves an ONNX Reshape target: 0 copies the input's
// dimension at that index (unless allow_zero), one -1 is inferred.
[[nodiscard]] absl::StatusOr<std::vector<int64_t>> ReshapeOutputShape(
    absl::Span<const int64_t> input_shape, const ReshapeAttrs& attrs);
// Reshape copies the data unchanged under the resolved shape.
[[nodiscard]] absl::StatusOr<HostTensor> Reshape(const HostTensor& x, const ReshapeAttrs& attrs);
// Transpose: y.shape[i] = x.shape[perm[i]]; an empty perm reverses the axes.
[[nodiscard]] absl::StatusOr<HostTensor> Transpose(const HostTensor& x,
                                                   absl::Span<const int64_t> perm);
// Concat along `axis` (negative counts from the end); every other dimension
// must match. `inputs` holds at least one non-null tensor.
[[nodiscard]] absl::StatusOr<HostTensor> Concat(absl::Span<const HostTensor* const> inputs,
                                                int64_t axis);
// Softmax, numerically stable (the maximum is subtracted first). With
// coerce_to_2d (ONNX opset < 13) the input is viewed as
// [prod(d[:axis]), prod(d[axis:])] and each row is normalized; otherwise
// (opset >= 13) the softmax runs over dimension `axis` alone.
[[nodiscard]] absl::StatusOr<HostTensor> Softmax(const HostTensor& x, const SoftmaxAttrs& attrs);
// Identity returns a copy of x.
HostTensor Identity(const HostTensor& x);

}  // namespace recq::reference

#endif  // RECQ_TESTS_REFERENCE_REFERENCE_OPS_H_
