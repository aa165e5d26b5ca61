// Reductions (ReduceAttrs), from ONNX's definitions, accumulated in double.
#include <cmath>
#include <limits>
#include <vector>

#include "recq/math_op_attrs.h"
#include "reference/reference_registry.h"
#include "reference/reference_util.h"

namespace recq::reference {

using namespace detail;  // NOLINT: the helpers of every reference op

namespace {

enum class Kind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };

absl::StatusOr<HostTensor> Reduce(const HostTensor& x, const ReduceAttrs& a, Kind kind,
                                  const char* op) {
  if (absl::Status s = CheckWellFormed(x, op, "data"); !s.ok()) return s;
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  if (a.axes.empty() && a.noop_with_empty_axes) return x;
  std::vector<bool> reduced(rank, a.axes.empty());
  for (int64_t axis : a.axes) {
    absl::StatusOr<int64_t> ax = NormalizeAxis(axis, rank, false, op);
    if (!ax.ok()) return ax.status();
    if (reduced[*ax]) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": axis ", axis, " is listed twice"));
    }
    reduced[*ax] = true;
  }
  // Output index of every input element (kept dims, row-major).
  std::vector<int64_t> out_shape, kept_shape;
  for (int64_t i = 0; i < rank; ++i) {
    if (!reduced[i]) kept_shape.push_back(x.shape[i]);
    if (!reduced[i] || a.keepdims) out_shape.push_back(reduced[i] ? 1 : x.shape[i]);
  }
  const int64_t outputs = NumElements(kept_shape);
  const int64_t count = x.data.empty() ? 0 : static_cast<int64_t>(x.data.size()) / outputs;
  std::vector<std::vector<double>> groups(outputs);
  std::vector<int64_t> idx(rank, 0);
  for (size_t e = 0; e < x.data.size(); ++e) {
    int64_t o = 0;
    for (int64_t i = 0; i < rank; ++i) {
      if (!reduced[i]) o = o * x.shape[i] + idx[i];
    }
    groups[o].push_back(x.data[e]);
    for (int64_t i = rank - 1; i >= 0; --i) {
      if (++idx[i] < x.shape[i]) break;
      idx[i] = 0;
    }
  }
  HostTensor y{out_shape, std::vector<float>(outputs)};
  for (int64_t o = 0; o < outputs; ++o) {
    const std::vector<double>& g = groups[o];
    double r = 0.0;
    switch (kind) {
      case Kind::kSum:
      case Kind::kMean:
      case Kind::kLogSum:
        for (double v : g) r += v;
        if (kind == Kind::kMean) r /= static_cast<double>(count);
        if (kind == Kind::kLogSum) r = std::log(r);
        break;
      case Kind::kMax:
        r = -std::numeric_limits<double>::infinity();
        for (double v : g) r = std::max(r, v);
        break;
      case Kind::kMin:
        r = std::numeric_limits<double>::infinity();
        for (double v : g) r = std::min(r, v);
        break;
      case Kind::kProd:
        r = 1.0;
        for (double v : g) r *= v;
        break;
      case Kind::kL1:
        for (double v : g) r += std::fabs(v);
        break;
      case Kind::kL2:
      case Kind::kSumSquare:
        for (double v : g) r += v * v;
        if (kind == Kind::kL2) r = std::sqrt(r);
        break;
      case Kind::kLogSumExp:
        for (double v : g) r += std::exp(v);
        r = std::log(r);
        break;
    }
    y.data[o] = static_cast<float>(r);
  }
  return y;
}

}  // namespace

RECQ_REGISTER_REFERENCE(Reduce) {
  const std::pair<const char*, Kind> ops[] = {
      {"ReduceSum", Kind::kSum},       {"ReduceMean", Kind::kMean},
      {"ReduceMax", Kind::kMax},       {"ReduceMin", Kind::kMin},
      {"ReduceProd", Kind::kProd},     {"ReduceL1", Kind::kL1},
      {"ReduceL2", Kind::kL2},         {"ReduceSumSquare", Kind::kSumSquare},
      {"ReduceLogSum", Kind::kLogSum}, {"ReduceLogSumExp", Kind::kLogSumExp},
  };
  for (const auto& [name, kind] : ops) {
    absl::Status s =
        table.Add(OpType(name),
                  [name = name, kind = kind](const Node& node,
                                             ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                    if (absl::Status s = CheckArity(node, in, 1, 1); !s.ok()) return s;
                    absl::StatusOr<ReduceAttrs> a = AttrsOf<ReduceAttrs>(node);
                    if (!a.ok()) return a.status();
                    return Reduce(*in[0], *a, kind, name);
                  });
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace recq::reference
