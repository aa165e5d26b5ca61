#include "reference/reference_registry.h"
#include "reference/reference_util.h"

namespace recq::reference {

using namespace detail;  // NOLINT: the helpers of every reference op

absl::StatusOr<HostTensor> Flatten(const HostTensor& x, int64_t axis) {
  if (absl::Status s = CheckWellFormed(x, "Flatten", "X"); !s.ok()) return s;
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  absl::StatusOr<int64_t> ax = NormalizeAxis(axis, rank, /*inclusive_end=*/true, "Flatten");
  if (!ax.ok()) return ax.status();
  return HostTensor{{Product(x.shape, 0, *ax), Product(x.shape, *ax, rank)}, x.data};
}

absl::StatusOr<std::vector<int64_t>> ReshapeOutputShape(absl::Span<const int64_t> input_shape,
                                                        const ReshapeAttrs& attrs) {
  std::vector<int64_t> shape = attrs.shape;
  int64_t inferred = -1;
  bool has_zero = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (inferred >= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Reshape: more than one -1 in ", ShapeString(attrs.shape)));
      }
      inferred = static_cast<int64_t>(i);
    } else if (shape[i] == 0) {
      has_zero = true;
      if (!attrs.allow_zero) {
        if (i >= input_shape.size()) {
          return absl::InvalidArgumentError(
              absl::StrCat("Reshape: 0 at index ", i, " of ", ShapeString(attrs.shape),
                           " has no input dimension to copy in ", ShapeString(input_shape)));
        }
        shape[i] = input_shape[i];
      }
    } else if (shape[i] < -1) {
      return absl::InvalidArgumentError(
          absl::StrCat("Reshape: invalid dimension ", shape[i], " in ", ShapeString(attrs.shape)));
    }
  }
  if (attrs.allow_zero && has_zero && inferred >= 0) {
    return absl::InvalidArgumentError("Reshape: allow_zero forbids both 0 and -1 in the shape");
  }
  const int64_t total = NumElements(input_shape);
  if (inferred >= 0) {
    int64_t known = 1;
    for (size_t i = 0; i < shape.size(); ++i) {
      if (static_cast<int64_t>(i) != inferred) known *= shape[i];
    }
    if (known == 0 || total % known != 0) {
      return absl::InvalidArgumentError(absl::StrCat("Reshape: cannot infer -1 in ",
                                                     ShapeString(attrs.shape), " for input ",
                                                     ShapeString(input_shape)));
    }
    shape[inferred] = total / known;
  }
  if (NumElements(shape) != total) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Reshape: ", ShapeString(attrs.shape), " resolves to ", ShapeString(shape),
        " which does not have the ", total, " elements of ", ShapeString(input_shape)));
  }
  return shape;
}

absl::StatusOr<HostTensor> Reshape(const HostTensor& x, const ReshapeAttrs& attrs) {
  if (absl::Status s = CheckWellFormed(x, "Reshape", "X"); !s.ok()) return s;
  absl::StatusOr<std::vector<int64_t>> shape = ReshapeOutputShape(x.shape, attrs);
  if (!shape.ok()) return shape.status();
  return HostTensor{*std::move(shape), x.data};
}

HostTensor Identity(const HostTensor& x) { return x; }

RECQ_REGISTER_REFERENCE(ShapeOps) {
  absl::Status s = table.Add(
      OpType::kFlatten, [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
        if (absl::Status s = CheckArity(node, in, 1, 1); !s.ok()) return s;
        absl::StatusOr<FlattenAttrs> a = AttrsOf<FlattenAttrs>(node);
        if (!a.ok()) return a.status();
        return Flatten(*in[0], a->axis);
      });
  if (!s.ok()) return s;
  s = table.Add(OpType::kReshape,
                [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                  if (absl::Status s = CheckArity(node, in, 1, 1); !s.ok()) return s;
                  absl::StatusOr<ReshapeAttrs> a = AttrsOf<ReshapeAttrs>(node);
                  if (!a.ok()) return a.status();
                  return Reshape(*in[0], *a);
                });
  if (!s.ok()) return s;
  return table.Add(OpType::kIdentity,
                   [](const Node& node, ReferenceInputs in) -> absl::StatusOr<HostTensor> {
                     if (absl::Status s = CheckArity(node, in, 1, 1); !s.ok()) return s;
                     return Identity(*in[0]);
                   });
}

}  // namespace recq::reference
