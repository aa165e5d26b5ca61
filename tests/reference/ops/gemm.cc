#include "reference/reference_registry.h"
#include "reference/reference_util.h"

namespace recq::reference {

using namespace detail;  // NOLINT: the helpers of every reference op

absl::StatusOr<HostTensor> Gemm(const HostTensor& a, const HostTensor& b, const HostTensor* c,
                                const GemmAttrs& attrs) {
  if (absl::Status s = CheckRank(a, 2, "Gemm", "A"); !s.ok()) return s;
  if (absl::Status s = CheckRank(b, 2, "Gemm", "B"); !s.ok()) return s;
  const int64_t m_size = attrs.trans_a ? a.shape[1] : a.shape[0];
  const int64_t k_size = attrs.trans_a ? a.shape[0] : a.shape[1];
  const int64_t kb = attrs.trans_b ? b.shape[1] : b.shape[0];
  const int64_t n_size = attrs.trans_b ? b.shape[0] : b.shape[1];
  if (k_size != kb) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Gemm: inner dimensions differ: A ", ShapeString(a.shape), (attrs.trans_a ? "^T" : ""),
        " and B ", ShapeString(b.shape), (attrs.trans_b ? "^T" : "")));
  }
  std::vector<int64_t> c_strides = {0, 0};
  if (c != nullptr) {
    if (absl::Status s = CheckWellFormed(*c, "Gemm", "C"); !s.ok()) return s;
    const std::vector<int64_t> target = {m_size, n_size};
    absl::StatusOr<std::vector<int64_t>> bs = BroadcastShapes(c->shape, target);
    if (c->shape.size() > 2 || !bs.ok() || *bs != target) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Gemm: C ", ShapeString(c->shape), " does not broadcast to [", m_size, ",", n_size, "]"));
    }
    c_strides = BroadcastStrides(c->shape, 2);
  }
  const std::vector<float> am = AsMatrix(a, attrs.trans_a);
  const std::vector<float> bm = AsMatrix(b, attrs.trans_b);
  std::vector<double> acc(m_size * n_size);
  MatMulInto(am.data(), bm.data(), m_size, k_size, n_size, acc);
  HostTensor y{{m_size, n_size}, std::vector<float>(m_size * n_size)};
  for (int64_t m = 0; m < m_size; ++m) {
    for (int64_t n = 0; n < n_size; ++n) {
      double v = static_cast<double>(attrs.alpha) * acc[m * n_size + n];
      if (c != nullptr) {
        v += static_cast<double>(attrs.beta) * c->data[m * c_strides[0] + n * c_strides[1]];
      }
      y.data[m * n_size + n] = static_cast<float>(v);
    }
  }
  return y;
}

absl::StatusOr<HostTensor> MatMul(const HostTensor& a, const HostTensor& b) {
  if (absl::Status s = CheckWellFormed(a, "MatMul", "A"); !s.ok()) return s;
  if (absl::Status s = CheckWellFormed(b, "MatMul", "B"); !s.ok()) return s;
  if (a.shape.empty() || b.shape.empty()) {
    return absl::InvalidArgumentError("MatMul: inputs must have rank >= 1");
  }
  std::vector<int64_t> as = a.shape;
  std::vector<int64_t> bs = b.shape;
  if (as.size() == 1) as.insert(as.begin(), 1);
  if (bs.size() == 1) bs.push_back(1);
  const int64_t m_size = as[as.size() - 2];
  const int64_t k_size = as[as.size() - 1];
  const int64_t n_size = bs[bs.size() - 1];
  if (bs[bs.size() - 2] != k_size) {
    return absl::InvalidArgumentError(absl::StrCat("MatMul: inner dimensions differ: A ",
                                                   ShapeString(a.shape), " and B ",
                                                   ShapeString(b.shape)));
  }
  const std::vector<int64_t> a_batch(as.begin(), as.end() - 2);
  const std::vector<int64_t> b_batch(bs.begin(), bs.end() - 2);
  absl::StatusOr<std::vector<int64_t>> batch = BroadcastShapes(a_batch, b_batch);
  if (!batch.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("MatMul: batch dimensions of A ",
                                                   ShapeString(a.shape), " and B ",
                                                   ShapeString(b.shape), " do not broadcast"));
  }
  const int64_t batches = NumElements(*batch);
  std::vector<float> out(batches * m_size * n_size);
  std::vector<double> acc(m_size * n_size);
  // Batch element strides are in units of whole matrices.
  ForEachBroadcast(*batch, BroadcastStrides(a_batch, batch->size()),
                   BroadcastStrides(b_batch, batch->size()),
                   [&](int64_t oi, int64_t ai, int64_t bi) {
                     MatMulInto(a.data.data() + ai * m_size * k_size,
                                b.data.data() + bi * k_size * n_size, m_size, k_size, n_size, acc);
                     for (size_t i = 0; i < acc.size(); ++i) {
                       out[oi * m_size * n_size + i] = static_cast<float>(acc[i]);
                     }
                   });
  std::vector<int64_t> shape = *batch;
  if (a.shape.size() > 1) shape.push_back(m_size);
  if (b.shape.size() > 1) shape.push_back(n_size);
  return HostTensor{std::move(shape), std::move(out)};
}

RECQ_REGISTER_REFERENCE(Gemm) {
  absl::Status s = table.Add(
      OpType::kGemm, [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
        if (absl::Status s = CheckArity(node, in, 2, 3); !s.ok()) return s;
        absl::StatusOr<GemmAttrs> a = AttrsOf<GemmAttrs>(node);
        if (!a.ok()) return a.status();
        return Gemm(*in[0], *in[1], Optional(in, 2), *a);
      });
  if (!s.ok()) return s;
  return table.Add(OpType::kMatMul,
                   [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                     if (absl::Status s = CheckArity(node, in, 2, 2); !s.ok()) return s;
                     return MatMul(*in[0], *in[1]);
                   });
}

}  // namespace recq::reference
