// ONNX HannWindow, HammingWindow, BlackmanWindow and MelWeightMatrix
// (opset 17 on): tables that depend only on their scalar inputs, computed
// at import in double and rounded once to the output type.
//
// The tables' sizes set the output shape, so they must be known when the
// model is loaded: a constant size folds the op into a constant. A size
// that is a graph input or computed is accepted where the model declares
// the output's static shape (as a graph output or in value_info): the
// table is built for the declared size, and a SizeCheckedConstant node
// copies it on the device after checking the size the model is given at
// run time, writing NaN everywhere when it differs from the declared one.
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/constant_eval.h"
#include "engine/ops/onnx_emitter.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/ops/signal.h"
#include "engine/ops/typed.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

constexpr double kPi = 3.14159265358979323846;

enum class WindowKind { kHann, kHamming, kBlackman };

std::vector<double> WindowTable(WindowKind kind, int64_t size, bool periodic) {
  std::vector<double> w(size, 1.0);
  const double n1 = static_cast<double>(periodic ? size : size - 1);
  if (n1 <= 0) return w;
  for (int64_t i = 0; i < size; ++i) {
    const double t = kPi * static_cast<double>(i) / n1;
    switch (kind) {
      case WindowKind::kHann:
        w[i] = std::sin(t) * std::sin(t);
        break;
      case WindowKind::kHamming:
        w[i] = 25.0 / 46.0 - std::cos(2 * t) * (21.0 / 46.0);
        break;
      case WindowKind::kBlackman:
        w[i] = 0.42 - 0.5 * std::cos(2 * t) + 0.08 * std::cos(4 * t);
        break;
    }
  }
  return w;
}

// MelTable: [dft_length / 2 + 1, bins] triangular filters, as ONNX's
// reference builds them.
absl::StatusOr<std::vector<double>> MelTable(int64_t bins, int64_t dft_length, int64_t sample_rate,
                                             double lower, double upper) {
  const int64_t spectrogram_bins = dft_length / 2 + 1;
  auto to_mel = [](double hz) { return 2595.0 * std::log1p(hz / 700.0) / std::log(10.0); };
  const double lo = to_mel(lower), hi = to_mel(upper);
  const double step = (hi - lo) / static_cast<double>(bins + 2);
  std::vector<int64_t> f(bins + 2);
  for (int64_t i = 0; i < bins + 2; ++i) {
    const double mel = static_cast<double>(i) * step + lo;
    const double hz = 700.0 * std::expm1(mel / 2595.0 * std::log(10.0));
    f[i] = static_cast<int64_t>(
        std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate)));
    if (f[i] < 0 || f[i] >= spectrogram_bins + (i == bins + 1 ? 1 : 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("the mel band edges fall outside the ", spectrogram_bins,
                       " spectrogram bins (upper_edge_hertz above sample_rate / 2?)"));
    }
  }
  std::vector<double> out(spectrogram_bins * bins, 0.0);
  for (int64_t i = 0; i < bins; ++i) {
    const int64_t left = f[i], center = f[i + 1], right = f[i + 2];
    if (center == left) {
      out[center * bins + i] = 1;
    } else {
      for (int64_t j = left; j <= center; ++j) {
        out[j * bins + i] = static_cast<double>(j - left) / static_cast<double>(center - left);
      }
    }
    for (int64_t j = center; j < right; ++j) {
      out[j * bins + i] = static_cast<double>(right - j) / static_cast<double>(right - center);
    }
  }
  return out;
}

absl::StatusOr<DataType> OutputType(OnnxNodeContext& n) {
  RECQ_ASSIGN_OR_RETURN(int64_t onnx_type, n.Int("output_datatype", 1));
  absl::StatusOr<DataType> t = DataTypeFromOnnx(static_cast<int32_t>(onnx_type));
  if (!t.ok() || !IsFloatingPoint(*t)) {
    return n.Unsupported(absl::StrCat("output_datatype ", onnx_type,
                                      " is not supported; expected a floating-point type"));
  }
  return *t;
}

