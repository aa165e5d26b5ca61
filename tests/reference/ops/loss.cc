// NegativeLogLikelihoodLoss (engine/ops/loss.cc) from ONNX's definition,
// in double: loss[n, d...] = -x[n, t, d...] * weight[t] (weight 1 without
// one), 0 with weight 0 where t is ignore_index; mean divides the sum of
// the losses by the sum of their weights. Labels outside [0, C) that are
// not ignored are an error here (the device clamps them).
#include <cmath>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/ops/loss.h"
#include "reference/reference_registry.h"
#include "reference/reference_util.h"

namespace recq::reference {

RECQ_REGISTER_REFERENCE(Loss) {
  return table.Add(
      internal::kNegativeLogLikelihoodLoss,
      [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
        if (absl::Status s = CheckArity(node, in, 2, 3); !s.ok()) return s;
        absl::StatusOr<internal::NllLossAttrs> a = AttrsOf<internal::NllLossAttrs>(node);
        if (!a.ok()) return a.status();
        const HostTensor& x = *in[0];
        const HostTensor& t = *in[1];
        const HostTensor* w = Optional(in, 2);
        if (x.shape.size() < 2) return absl::InvalidArgumentError("NLL scores of rank < 2");
        const int64_t n = x.shape[0], c = x.shape[1];
        const int64_t inner = x.NumElements() / (n * c);
        if (t.NumElements() != n * inner) {
          return absl::InvalidArgumentError("NLL target does not match the scores");
        }
        std::vector<double> losses(t.NumElements()), weights(t.NumElements());
        for (int64_t i = 0; i < t.NumElements(); ++i) {
          const int64_t label = static_cast<int64_t>(t.data[i]);
          if (a->has_ignore_index && label == a->ignore_index) continue;
          if (label < 0 || label >= c) {
            return absl::InvalidArgumentError(
                absl::StrCat("NLL label ", label, " is outside [0, ", c, ") and not ignored"));
          }
          const double weight = w != nullptr ? w->data[label] : 1.0;
          const int64_t b = i / inner, d = i % inner;
          losses[i] = -double(x.data[(b * c + label) * inner + d]) * weight;
          weights[i] = weight;
        }
        auto rounded = [&](double v) {
          return x.dtype == DataType::kFloat16 ? HalfToFloat(FloatToHalf(float(v))) : float(v);
        };
        if (a->reduction == internal::LossReduction::kNone) {
          HostTensor y{t.shape, std::vector<float>(losses.size()), x.dtype};
          for (size_t i = 0; i < losses.size(); ++i) y.data[i] = rounded(losses[i]);
          return y;
        }
        double sum = 0, weight_sum = 0;
        for (size_t i = 0; i < losses.size(); ++i) {
          sum += losses[i];
          weight_sum += weights[i];
        }
        const double r = a->reduction == internal::LossReduction::kSum ? sum : sum / weight_sum;
        return HostTensor{{}, {rounded(r)}, x.dtype};
      });
}

}  // namespace recq::reference
