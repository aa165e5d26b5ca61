#include "reference/reference_registry.h"
#include "reference/reference_util.h"

namespace recq::reference {

using namespace detail;  // NOLINT: the helpers of every reference op

absl::StatusOr<int64_t> PoolOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                                       int64_t pad_begin, int64_t pad_end, bool ceil_mode) {
  const int64_t span = in + pad_begin + pad_end - dilation * (kernel - 1) - 1;
  if (span < 0) {
    return absl::InvalidArgumentError(absl::StrCat("pool: the dilated kernel ", kernel,
                                                   " (dilation ", dilation,
                                                   ") does not fit the padded input ", in));
  }
  int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad_begin) --out;
  return out;
}

absl::StatusOr<HostTensor> MaxPool(const HostTensor& x, const PoolAttrs& attrs) {
  absl::StatusOr<PoolGeometry> geo = PoolShape(x, attrs, "MaxPool");
  if (!geo.ok()) return geo.status();
  const PoolGeometry& g = *geo;
  HostTensor y{{g.n, g.c, g.oh, g.ow}, std::vector<float>(g.n * g.c * g.oh * g.ow)};
  ForEachPoolOutput(g, [&](int64_t oi, int64_t plane, int64_t oy, int64_t ox) {
    float best = -std::numeric_limits<float>::infinity();
    for (int64_t ky = 0; ky < attrs.kernel[0]; ++ky) {
      const int64_t iy = oy * attrs.strides[0] - attrs.pads[0] + ky * attrs.dilations[0];
      if (iy < 0 || iy >= g.h) continue;
      for (int64_t kx = 0; kx < attrs.kernel[1]; ++kx) {
        const int64_t ix = ox * attrs.strides[1] - attrs.pads[1] + kx * attrs.dilations[1];
        if (ix < 0 || ix >= g.w) continue;
        best = std::max(best, x.data[(plane * g.h + iy) * g.w + ix]);
      }
    }
    y.data[oi] = best;
  });
  return y;
}

absl::StatusOr<HostTensor> AveragePool(const HostTensor& x, const PoolAttrs& attrs) {
  absl::StatusOr<PoolGeometry> geo = PoolShape(x, attrs, "AveragePool");
  if (!geo.ok()) return geo.status();
  const PoolGeometry& g = *geo;
  HostTensor y{{g.n, g.c, g.oh, g.ow}, std::vector<float>(g.n * g.c * g.oh * g.ow)};
  ForEachPoolOutput(g, [&](int64_t oi, int64_t plane, int64_t oy, int64_t ox) {
    double sum = 0.0;
    int64_t count = 0;
    for (int64_t ky = 0; ky < attrs.kernel[0]; ++ky) {
      const int64_t iy = oy * attrs.strides[0] - attrs.pads[0] + ky * attrs.dilations[0];
      for (int64_t kx = 0; kx < attrs.kernel[1]; ++kx) {
        const int64_t ix = ox * attrs.strides[1] - attrs.pads[1] + kx * attrs.dilations[1];
        const bool inside = iy >= 0 && iy < g.h && ix >= 0 && ix < g.w;
        const bool in_padded_extent = iy >= -attrs.pads[0] && iy < g.h + attrs.pads[2] &&
                                      ix >= -attrs.pads[1] && ix < g.w + attrs.pads[3];
        if (inside) sum += x.data[(plane * g.h + iy) * g.w + ix];
        if (attrs.count_include_pad ? in_padded_extent : inside) ++count;
      }
    }
    y.data[oi] = count == 0 ? 0.0f : static_cast<float>(sum / static_cast<double>(count));
  });
  return y;
}

absl::StatusOr<HostTensor> GlobalAveragePool(const HostTensor& x) {
  if (absl::Status s = CheckWellFormed(x, "GlobalAveragePool", "X"); !s.ok()) return s;
  if (x.shape.size() < 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("GlobalAveragePool: X must have rank >= 3, got ", ShapeString(x.shape)));
  }
  const int64_t planes = x.shape[0] * x.shape[1];
  const int64_t inner = Product(x.shape, 2, x.shape.size());
  HostTensor y{x.shape, std::vector<float>(planes)};
  std::fill(y.shape.begin() + 2, y.shape.end(), 1);
  for (int64_t p = 0; p < planes; ++p) {
    double sum = 0.0;
    for (int64_t i = 0; i < inner; ++i) sum += x.data[p * inner + i];
    y.data[p] = static_cast<float>(sum / static_cast<double>(inner));
  }
  return y;
}

RECQ_REGISTER_REFERENCE(Pool) {
  for (OpType op : {OpType::kMaxPool, OpType::kAveragePool}) {
    absl::Status s =
        table.Add(op, [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
          if (absl::Status s = CheckArity(node, in, 1, 1); !s.ok()) return s;
          absl::StatusOr<PoolAttrs> a = AttrsOf<PoolAttrs>(node);
          if (!a.ok()) return a.status();
          return node.op == OpType::kMaxPool ? MaxPool(*in[0], *a) : AveragePool(*in[0], *a);
        });
    if (!s.ok()) return s;
  }
  return table.Add(OpType::kGlobalAveragePool,
                   [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                     if (absl::Status s = CheckArity(node, in, 1, 1); !s.ok()) return s;
                     return GlobalAveragePool(*in[0]);
                   });
}

}  // namespace recq::reference