OnnxConstant TableConstant(std::vector<int64_t> dims, const std::vector<double>& values,
                           DataType t) {
  OnnxConstant c;
  c.dims = std::move(dims);
  c.is_float = true;
  c.dtype = t;
  c.floats.assign(values.begin(), values.end());
  if (t == DataType::kFloat64) c.doubles = values;
  return c;
}

// EmitTable makes output 0 `table`: a constant when the size input
// (`size_input`) is one, else a SizeCheckedConstant of it against
// `expected`.
absl::Status EmitTable(OnnxNodeContext& n, bool size_constant, int size_input, int64_t expected,
                       OnnxConstant table) {
  if (size_constant) return n.DefineConstant(std::move(table));
  OnnxNodeEmitter* e = EmitterOf(n);
  if (e == nullptr) return n.Unsupported("a computed size needs the importer's emitter");
  RECQ_ASSIGN_OR_RETURN(ValueId size, n.Input(size_input));
  RECQ_ASSIGN_OR_RETURN(ValueId values, e->AddConstantValue(std::move(table), "table"));
  return n.Emit(kSizeCheckedConstant, {size, values}, SizeCheckedConstantAttrs{expected});
}

// ScalarOf reads input i as one number when it is a constant.
std::optional<double> ScalarOf(OnnxNodeContext& n, int i) {
  absl::StatusOr<const OnnxConstant*> c = n.ConstantInput(i);
  if (!c.ok() || *c == nullptr || (*c)->size() != 1) return std::nullopt;
  return ElementAsDouble(**c, 0);
}

absl::Status ImportWindow(OnnxNodeContext& n, WindowKind kind) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"output_datatype", "periodic"}));
  RECQ_ASSIGN_OR_RETURN(DataType t, OutputType(n));
  RECQ_ASSIGN_OR_RETURN(int64_t periodic, n.Int("periodic", 1));
  std::optional<double> size = ScalarOf(n, 0);
  int64_t length = 0;
  if (size.has_value()) {
    length = SaturatingInt64(*size);
  } else {
    OnnxNodeEmitter* e = EmitterOf(n);
    std::optional<std::vector<int64_t>> declared =
        e != nullptr ? e->DeclaredShape(0) : std::nullopt;
    if (!declared.has_value() || declared->size() != 1) {
      return n.Unsupported(
          "the window's size is computed and the model declares no static 1-D shape for its "
          "output; the size must be known when the model is loaded");
    }
    length = (*declared)[0];
  }
  if (length < 1) return n.Invalid(absl::StrCat("size is ", length, "; expected >= 1"));
  RECQ_RETURN_IF_ERROR(n.ReserveFolded(length));
  return EmitTable(n, size.has_value(), 0, length,
                   TableConstant({length}, WindowTable(kind, length, periodic != 0), t));
}

absl::Status ImportMel(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"output_datatype"}));
  RECQ_ASSIGN_OR_RETURN(DataType t, OutputType(n));
  std::optional<double> p[5];
  for (int i = 0; i < 5; ++i) p[i] = ScalarOf(n, i);
  for (int i = 1; i < 5; ++i) {
    if (!p[i].has_value()) {
      return n.Unsupported(absl::StrCat("input ", i,
                                        " must be a constant scalar (an initializer or a Constant "
                                        "node); computed values are not supported there"));
    }
  }
  const int64_t dft_length = SaturatingInt64(*p[1]);
  const int64_t sample_rate = SaturatingInt64(*p[2]);
  int64_t bins = 0;
  if (p[0].has_value()) {
    bins = SaturatingInt64(*p[0]);
  } else {
    OnnxNodeEmitter* e = EmitterOf(n);
    std::optional<std::vector<int64_t>> declared =
        e != nullptr ? e->DeclaredShape(0) : std::nullopt;
    if (!declared.has_value() || declared->size() != 2) {
      return n.Unsupported(
          "num_mel_bins is computed and the model declares no static 2-D shape for the "
          "output; it must be known when the model is loaded");
    }
    bins = (*declared)[1];
  }
  if (bins < 1 || dft_length < 1 || sample_rate < 1) {
    return n.Invalid(absl::StrCat("num_mel_bins ", bins, ", dft_length ", dft_length,
                                  " and sample_rate ", sample_rate, "; expected >= 1"));
  }
  RECQ_RETURN_IF_ERROR(n.ReserveFolded(Numel({dft_length / 2 + 1, bins})));
  absl::StatusOr<std::vector<double>> table = MelTable(bins, dft_length, sample_rate, *p[3], *p[4]);
  if (!table.ok()) return n.Invalid(table.status().message());
  return EmitTable(n, p[0].has_value(), 0, bins,
                   TableConstant({dft_length / 2 + 1, bins}, *table, t));
}

