// References of the data-movement ops, written element by element from the
// ONNX definitions: Slice, Tile, Expand, Pad, Gather, DepthToSpace,
// SpaceToDepth.
#include <algorithm>
#include <vector>

#include "engine/ops/layout_attrs.h"
#include "reference/reference_registry.h"
#include "reference/reference_util.h"

namespace recq::reference {
namespace {

using namespace detail;  // NOLINT: the helpers of every reference op
using internal::BlockAttrs;
using internal::ExpandAttrs;
using internal::GatherAttrs;
using internal::PadAttrs;
using internal::PadMode;
using internal::SliceAttrs;
using internal::TileAttrs;

// Coordinates of flat index `i` in `shape`.
std::vector<int64_t> Coords(int64_t i, const std::vector<int64_t>& shape) {
  std::vector<int64_t> c(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    c[d] = i % shape[d];
    i /= shape[d];
  }
  return c;
}

int64_t Flat(const std::vector<int64_t>& c, const std::vector<int64_t>& shape) {
  int64_t f = 0;
  for (size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + c[d];
  return f;
}

absl::StatusOr<HostTensor> Slice(const HostTensor& x, const SliceAttrs& a) {
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  std::vector<int64_t> start(rank, 0), step(rank, 1), count = x.shape;
  for (size_t k = 0; k < a.starts.size(); ++k) {
    int64_t axis = a.axes.empty() ? int64_t(k) : a.axes[k];
    if (axis < 0) axis += rank;
    const int64_t dim = x.shape[axis];
    const int64_t s = a.steps.empty() ? 1 : a.steps[k];
    // ONNX: negative starts/ends add dim, then clamp to [0, dim] (step > 0)
    // or [0, dim - 1] / [-1, dim - 1] (step < 0).
    double b = double(a.starts[k]), e = double(a.ends[k]);
    if (b < 0) b += dim;
    if (e < 0) e += dim;
    if (s > 0) {
      b = std::clamp(b, 0.0, double(dim));
      e = std::clamp(e, 0.0, double(dim));
    } else {
      b = std::clamp(b, 0.0, double(dim - 1));
      e = std::clamp(e, -1.0, double(dim - 1));
    }
    int64_t n = 0;
    for (double v = b; s > 0 ? v < e : v > e; v += double(s)) ++n;
    start[axis] = int64_t(b);
    step[axis] = s;
    count[axis] = n;
  }
  HostTensor y{count, std::vector<float>(NumElements(count))};
  for (int64_t i = 0; i < y.NumElements(); ++i) {
    std::vector<int64_t> c = Coords(i, count);
    for (int64_t d = 0; d < rank; ++d) c[d] = start[d] + c[d] * step[d];
    y.data[i] = x.data[Flat(c, x.shape)];
  }
  return y;
}

HostTensor Tile(const HostTensor& x, const TileAttrs& a) {
  std::vector<int64_t> shape = x.shape;
  for (size_t d = 0; d < shape.size(); ++d) shape[d] *= a.repeats[d];
  HostTensor y{shape, std::vector<float>(NumElements(shape))};
  for (int64_t i = 0; i < y.NumElements(); ++i) {
    std::vector<int64_t> c = Coords(i, shape);
    for (size_t d = 0; d < c.size(); ++d) c[d] %= x.shape[d];
    y.data[i] = x.data[Flat(c, x.shape)];
  }
  return y;
}

absl::StatusOr<HostTensor> Expand(const HostTensor& x, const ExpandAttrs& a) {
  absl::StatusOr<std::vector<int64_t>> shape = BroadcastShapes(x.shape, a.shape);
  if (!shape.ok()) return shape.status();
  HostTensor y{*shape, std::vector<float>(NumElements(*shape)), x.dtype};
  const size_t lead = shape->size() - x.shape.size();
  for (int64_t i = 0; i < y.NumElements(); ++i) {
    std::vector<int64_t> c = Coords(i, *shape);
    std::vector<int64_t> src(c.begin() + lead, c.end());
    for (size_t d = 0; d < src.size(); ++d) {
      if (x.shape[d] == 1) src[d] = 0;
    }
    y.data[i] = x.data[Flat(src, x.shape)];
  }
  return y;
}

HostTensor Pad(const HostTensor& x, const PadAttrs& a) {
  const size_t rank = x.shape.size();
  std::vector<int64_t> shape(rank);
  for (size_t d = 0; d < rank; ++d) shape[d] = x.shape[d] + a.pads[d] + a.pads[rank + d];
  HostTensor y{shape, std::vector<float>(NumElements(shape))};
  for (int64_t i = 0; i < y.NumElements(); ++i) {
    std::vector<int64_t> c = Coords(i, shape);
    bool outside = false;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t n = x.shape[d];
      int64_t v = c[d] - a.pads[d];
      if (v >= 0 && v < n) {
        c[d] = v;
        continue;
      }
      switch (a.mode) {
        case PadMode::kConstant:
          outside = true;
          break;
        case PadMode::kEdge:
          v = std::clamp<int64_t>(v, 0, n - 1);
          break;
        case PadMode::kWrap:
          v = ((v % n) + n) % n;
          break;
        case PadMode::kReflect:
          // Mirror at the edges without repeating them, as often as needed.
          while (n > 1 && (v < 0 || v >= n)) v = v < 0 ? -v : 2 * (n - 1) - v;
          if (n == 1) v = 0;
          break;
      }
      c[d] = v;
    }
    y.data[i] = outside ? a.value : x.data[Flat(c, x.shape)];
  }
  return y;
}

// Gather; run-time indices (`indices` non-null) wrap once when negative and
// are clamped to the dimension, as the device does.
HostTensor Gather(const HostTensor& x, GatherAttrs a, const HostTensor* indices) {
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  if (indices != nullptr) {
    const int64_t dim = x.shape[a.axis < 0 ? a.axis + rank : a.axis];
    a.indices_shape = indices->shape;
    a.indices.clear();
    for (float v : indices->data) {
      int64_t idx = static_cast<int64_t>(v);
      if (idx < 0) idx += dim;
      a.indices.push_back(std::clamp<int64_t>(idx, 0, dim - 1));
    }
  }
  const int64_t axis = a.axis < 0 ? a.axis + rank : a.axis;
  std::vector<int64_t> shape(x.shape.begin(), x.shape.begin() + axis);
  shape.insert(shape.end(), a.indices_shape.begin(), a.indices_shape.end());
  shape.insert(shape.end(), x.shape.begin() + axis + 1, x.shape.end());
  HostTensor y{shape, std::vector<float>(NumElements(shape)), x.dtype};
  const int64_t q = static_cast<int64_t>(a.indices_shape.size());
  for (int64_t i = 0; i < y.NumElements(); ++i) {
    const std::vector<int64_t> c = Coords(i, shape);
    std::vector<int64_t> src(c.begin(), c.begin() + axis);
    const std::vector<int64_t> ic(c.begin() + axis, c.begin() + axis + q);
    src.push_back(a.indices[Flat(ic, a.indices_shape)]);
    src.insert(src.end(), c.begin() + axis + q, c.end());
    y.data[i] = x.data[Flat(src, x.shape)];
  }
  return y;
}

// DepthToSpace / SpaceToDepth from the ONNX definitions' index formulas.
HostTensor Blocks(const HostTensor& x, const BlockAttrs& a, bool to_space) {
  const int64_t b = a.blocksize, n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
  std::vector<int64_t> shape = to_space ? std::vector<int64_t>{n, c / (b * b), h * b, w * b}
                                        : std::vector<int64_t>{n, c * b * b, h / b, w / b};
  HostTensor y{shape, std::vector<float>(NumElements(shape))};
  for (int64_t i = 0; i < y.NumElements(); ++i) {
    const std::vector<int64_t> o = Coords(i, shape);
    std::vector<int64_t> src(4);
    if (to_space) {
      const int64_t oc = shape[1], by = o[2] % b, bx = o[3] % b;
      const int64_t ch = a.crd ? (o[1] * b + by) * b + bx : (by * b + bx) * oc + o[1];
      src = {o[0], ch, o[2] / b, o[3] / b};
    } else {
      const int64_t blk = o[1] / c, ch = o[1] % c;
      src = {o[0], ch, o[2] * b + blk / b, o[3] * b + blk % b};
    }
    y.data[i] = x.data[Flat(src, x.shape)];
  }
  return y;
}

}  // namespace

RECQ_REGISTER_REFERENCE(Layout) {
  auto add = [&table](const char* op, auto f) { return table.Add(OpType(op), f); };
  if (absl::Status s = add("Slice",
                           [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                             if (absl::Status s = CheckArity(node, in, 1, 1); !s.ok()) return s;
                             absl::StatusOr<SliceAttrs> a = AttrsOf<SliceAttrs>(node);
                             if (!a.ok()) return a.status();
                             return Slice(*in[0], *a);
                           });
      !s.ok()) {
    return s;
  }
  if (absl::Status s = add("Tile",
                           [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                             if (absl::Status s = CheckArity(node, in, 1, 1); !s.ok()) return s;
                             absl::StatusOr<TileAttrs> a = AttrsOf<TileAttrs>(node);
                             if (!a.ok()) return a.status();
                             return Tile(*in[0], *a);
                           });
      !s.ok()) {
    return s;
  }
  if (absl::Status s = add("Expand",
                           [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                             if (absl::Status s = CheckArity(node, in, 1, 1); !s.ok()) return s;
                             absl::StatusOr<ExpandAttrs> a = AttrsOf<ExpandAttrs>(node);
                             if (!a.ok()) return a.status();
                             return Expand(*in[0], *a);
                           });
      !s.ok()) {
    return s;
  }
  if (absl::Status s = add("Pad",
                           [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                             if (absl::Status s = CheckArity(node, in, 1, 1); !s.ok()) return s;
                             absl::StatusOr<PadAttrs> a = AttrsOf<PadAttrs>(node);
                             if (!a.ok()) return a.status();
                             return Pad(*in[0], *a);
                           });
      !s.ok()) {
    return s;
  }
  if (absl::Status s = add("Gather",
                           [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                             if (absl::Status s = CheckArity(node, in, 1, 2); !s.ok()) return s;
                             absl::StatusOr<GatherAttrs> a = AttrsOf<GatherAttrs>(node);
                             if (!a.ok()) return a.status();
                             return Gather(*in[0], *a, in.size() == 2 ? in[1] : nullptr);
                           });
      !s.ok()) {
    return s;
  }
  if (absl::Status s = add("DepthToSpace",
                           [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                             if (absl::Status s = CheckArity(node, in, 1, 1); !s.ok()) return s;
                             absl::StatusOr<BlockAttrs> a = AttrsOf<BlockAttrs>(node);
                             if (!a.ok()) return a.status();
                             return Blocks(*in[0], *a, true);
                           });
      !s.ok()) {
    return s;
  }
  return add("SpaceToDepth",
             [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
               if (absl::Status s = CheckArity(node, in, 1, 1); !s.ok()) return s;
               absl::StatusOr<BlockAttrs> a = AttrsOf<BlockAttrs>(node);
               if (!a.ok()) return a.status();
               return Blocks(*in[0], *a, false);
             });
}

}  // namespace recq::reference
