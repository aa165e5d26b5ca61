// Mod (engine/ops/mod.cc) from ONNX's definition: fmod = 1 is C's fmod,
// fmod = 0 is Python's % (numpy.mod); an integer divisor of 0 gives 0.
// Integers are computed in int64, floats in double.
#include <cmath>
#include <cstdint>

#include "engine/ops/typed.h"
#include "reference/reference_registry.h"
#include "reference/reference_util.h"

namespace recq::reference {
namespace {

using namespace detail;  // NOLINT: the helpers of every reference op

double ModValue(double a, double b, bool fmod, bool integral) {
  if (integral) {
    const int64_t x = static_cast<int64_t>(a), m = static_cast<int64_t>(b);
    if (m == 0) return 0;
    int64_t r = x % m;
    if (!fmod && r != 0 && ((r < 0) != (m < 0))) r += m;
    return static_cast<double>(r);
  }
  double r = std::fmod(a, b);
  if (!fmod && r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

}  // namespace

RECQ_REGISTER_REFERENCE(Mod) {
  return table.Add(
      internal::kMod, [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
        if (absl::Status s = CheckArity(node, in, 2, 2); !s.ok()) return s;
        const auto* a = node.attrs.get_if<internal::ModAttrs>();
        if (a == nullptr) return absl::InvalidArgumentError("Mod without ModAttrs");
        absl::StatusOr<std::vector<int64_t>> shape = BroadcastShapes(in[0]->shape, in[1]->shape);
        if (!shape.ok()) return shape.status();
        const DataType t = in[0]->dtype;
        const bool integral = IsIntegral(t);
        HostTensor y{*shape, std::vector<float>(NumElements(*shape)), t};
        const std::vector<int64_t> as = BroadcastStrides(in[0]->shape, shape->size());
        const std::vector<int64_t> bs = BroadcastStrides(in[1]->shape, shape->size());
        ForEachBroadcast(*shape, as, bs, [&](int64_t oi, int64_t ai, int64_t bi) {
          double r = ModValue(in[0]->data[ai], in[1]->data[bi], a->fmod, integral);
          // float16 results are rounded as the device stores them.
          if (t == DataType::kFloat16) r = HalfToFloat(FloatToHalf(float(r)));
          y.data[oi] = static_cast<float>(r);
        });
        return y;
      });
}

}  // namespace recq::reference