// --- SizeCheckedConstant ---

absl::StatusOr<TensorDesc> InferChecked(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kSizeCheckedConstant, in, 2, 2));
  RECQ_RETURN_IF_ERROR(AttrsOf<SizeCheckedConstantAttrs>(kSizeCheckedConstant, attrs).status());
  if ((in[0]->dtype != DataType::kInt32 && in[0]->dtype != DataType::kInt64) ||
      in[0]->NumElements() != 1) {
    return Bad(kSizeCheckedConstant,
               absl::StrCat("size is ", in[0]->ToString(), "; expected one int32 or int64"));
  }
  if (!IsFloatingPoint(in[1]->dtype)) {
    return Bad(kSizeCheckedConstant,
               absl::StrCat("table is ", in[1]->ToString(), "; expected a floating-point type"));
  }
  return *in[1];
}

absl::Status LowerChecked(LoweringContext& ctx, const Node& node) {
  const TensorDesc& y = ctx.graph().value(node.outputs[0]).desc;
  const DataType size_t_ = ctx.graph().value(node.inputs[0]).desc.dtype;
  const char* nan = y.dtype == DataType::kFloat16   ? "0x7e00"
                    : y.dtype == DataType::kFloat64 ? "0x7ff8000000000000UL"
                                                    : "0x7fc00000u";
  Dispatch& d = ctx.Emit(MakeDispatch(
      ctx, "signal.cl", "checked_constant", {size_t(y.NumElements())},
      {"-DCHECKED_CONSTANT", absl::StrCat("-DSIZE_T=", TypedStorage(size_t_)),
       absl::StrCat("-DVAL_T=", TypedBits(y.dtype)), absl::StrCat("-DNAN_BITS=", nan)}));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]), ctx.Arg(node.outputs[0])};
  d.args.push_back(
      DispatchArg::Scalar(static_cast<cl_long>(AttrsOr<SizeCheckedConstantAttrs>(node).expected)));
  return absl::OkStatus();
}

}  // namespace

RECQ_REGISTER_OPS(SignalTables) {
  RECQ_RETURN_IF_ERROR(table.AddOnnx({"", "HannWindow", 17, kOnnxOpsetMax, [](OnnxNodeContext& n) {
                                        return ImportWindow(n, WindowKind::kHann);
                                      }}));
  RECQ_RETURN_IF_ERROR(
      table.AddOnnx({"", "HammingWindow", 17, kOnnxOpsetMax,
                     [](OnnxNodeContext& n) { return ImportWindow(n, WindowKind::kHamming); }}));
  RECQ_RETURN_IF_ERROR(
      table.AddOnnx({"", "BlackmanWindow", 17, kOnnxOpsetMax,
                     [](OnnxNodeContext& n) { return ImportWindow(n, WindowKind::kBlackman); }}));
  RECQ_RETURN_IF_ERROR(table.AddOnnx({"", "MelWeightMatrix", 17, kOnnxOpsetMax, ImportMel}));
  OpDef checked;
  checked.type = kSizeCheckedConstant;
  checked.typed = true;
  checked.infer = InferChecked;
  checked.variants = {{"checked_constant", nullptr, LowerChecked}};
  return table.Add(std::move(checked));
}

}  // namespace recq::internal
