// Comparisons, logic, integer arithmetic, IsNaN, IsInf and Sign
// (engine/ops/typed_elementwise.cc), and CumSum, Trilu, ArgMax and ArgMin
// (engine/ops/scan_ops.cc), from ONNX's definitions. Values travel as
// floats (see HostTensor); integer results wrap to their type as the
// device's do.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>

#include "engine/ops/typed.h"
#include "reference/reference_registry.h"
#include "reference/reference_util.h"

namespace recq::reference {
namespace {

using namespace detail;  // NOLINT: the helpers of every reference op

double IntegerOp(OpType op, double a, double b) {
  const int64_t x = static_cast<int64_t>(a), m = static_cast<int64_t>(b);
  if (op == internal::kIntAdd) return static_cast<double>(x + m);
  if (op == internal::kIntSub) return static_cast<double>(x - m);
  if (op == internal::kIntMul) return static_cast<double>(x * m);
  if (op == internal::kIntDiv) return m == 0 ? 0.0 : static_cast<double>(x / m);
  if (op == internal::kIntMin) return static_cast<double>(x < m ? x : m);
  if (op == internal::kIntPow) {
    // ONNX Pow of integers: repeated multiplication (wrapped to the type by
    // the caller); a negative exponent truncates 1 / x^-m.
    if (m < 0) return x == 1 ? 1.0 : (x == -1 ? (m % 2 != 0 ? -1.0 : 1.0) : 0.0);
    uint64_t r = 1;
    for (int64_t k = 0; k < m; ++k) r *= static_cast<uint64_t>(x);
    return static_cast<double>(static_cast<int64_t>(r));
  }
  return static_cast<double>(x > m ? x : m);
}

// The same ops on float64, which runs them too (the float32 kernels of
// Add, Sub, Mul, Div, Min and Max do not take it): IEEE arithmetic.
double FloatOp(OpType op, double a, double b) {
  if (op == internal::kIntAdd) return a + b;
  if (op == internal::kIntSub) return a - b;
  if (op == internal::kIntMul) return a * b;
  if (op == internal::kIntDiv) return a / b;
  if (op == internal::kIntMin) return std::min(a, b);
  return std::max(a, b);
}

using BinaryFn = std::function<double(double, double)>;

// AddBinary registers `f` for `op`; with `float_f`, float64 inputs take it
// instead.
absl::Status AddBinary(ReferenceTable& table, OpType op, bool bool_out, BinaryFn f,
                       BinaryFn float_f = nullptr) {
  return table.Add(op,
                   [op, bool_out, f, float_f](const Node& node,
                                              ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                     if (absl::Status s = CheckArity(node, in, 2, 2); !s.ok()) return s;
                     const BinaryFn& fn =
                         float_f && in[0]->dtype == DataType::kFloat64 ? float_f : f;
                     absl::StatusOr<HostTensor> y =
                         Binary(*in[0], *in[1], OpTypeName(op), [&](float a, float b) {
                           const double r = fn(a, b);
                           return static_cast<float>(bool_out ? r : WrapTo(r, in[0]->dtype));
                         });
                     if (!y.ok()) return y.status();
                     y->dtype = bool_out ? DataType::kBool : in[0]->dtype;
                     return y;
                   });
}

// One line along `axis` of `shape`: outer, length and inner extents.
struct Lines {
  int64_t outer, len, inner;
};
absl::StatusOr<Lines> LinesOf(const std::vector<int64_t>& shape, int64_t axis) {
  absl::StatusOr<int64_t> a = NormalizeAxis(axis, static_cast<int64_t>(shape.size()), false, "op");
  if (!a.ok()) return a.status();
  return Lines{Product(shape, 0, *a), shape[*a], Product(shape, *a + 1, shape.size())};
}

}  // namespace

RECQ_REGISTER_REFERENCE(TypedElementwise) {
  const struct {
    OpType op;
    BinaryFn f;
  } compares[] = {
      {internal::kEqual, [](double a, double b) { return a == b; }},
      {internal::kLess, [](double a, double b) { return a < b; }},
      {internal::kLessOrEqual, [](double a, double b) { return a <= b; }},
      {internal::kGreater, [](double a, double b) { return a > b; }},
      {internal::kGreaterOrEqual, [](double a, double b) { return a >= b; }},
      {internal::kAnd, [](double a, double b) { return a != 0 && b != 0; }},
      {internal::kOr, [](double a, double b) { return a != 0 || b != 0; }},
      {internal::kXor, [](double a, double b) { return (a != 0) != (b != 0); }},
  };
  for (const auto& c : compares) {
    if (absl::Status s = AddBinary(table, c.op, true, c.f); !s.ok()) return s;
  }
  // BitShift of unsigned integers: 0 from the type's width on, the result
  // wrapped to the type.
  for (bool left : {true, false}) {
    const OpType op = left ? internal::kBitShiftLeft : internal::kBitShiftRight;
    if (absl::Status s = table.Add(
            op,
            [op, left](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
              if (absl::Status s = CheckArity(node, in, 2, 2); !s.ok()) return s;
              const int bits = static_cast<int>(DataTypeSize(in[0]->dtype)) * 8;
              absl::StatusOr<HostTensor> y =
                  Binary(*in[0], *in[1], OpTypeName(op), [&](float a, float b) {
                    const uint64_t x = static_cast<uint64_t>(a), m = static_cast<uint64_t>(b);
                    if (m >= static_cast<uint64_t>(bits)) return 0.0f;
                    uint64_t r = left ? x << m : x >> m;
                    if (bits < 64) r &= (uint64_t{1} << bits) - 1;
                    return static_cast<float>(r);
                  });
              if (!y.ok()) return y.status();
              y->dtype = in[0]->dtype;
              return y;
            });
        !s.ok()) {
      return s;
    }
  }
  for (OpType op : {internal::kIntAdd, internal::kIntSub, internal::kIntMul, internal::kIntDiv,
                    internal::kIntMin, internal::kIntMax, internal::kIntPow}) {
    if (absl::Status s = AddBinary(
            table, op, false, [op](double a, double b) { return IntegerOp(op, a, b); },
            [op](double a, double b) { return FloatOp(op, a, b); });
        !s.ok()) {
      return s;
    }
  }

  const struct {
    OpType op;
    bool bool_out;
  } unaries[] = {{internal::kNot, true},
                 {internal::kIsNaN, true},
                 {internal::kIsInf, true},
                 {internal::kSign, false}};
  for (const auto& u : unaries) {
    const OpType op = u.op;
    const bool bool_out = u.bool_out;
    absl::Status s = table.Add(
        op, [op, bool_out](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
          if (absl::Status s = CheckArity(node, in, 1, 1); !s.ok()) return s;
          absl::StatusOr<internal::IsInfAttrs> inf = AttrsOf<internal::IsInfAttrs>(node);
          if (!inf.ok()) return inf.status();
          HostTensor y = *in[0];
          for (float& v : y.data) {
            if (op == internal::kNot) {
              v = v == 0 ? 1.0f : 0.0f;
            } else if (op == internal::kIsNaN) {
              v = std::isnan(v) ? 1.0f : 0.0f;
            } else if (op == internal::kIsInf) {
              v = std::isinf(v) && (v > 0 ? inf->detect_positive : inf->detect_negative) ? 1.0f
                                                                                         : 0.0f;
            } else {
              v = v > 0 ? 1.0f : (v < 0 ? -1.0f : v);
            }
          }
          if (bool_out) y.dtype = DataType::kBool;
          return y;
        });
    if (!s.ok()) return s;
  }

  if (absl::Status s = table.Add(
          internal::kCumSum,
          [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
            if (absl::Status s = CheckArity(node, in, 1, 1); !s.ok()) return s;
            absl::StatusOr<internal::CumSumAttrs> a = AttrsOf<internal::CumSumAttrs>(node);
            if (!a.ok()) return a.status();
            absl::StatusOr<Lines> l = LinesOf(in[0]->shape, a->axis);
            if (!l.ok()) return l.status();
            const bool integral = IsIntegral(in[0]->dtype);
            HostTensor y = *in[0];
            for (int64_t o = 0; o < l->outer; ++o) {
              for (int64_t i = 0; i < l->inner; ++i) {
                // Summed in the order and the type the device uses.
                float acc = 0.0f;
                double iacc = 0.0;
                for (int64_t k = 0; k < l->len; ++k) {
                  const int64_t j = a->reverse ? l->len - 1 - k : k;
                  const int64_t idx = (o * l->len + j) * l->inner + i;
                  const float v = in[0]->data[idx];
                  const float before = integral ? static_cast<float>(iacc) : acc;
                  acc += v;
                  iacc = WrapTo(iacc + v, in[0]->dtype);
                  const float after = integral ? static_cast<float>(iacc) : acc;
                  y.data[idx] = a->exclusive ? before : after;
                }
              }
            }
            if (in[0]->dtype == DataType::kFloat16) {
              for (float& v : y.data) v = HalfToFloat(FloatToHalf(v));
            }
            return y;
          });
      !s.ok()) {
    return s;
  }

  if (absl::Status s =
          table.Add(internal::kTrilu,
                    [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                      if (absl::Status s = CheckArity(node, in, 1, 1); !s.ok()) return s;
                      absl::StatusOr<internal::TriluAttrs> a = AttrsOf<internal::TriluAttrs>(node);
                      if (!a.ok()) return a.status();
                      const size_t r = in[0]->shape.size();
                      if (r < 2) return absl::InvalidArgumentError("Trilu: rank < 2");
                      const int64_t rows = in[0]->shape[r - 2], cols = in[0]->shape[r - 1];
                      HostTensor y = *in[0];
                      for (int64_t i = 0; i < y.NumElements(); ++i) {
                        const int64_t c = i % cols, row = (i / cols) % rows;
                        const bool keep = a->upper ? c - row >= a->k : c - row <= a->k;
                        if (!keep) y.data[i] = 0.0f;
                      }
                      return y;
                    });
      !s.ok()) {
    return s;
  }

  for (OpType op : {internal::kArgMax, internal::kArgMin}) {
    const bool is_max = op == internal::kArgMax;
    absl::Status s =
        table.Add(op, [is_max](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
          if (absl::Status s = CheckArity(node, in, 1, 1); !s.ok()) return s;
          absl::StatusOr<internal::ArgReduceAttrs> a = AttrsOf<internal::ArgReduceAttrs>(node);
          if (!a.ok()) return a.status();
          absl::StatusOr<Lines> l = LinesOf(in[0]->shape, a->axis);
          if (!l.ok()) return l.status();
          const int64_t rank = static_cast<int64_t>(in[0]->shape.size());
          const int64_t axis = a->axis < 0 ? a->axis + rank : a->axis;
          std::vector<int64_t> shape;
          for (int64_t d = 0; d < rank; ++d) {
            if (d != axis) {
              shape.push_back(in[0]->shape[d]);
            } else if (a->keepdims) {
              shape.push_back(1);
            }
          }
          HostTensor y{shape, std::vector<float>(l->outer * l->inner), DataType::kInt64};
          for (int64_t o = 0; o < l->outer; ++o) {
            for (int64_t i = 0; i < l->inner; ++i) {
              int64_t best = 0;
              float best_v = in[0]->data[o * l->len * l->inner + i];
              for (int64_t k = 1; k < l->len; ++k) {
                const float v = in[0]->data[(o * l->len + k) * l->inner + i];
                const bool better = is_max ? (a->select_last_index ? v >= best_v : v > best_v)
                                           : (a->select_last_index ? v <= best_v : v < best_v);
                if (better) {
                  best = k;
                  best_v = v;
                }
              }
              y.data[o * l->inner + i] = static_cast<float>(best);
            }
          }
          return y;
        });
    if (!s.ok()) return s;
  }
  if (absl::Status s = table.Add(
          internal::kHardmax,
          [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
            if (absl::Status s = CheckArity(node, in, 1, 1); !s.ok()) return s;
            absl::StatusOr<internal::HardmaxAttrs> a = AttrsOf<internal::HardmaxAttrs>(node);
            if (!a.ok()) return a.status();
            absl::StatusOr<Lines> l = LinesOf(in[0]->shape, a->axis);
            if (!l.ok()) return l.status();
            if (a->coerce) *l = Lines{l->outer, l->len * l->inner, 1};
            HostTensor y = *in[0];
            for (int64_t o = 0; o < l->outer; ++o) {
              for (int64_t i = 0; i < l->inner; ++i) {
                int64_t best = 0;
                for (int64_t k = 0; k < l->len; ++k) {
                  const int64_t at = (o * l->len + k) * l->inner + i;
                  if (in[0]->data[at] > in[0]->data[(o * l->len + best) * l->inner + i]) best = k;
                }
                for (int64_t k = 0; k < l->len; ++k) {
                  y.data[(o * l->len + k) * l->inner + i] = k == best ? 1.0f : 0.0f;
                }
              }
            }
            return y;
          });
      !s.ok()) {
    return s;
  }
  return table.Add(
      internal::kTopK, [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
        if (absl::Status s = CheckArity(node, in, 1, 1); !s.ok()) return s;
        absl::StatusOr<internal::TopKAttrs> a = AttrsOf<internal::TopKAttrs>(node);
        if (!a.ok()) return a.status();
        absl::StatusOr<Lines> l = LinesOf(in[0]->shape, a->axis);
        if (!l.ok()) return l.status();
        if (a->k < 1 || a->k > l->len) return absl::InvalidArgumentError("TopK: bad k");
        const int64_t rank = static_cast<int64_t>(in[0]->shape.size());
        HostTensor y{in[0]->shape, std::vector<float>(l->outer * a->k * l->inner),
                     a->indices ? DataType::kInt64 : in[0]->dtype};
        y.shape[a->axis < 0 ? a->axis + rank : a->axis] = a->k;
        for (int64_t o = 0; o < l->outer; ++o) {
          for (int64_t i = 0; i < l->inner; ++i) {
            std::vector<int64_t> order(l->len);
            for (int64_t e = 0; e < l->len; ++e) order[e] = e;
            auto value = [&](int64_t e) { return in[0]->data[(o * l->len + e) * l->inner + i]; };
            // Ties keep the lower index first (a stable sort of indices).
            std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) {
              return a->largest ? value(p) > value(q) : value(p) < value(q);
            });
            for (int64_t j = 0; j < a->k; ++j) {
              y.data[(o * a->k + j) * l->inner + i] =
                  a->indices ? static_cast<float>(order[j]) : value(order[j]);
            }
          }
        }
        return y;
      });
}

}  // namespace recq::reference
