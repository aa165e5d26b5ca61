#include "reference/reference_registry.h"
#include "reference/reference_util.h"

namespace recq::reference {

using namespace detail;  // NOLINT: the helpers of every reference op

absl::StatusOr<HostTensor> Transpose(const HostTensor& x, absl::Span<const int64_t> perm) {
  if (absl::Status s = CheckWellFormed(x, "Transpose", "X"); !s.ok()) return s;
  const size_t rank = x.shape.size();
  std::vector<int64_t> p(perm.begin(), perm.end());
  if (p.empty()) {
    p.resize(rank);
    for (size_t i = 0; i < rank; ++i) p[i] = static_cast<int64_t>(rank - 1 - i);
  }
  std::vector<int64_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> iota(rank);
  std::iota(iota.begin(), iota.end(), 0);
  if (sorted != iota) {
    return absl::InvalidArgumentError(absl::StrCat("Transpose: perm ", ShapeString(p),
                                                   " is not a permutation of the axes of ",
                                                   ShapeString(x.shape)));
  }
  std::vector<int64_t> out_shape(rank);
  std::vector<int64_t> in_strides_permuted(rank);
  const std::vector<int64_t> in_strides = RowMajorStrides(x.shape);
  for (size_t i = 0; i < rank; ++i) {
    out_shape[i] = x.shape[p[i]];
    in_strides_permuted[i] = in_strides[p[i]];
  }
  HostTensor y{out_shape, std::vector<float>(x.data.size())};
  const std::vector<int64_t> zero(rank, 0);
  ForEachBroadcast(out_shape, in_strides_permuted, zero,
                   [&](int64_t oi, int64_t ii, int64_t) { y.data[oi] = x.data[ii]; });
  return y;
}

RECQ_REGISTER_REFERENCE(Transpose) {
  return table.Add(OpType::kTranspose,
                   [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                     if (absl::Status s = CheckArity(node, in, 1, 1); !s.ok()) return s;
                     absl::StatusOr<TransposeAttrs> a = AttrsOf<TransposeAttrs>(node);
                     if (!a.ok()) return a.status();
                     return Transpose(*in[0], a->perm);
                   });
}

}  // namespace recq::reference
