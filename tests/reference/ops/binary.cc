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
  return absl::OkStatus();
}

}  // namespace recq::reference
