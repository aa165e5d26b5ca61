#include "engine/ops/constant_eval.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "recq/status_macros.h"

namespace recq::internal {

bool AllConstantInputs(OnnxNodeContext& n, std::vector<const OnnxConstant*>* inputs) {
  inputs->clear();
  bool any = false;
  for (int i = 0; i < n.num_inputs(); ++i) {
    absl::StatusOr<const OnnxConstant*> c = n.ConstantInput(i);
    if (!c.ok()) return false;
    any |= *c != nullptr;
    inputs->push_back(*c);
  }
  return any;
}

double ElementAsDouble(const OnnxConstant& c, int64_t i) {
  return c.is_float ? double(c.floats[i]) : double(c.ints[i]);
}

int64_t SaturatingInt64(double v) {
  // 2^63 as a double; a cast of anything outside [-2^63, 2^63) or NaN is
  // undefined, and model files hold any float.
  constexpr double kTwo63 = 9223372036854775808.0;
  if (std::isnan(v)) return 0;
  if (v >= kTwo63) return std::numeric_limits<int64_t>::max();
  if (v < -kTwo63) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

int64_t ElementAsInt(const OnnxConstant& c, int64_t i) {
  return c.is_float ? SaturatingInt64(c.floats[i]) : c.ints[i];
}

int64_t Numel(const std::vector<int64_t>& dims) {
  // Saturates at 2^62 instead of overflowing (dims from a model file).
  constexpr int64_t kCap = int64_t{1} << 62;
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d <= 0) return d == 0 ? 0 : kCap;
    n = n > kCap / d ? kCap : n * d;
  }
  return n;
}

absl::StatusOr<OnnxConstant> BroadcastConstants(
    OnnxNodeContext& n, absl::Span<const OnnxConstant* const> in, bool int_result,
    const std::function<double(absl::Span<const double>)>& f) {
  size_t rank = 0;
  for (const OnnxConstant* c : in) rank = std::max(rank, c->dims.size());
  std::vector<int64_t> out(rank, 1);
  for (const OnnxConstant* c : in) {
    for (size_t k = 0; k < c->dims.size(); ++k) {
      const size_t i = rank - c->dims.size() + k;
      const int64_t d = c->dims[k];
      if (d != out[i] && d != 1 && out[i] != 1) {
        std::vector<std::string> shapes;
        for (const OnnxConstant* o : in) shapes.push_back(absl::StrJoin(o->dims, "x"));
        return n.Invalid(
            absl::StrCat("constant shapes [", absl::StrJoin(shapes, "], ["), "] do not broadcast"));
      }
      if (d != 1) out[i] = d;
    }
  }
  OnnxConstant r;
  r.dims = out;
  r.is_float = !int_result;
  const int64_t total = Numel(out);
  RECQ_RETURN_IF_ERROR(n.ReserveFolded(total));
  std::vector<double> args(in.size());
  for (int64_t flat = 0; flat < total; ++flat) {
    for (size_t a = 0; a < in.size(); ++a) {
      const OnnxConstant& c = *in[a];
      int64_t rem = flat, offset = 0, stride = 1;
      for (size_t k = rank; k-- > 0;) {
        const int64_t idx = rem % out[k];
        rem /= out[k];
        const size_t lead = rank - c.dims.size();
        if (k >= lead) {
          const int64_t d = c.dims[k - lead];
          offset += (d == 1 ? 0 : idx) * stride;
          stride *= d;
        }
      }
      args[a] = ElementAsDouble(c, offset);
    }
    const double v = f(args);
    if (int_result) {
      r.ints.push_back(SaturatingInt64(v));
    } else {
      r.floats.push_back(static_cast<float>(v));
    }
  }
  return r;
}

}  // namespace recq::internal
