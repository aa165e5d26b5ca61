// Einsum (engine/ops/einsum.h) by its definition, in double: every
// assignment of values to the labels (output and summed alike) adds the
// product of the operands' elements at those values to the output element
// they name. A dimension of size 1 is read at 0 (broadcast).
#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include "engine/ops/einsum.h"
#include "reference/reference_registry.h"
#include "reference/reference_util.h"

namespace recq::reference {

RECQ_REGISTER_REFERENCE(Einsum) {
  return table.Add(
      internal::kEinsum, [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
        if (absl::Status s = CheckArity(node, in, 1, 2); !s.ok()) return s;
        absl::StatusOr<internal::EinsumAttrs> a = AttrsOf<internal::EinsumAttrs>(node);
        if (!a.ok()) return a.status();
        if (a->operands.size() != in.size()) {
          return absl::InvalidArgumentError("Einsum operands do not match its inputs");
        }
        std::map<int64_t, int64_t> size;
        for (size_t k = 0; k < in.size(); ++k) {
          for (size_t d = 0; d < in[k]->shape.size(); ++d) {
            int64_t& s = size[a->operands[k][d]];
            s = std::max(s, in[k]->shape[d]);
          }
        }
        std::vector<int64_t> labels;  // every label, the output's first
        std::vector<int64_t> out_shape;
        for (int64_t l : a->output) {
          labels.push_back(l);
          out_shape.push_back(size[l]);
        }
        for (const auto& [l, s] : size) {
          if (std::find(labels.begin(), labels.end(), l) == labels.end()) labels.push_back(l);
        }
        std::vector<double> acc(NumElements(out_shape), 0.0);
        std::map<int64_t, int64_t> value;
        for (int64_t l : labels) value[l] = 0;
        while (true) {
          int64_t out = 0;
          for (int64_t l : a->output) out = out * size[l] + value[l];
          double p = 1;
          for (size_t k = 0; k < in.size(); ++k) {
            int64_t idx = 0;
            for (size_t d = 0; d < in[k]->shape.size(); ++d) {
              const int64_t dim = in[k]->shape[d];
              idx = idx * dim + (dim == 1 ? 0 : value[a->operands[k][d]]);
            }
            p *= in[k]->data[idx];
          }
          acc[out] += p;
          // The next assignment, the last label fastest.
          size_t i = labels.size();
          while (i > 0 && ++value[labels[i - 1]] == size[labels[i - 1]]) value[labels[--i]] = 0;
          if (i == 0) break;
        }
        HostTensor y{out_shape, std::vector<float>(acc.size()), in[0]->dtype};
        for (size_t i = 0; i < acc.size(); ++i) {
          y.data[i] = in[0]->dtype == DataType::kFloat16 ? HalfToFloat(FloatToHalf(float(acc[i])))
                                                         : float(acc[i]);
        }
        return y;
      });
}

}  // namespace recq::reference
