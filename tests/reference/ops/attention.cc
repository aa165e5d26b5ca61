// The fused attention op (engine/ops/attention.h), transcribed directly:
// scores, a max-subtracted softmax and the weighted sum of V per query row,
// in double.
#include <cmath>
#include <limits>
#include <tuple>

#include "engine/ops/attention.h"
#include "reference/reference_registry.h"
#include "reference/reference_util.h"

namespace recq::reference {

using namespace detail;  // NOLINT: the helpers of every reference op

namespace {

using internal::AttentionAttrs;
using internal::AttentionView;

absl::Status CheckReach(const AttentionView& v, const HostTensor& t, int64_t batch, int64_t heads,
                        int64_t rows, int64_t cols, const char* what) {
  if (absl::Status s = CheckWellFormed(t, "Attention", what); !s.ok()) return s;
  if (v.batch_mod < 1 || batch % v.batch_mod != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Attention: ", what, " batch_mod ", v.batch_mod, " must divide ", batch));
  }
  const int64_t last = v.Offset(batch - 1, heads - 1, rows - 1, cols - 1);
  if (v.offset < 0 || last >= t.NumElements()) {
    return absl::InvalidArgumentError(absl::StrCat("Attention: the ", what, " view reaches ", last,
                                                   " of ", t.NumElements(), " elements"));
  }
  return absl::OkStatus();
}

absl::StatusOr<HostTensor> Attention(const AttentionAttrs& a, const HostTensor& q,
                                     const HostTensor& k, const HostTensor& v,
                                     const HostTensor* mask) {
  for (auto [view, t, rows, cols, what] :
       {std::tuple{&a.q, &q, a.lq, a.dk, "Q"}, std::tuple{&a.k, &k, a.lk, a.dk, "K"},
        std::tuple{&a.v, &v, a.lk, a.dv, "V"}}) {
    if (absl::Status s = CheckReach(*view, *t, a.batch, a.heads, rows, cols, what); !s.ok()) {
      return s;
    }
  }
  if (mask != nullptr) {
    if (absl::Status s = CheckReach(a.mask, *mask, a.batch, a.heads, a.lq, a.lk, "mask"); !s.ok()) {
      return s;
    }
  }
  HostTensor y{a.out_shape, std::vector<float>(static_cast<size_t>(NumElements(a.out_shape)))};
  if (absl::Status s = CheckReach(a.o, y, a.batch, a.heads, a.lq, a.dv, "output"); !s.ok()) {
    return s;
  }
  std::vector<double> p(static_cast<size_t>(a.lk));
  for (int64_t b = 0; b < a.batch; ++b) {
    for (int64_t h = 0; h < a.heads; ++h) {
      for (int64_t i = 0; i < a.lq; ++i) {
        double max = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < a.lk; ++j) {
          if (a.causal && j > i + a.causal_offset) {
            p[j] = -std::numeric_limits<double>::infinity();
            continue;
          }
          double s = 0.0;
          for (int64_t c = 0; c < a.dk; ++c) {
            s += double{q.data[a.q.Offset(b, h, i, c)]} * double{k.data[a.k.Offset(b, h, j, c)]};
          }
          s *= a.scale;
          if (mask != nullptr) s += mask->data[a.mask.Offset(b, h, i, j)];
          p[j] = s;
          max = std::max(max, s);
        }
        double sum = 0.0;
        for (int64_t j = 0; j < a.lk; ++j) {
          p[j] = std::isinf(max) ? 0.0 : std::exp(p[j] - max);
          sum += p[j];
        }
        for (int64_t c = 0; c < a.dv; ++c) {
          double acc = 0.0;
          for (int64_t j = 0; j < a.lk; ++j) acc += p[j] * v.data[a.v.Offset(b, h, j, c)];
          y.data[a.o.Offset(b, h, i, c)] = sum > 0.0 ? static_cast<float>(acc / sum) : 0.0f;
        }
      }
    }
  }
  return y;
}

}  // namespace

RECQ_REGISTER_REFERENCE(Attention) {
  return table.Add(OpType("Attention"),
                   [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                     if (absl::Status s = CheckArity(node, in, 3, 4); !s.ok()) return s;
                     absl::StatusOr<AttentionAttrs> a = AttrsOf<AttentionAttrs>(node);
                     if (!a.ok()) return a.status();
                     return Attention(*a, *in[0], *in[1], *in[2], Optional(in, 3));
                   });
}

}  // namespace recq::reference
