#include "reference/reference_registry.h"
#include "reference/reference_util.h"

namespace recq::reference {

using namespace detail;  // NOLINT: the helpers of every reference op

absl::StatusOr<std::vector<int64_t>> BroadcastShapes(absl::Span<const int64_t> a,
                                                     absl::Span<const int64_t> b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Dimension i counted from the right; absent dimensions are 1.
    const int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("shapes ", ShapeString(a), " and ", ShapeString(b), " do not broadcast"));
    }
    out[rank - 1 - i] = da == 1 ? db : da;
  }
  return out;
}

absl::StatusOr<HostTensor> Add(const HostTensor& a, const HostTensor& b) {
  return Binary(a, b, "Add", [](float x, float y) { return x + y; });
}
absl::StatusOr<HostTensor> Sub(const HostTensor& a, const HostTensor& b) {
  return Binary(a, b, "Sub", [](float x, float y) { return x - y; });
}
absl::StatusOr<HostTensor> Mul(const HostTensor& a, const HostTensor& b) {
  return Binary(a, b, "Mul", [](float x, float y) { return x * y; });
}
absl::StatusOr<HostTensor> Div(const HostTensor& a, const HostTensor& b) {
  return Binary(a, b, "Div", [](float x, float y) { return x / y; });
}

// Min, Max, Sum and Mean of one or more inputs, broadcast together.
absl::StatusOr<HostTensor> Variadic(ReferenceInputs in, const char* op, double (*f)(double, double),
                                    bool mean) {
  std::vector<int64_t> shape = in[0]->shape;
  for (size_t i = 1; i < in.size(); ++i) {
    absl::StatusOr<std::vector<int64_t>> s = BroadcastShapes(shape, in[i]->shape);
    if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat(op, ": ", s.status().message()));
    shape = *s;
  }
  std::vector<double> acc(NumElements(shape));
  for (size_t i = 0; i < in.size(); ++i) {
    if (absl::Status s = CheckWellFormed(*in[i], op, "input"); !s.ok()) return s;
    const std::vector<int64_t> strides = BroadcastStrides(in[i]->shape, shape.size());
    ForEachBroadcast(shape, strides, strides, [&](int64_t oi, int64_t ii, int64_t) {
      const double v = in[i]->data[ii];
      acc[oi] = i == 0 ? v : f(acc[oi], v);
    });
  }
  HostTensor y{shape, std::vector<float>(acc.size())};
  for (size_t i = 0; i < acc.size(); ++i) {
    y.data[i] = static_cast<float>(mean ? acc[i] / static_cast<double>(in.size()) : acc[i]);
  }
  return y;
}

RECQ_REGISTER_REFERENCE(Binary) {
  using BinaryFn = absl::StatusOr<HostTensor> (*)(const HostTensor&, const HostTensor&);
  const std::pair<OpType, BinaryFn> ops[] = {
      {OpType::kAdd, Add}, {OpType::kSub, Sub}, {OpType::kMul, Mul}, {OpType::kDiv, Div}};
  for (const auto& [op, f] : ops) {
    absl::Status s =
        table.Add(op, [f = f](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
          if (absl::Status s = CheckArity(node, in, 2, 2); !s.ok()) return s;
          return f(*in[0], *in[1]);
        });
    if (!s.ok()) return s;
  }
  // PRelu: x < 0 ? slope * x : x, the slope broadcast to x.
  if (absl::Status s = table.Add(
          OpType("PRelu"),
          [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
            if (absl::Status s = CheckArity(node, in, 2, 2); !s.ok()) return s;
            absl::StatusOr<HostTensor> y = Binary(*in[0], *in[1], "PRelu", [](float x, float s) {
              return x < 0.0f ? static_cast<float>(double{x} * s) : x;
            });
            if (y.ok() && y->shape != in[0]->shape) {
              return absl::InvalidArgumentError("PRelu: the slope does not broadcast to x");
            }
            return y;
          });
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          table.Add(OpType("Pow"),
                    [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                      if (absl::Status s = CheckArity(node, in, 2, 2); !s.ok()) return s;
                      return Binary(*in[0], *in[1], "Pow", [](float x, float e) {
                        return static_cast<float>(std::pow(double{x}, double{e}));
                      });
                    });
      !s.ok()) {
    return s;
  }
  struct VariadicOp {
    const char* name;
    double (*f)(double, double);
    bool mean;
  };
  const VariadicOp variadic[] = {
      {"Min", [](double a, double b) { return std::min(a, b); }, false},
      {"Max", [](double a, double b) { return std::max(a, b); }, false},
      {"Sum", [](double a, double b) { return a + b; }, false},
      {"Mean", [](double a, double b) { return a + b; }, true},
  };
  for (const VariadicOp& v : variadic) {
    absl::Status s = table.Add(
        OpType(v.name), [v](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
          if (absl::Status s = CheckArity(node, in, std::max<size_t>(1, in.size()),
                                          std::max<size_t>(1, in.size()));
              !s.ok()) {
            return s;
          }
          return Variadic(in, v.name, v.f, v.mean);
        });
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace recq::reference
