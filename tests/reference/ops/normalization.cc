// LayerNormalization, InstanceNormalization and GroupNormalization
// (NormalizationAttrs), from ONNX's definitions, in double precision.
#include <cmath>
#include <vector>

#include "recq/math_op_attrs.h"
#include "reference/reference_registry.h"
#include "reference/reference_util.h"

namespace recq::reference {

using namespace detail;  // NOLINT: the helpers of every reference op

namespace {

// Normalises `rows` rows of `d` elements; param(r, j) is the index of the
// scale and bias of element j of row r.
template <typename P>
HostTensor NormalizeRows(const HostTensor& x, const HostTensor& scale, const HostTensor* bias,
                         int64_t rows, int64_t d, float epsilon, P param) {
  HostTensor y{x.shape, std::vector<float>(x.data.size())};
  for (int64_t r = 0; r < rows; ++r) {
    const float* p = x.data.data() + r * d;
    double mean = 0.0;
    for (int64_t j = 0; j < d; ++j) mean += p[j];
    mean /= static_cast<double>(d);
    double var = 0.0;
    for (int64_t j = 0; j < d; ++j) var += (p[j] - mean) * (p[j] - mean);
    var /= static_cast<double>(d);
    const double inv = 1.0 / std::sqrt(var + epsilon);
    for (int64_t j = 0; j < d; ++j) {
      const int64_t k = param(r, j);
      const double v = (p[j] - mean) * inv * scale.data[k] + (bias ? bias->data[k] : 0.0);
      y.data[r * d + j] = static_cast<float>(v);
    }
  }
  return y;
}

absl::Status CheckParams(const HostTensor& t, int64_t n, const char* op, const char* what) {
  if (absl::Status s = CheckWellFormed(t, op, what); !s.ok()) return s;
  if (static_cast<int64_t>(t.data.size()) != n) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": ", what, " has ", t.data.size(), " elements, expected ", n));
  }
  return absl::OkStatus();
}

// ChannelsLast: x [N, C, spatial...] as [N, spatial..., C]; ChannelsFirst
// the inverse.
HostTensor ChannelsLast(const HostTensor& x) {
  const int64_t n = x.shape[0], c = x.shape[1];
  const int64_t s = Product(x.shape, 2, x.shape.size());
  HostTensor t{{n}, std::vector<float>(x.data.size())};
  t.shape.insert(t.shape.end(), x.shape.begin() + 2, x.shape.end());
  t.shape.push_back(c);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t k = 0; k < c; ++k) {
      for (int64_t p = 0; p < s; ++p) t.data[(i * s + p) * c + k] = x.data[(i * c + k) * s + p];
    }
  }
  return t;
}

HostTensor ChannelsFirst(const HostTensor& x) {
  const int64_t n = x.shape[0], c = x.shape.back();
  const int64_t s = Product(x.shape, 1, x.shape.size() - 1);
  HostTensor t{{n, c}, std::vector<float>(x.data.size())};
  t.shape.insert(t.shape.end(), x.shape.begin() + 1, x.shape.end() - 1);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t k = 0; k < c; ++k) {
      for (int64_t p = 0; p < s; ++p) t.data[(i * c + k) * s + p] = x.data[(i * s + p) * c + k];
    }
  }
  return t;
}

absl::StatusOr<HostTensor> LayerNorm(const HostTensor& x, const HostTensor& scale,
                                     const HostTensor* bias, const NormalizationAttrs& a) {
  const char* op = "LayerNormalization";
  if (absl::Status s = CheckWellFormed(x, op, "X"); !s.ok()) return s;
  if (a.channels_first_input || a.channels_first_output) {
    // The rows of the channels-last tensor (x's transpose, or x), written
    // channels first again where asked.
    if (x.shape.size() < 3) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": channels-first rows need rank >= 3"));
    }
    NormalizationAttrs rows = a;
    rows.channels_first_input = rows.channels_first_output = false;
    rows.axis = -1;
    absl::StatusOr<HostTensor> y =
        LayerNorm(a.channels_first_input ? ChannelsLast(x) : x, scale, bias, rows);
    if (!y.ok() || !a.channels_first_output) return y;
    return ChannelsFirst(*y);
  }
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  absl::StatusOr<int64_t> axis = NormalizeAxis(a.axis, rank, false, op);
  if (!axis.ok()) return axis.status();
  const int64_t d = Product(x.shape, *axis, rank);
  if (absl::Status s = CheckParams(scale, d, op, "Scale"); !s.ok()) return s;
  if (bias != nullptr) {
    if (absl::Status s = CheckParams(*bias, d, op, "B"); !s.ok()) return s;
  }
  return NormalizeRows(x, scale, bias, Product(x.shape, 0, *axis), d, a.epsilon,
                       [](int64_t, int64_t j) { return j; });
}

// Instance norm is group norm with one channel per group.
absl::StatusOr<HostTensor> GroupNorm(const HostTensor& x, const HostTensor& scale,
                                     const HostTensor& bias, int64_t groups, bool per_group,
                                     float epsilon, const char* op) {
  if (absl::Status s = CheckWellFormed(x, op, "X"); !s.ok()) return s;
  if (x.shape.size() < 2) return absl::InvalidArgumentError(absl::StrCat(op, ": rank < 2"));
  const int64_t n = x.shape[0], c = x.shape[1];
  const int64_t s = Product(x.shape, 2, x.shape.size());
  if (groups <= 0 || c % groups != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": ", groups, " groups of ", c, " channels"));
  }
  const int64_t per = c / groups;
  const int64_t params = per_group ? groups : c;
  if (absl::Status st = CheckParams(scale, params, op, "scale"); !st.ok()) return st;
  if (absl::Status st = CheckParams(bias, params, op, "bias"); !st.ok()) return st;
  return NormalizeRows(x, scale, &bias, n * groups, per * s, epsilon, [&](int64_t r, int64_t j) {
    const int64_t g = r % groups;
    return per_group ? g : g * per + j / s;
  });
}

}  // namespace

RECQ_REGISTER_REFERENCE(Normalization) {
  if (absl::Status s =
          table.Add(OpType("LayerNormalization"),
                    [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                      if (absl::Status s = CheckArity(node, in, 2, 3); !s.ok()) return s;
                      absl::StatusOr<NormalizationAttrs> a = AttrsOf<NormalizationAttrs>(node);
                      if (!a.ok()) return a.status();
                      return LayerNorm(*in[0], *in[1], Optional(in, 2), *a);
                    });
      !s.ok()) {
    return s;
  }
  if (absl::Status s = table.Add(
          OpType("InstanceNormalization"),
          [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
            if (absl::Status s = CheckArity(node, in, 3, 3); !s.ok()) return s;
            absl::StatusOr<NormalizationAttrs> a = AttrsOf<NormalizationAttrs>(node);
            if (!a.ok()) return a.status();
            const int64_t c = in[0]->shape.size() >= 2 ? in[0]->shape[1] : 1;
            return GroupNorm(*in[0], *in[1], *in[2], c, false, a->epsilon, "InstanceNormalization");
          });
      !s.ok()) {
    return s;
  }
  return table.Add(OpType("GroupNormalization"),
                   [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                     if (absl::Status s = CheckArity(node, in, 3, 3); !s.ok()) return s;
                     absl::StatusOr<NormalizationAttrs> a = AttrsOf<NormalizationAttrs>(node);
                     if (!a.ok()) return a.status();
                     return GroupNorm(*in[0], *in[1], *in[2], a->num_groups, a->per_group_affine,
                                      a->epsilon, "GroupNormalization");
                   });
}

}  // namespace recq::reference
