// RecurrentSequence (engine/ops/recurrent.h) through the ONNX recurrences
// of tests/reference/recurrent.h: xw is the projection, rt the transposed R.
#include <cstdint>
#include <vector>

#include "engine/ops/recurrent.h"
#include "reference/recurrent.h"
#include "reference/reference_registry.h"

namespace recq::reference {

RECQ_REGISTER_REFERENCE(Recurrent) {
  return table.Add(
      internal::kRecurrentSequence,
      [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
        if (absl::Status s = CheckArity(node, in, 2, 7); !s.ok()) return s;
        absl::StatusOr<internal::RecurrentAttrs> attrs = AttrsOf<internal::RecurrentAttrs>(node);
        if (!attrs.ok()) return attrs.status();
        const internal::RecurrentAttrs& a = *attrs;
        const HostTensor& xw = *in[0];
        const HostTensor& rt = *in[1];
        const int64_t T = xw.shape[a.layout == 0 ? 0 : 1], B = xw.shape[a.layout == 0 ? 1 : 0];
        const int64_t H = a.hidden_size, D = a.directions, G = internal::GatesOf(a.cell);
        RecurrentInputs ri;
        ri.steps = T;
        ri.batch = B;
        ri.proj = [&](int64_t t, int64_t b, int64_t d, int64_t row) -> double {
          const int64_t at = a.layout == 0 ? t * B + b : b * T + t;
          return xw.data[at * D * G * H + d * G * H + row];
        };
        ri.rec = [&](int64_t d, int64_t row, int64_t k) -> double {
          return rt.data[(d * H + k) * G * H + row];
        };
        auto take = [&](size_t i) {
          const HostTensor* t = Optional(in, i);
          return t != nullptr ? t->data : std::vector<float>();
        };
        ri.bias = take(2);
        for (float v : take(3)) ri.seq.push_back(static_cast<int64_t>(v));
        ri.h0 = take(4);
        ri.c0 = take(5);
        ri.p = take(6);
        const RecurrentResult r = RunRecurrence(a, ri);
        HostTensor y{{T + a.state_rows, D, B, H}, r.y, xw.dtype};
        if (a.state_rows >= 1) y.data.insert(y.data.end(), r.y_h.begin(), r.y_h.end());
        if (a.state_rows >= 2) y.data.insert(y.data.end(), r.y_c.begin(), r.y_c.end());
        return y;
      });
}

}  // namespace recq::reference
