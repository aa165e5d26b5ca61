#include "reference/reference_registry.h"
#include "reference/reference_util.h"

namespace recq::reference {

using namespace detail;  // NOLINT: the helpers of every reference op

absl::StatusOr<HostTensor> Concat(absl::Span<const HostTensor* const> inputs, int64_t axis) {
  if (inputs.empty() || inputs[0] == nullptr) {
    return absl::InvalidArgumentError("Concat: needs at least one input");
  }
  const std::vector<int64_t>& first = inputs[0]->shape;
  const int64_t rank = static_cast<int64_t>(first.size());
  absl::StatusOr<int64_t> ax = NormalizeAxis(axis, rank, /*inclusive_end=*/false, "Concat");
  if (!ax.ok()) return ax.status();
  std::vector<int64_t> out_shape = first;
  out_shape[*ax] = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const HostTensor* t = inputs[i];
    if (t == nullptr) return absl::InvalidArgumentError("Concat: null input");
    if (absl::Status s = CheckWellFormed(*t, "Concat", "an input"); !s.ok()) return s;
    bool fits = static_cast<int64_t>(t->shape.size()) == rank;
    for (int64_t d = 0; fits && d < rank; ++d) {
      fits = d == *ax || t->shape[d] == first[d];
    }
    if (!fits) {
      return absl::InvalidArgumentError(absl::StrCat("Concat: input ", i, " ",
                                                     ShapeString(t->shape), " does not match ",
                                                     ShapeString(first), " off axis ", *ax));
    }
    out_shape[*ax] += t->shape[*ax];
  }
  const int64_t outer = Product(first, 0, *ax);
  const int64_t inner = Product(first, *ax + 1, rank);
  HostTensor y{out_shape, {}};
  y.data.reserve(NumElements(out_shape));
  for (int64_t o = 0; o < outer; ++o) {
    for (const HostTensor* t : inputs) {
      const int64_t chunk = t->shape[*ax] * inner;
      y.data.insert(y.data.end(), t->data.begin() + o * chunk, t->data.begin() + (o + 1) * chunk);
    }
  }
  return y;
}

RECQ_REGISTER_REFERENCE(Concat) {
  return table.Add(
      OpType::kConcat, [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
        // One or more inputs, all required.
        if (absl::Status s = CheckArity(node, in, in.empty() ? 1 : in.size(), in.size()); !s.ok()) {
          return s;
        }
        absl::StatusOr<ConcatAttrs> a = AttrsOf<ConcatAttrs>(node);
        if (!a.ok()) return a.status();
        return Concat(in, a->axis);
      });
}

}  // namespace recq::reference
