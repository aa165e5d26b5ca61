// ScatterND (ONNX opsets 11 on; reduction add/mul from 16, max/min from 18)
// for data of every element type and int64 indices, constant or computed.
// All-constant ScatterNDs (Swin's shifted-window attention mask, built
// from ConstantOfShape) fold at import. On the device: a copy of data into
// the output, then one dispatch that writes (or combines) the updates.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/ops/constant_eval.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/ops/typed.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

double Combine(ScatterReduction r, double a, double b) {
  switch (r) {
    case ScatterReduction::kNone:
      return b;
    case ScatterReduction::kAdd:
      return a + b;
    case ScatterReduction::kMul:
      return a * b;
    case ScatterReduction::kMax:
      return a > b ? a : b;
    case ScatterReduction::kMin:
      return a < b ? a : b;
  }
  return b;
}

// Checks updates' shape: indices[:-1] + data[k:]. `what` names the problem.
absl::Status CheckShapes(const std::vector<int64_t>& data, const std::vector<int64_t>& indices,
                         const std::vector<int64_t>& updates, std::string* what) {
  if (indices.empty() || indices.back() < 1 || indices.back() > int64_t(data.size())) {
    *what = absl::StrCat("indices of shape [", absl::StrJoin(indices, ","),
                         "] need a last dimension in 1..", data.size(), " (the rank of data)");
    return absl::InvalidArgumentError(*what);
  }
  std::vector<int64_t> expected(indices.begin(), indices.end() - 1);
  expected.insert(expected.end(), data.begin() + indices.back(), data.end());
  if (updates != expected) {
    *what = absl::StrCat("updates have shape [", absl::StrJoin(updates, ","), "]; expected [",
                         absl::StrJoin(expected, ","), "]");
    return absl::InvalidArgumentError(*what);
  }
  return absl::OkStatus();
}

absl::StatusOr<ScatterReduction> ReductionOf(OnnxNodeContext& n) {
  RECQ_ASSIGN_OR_RETURN(std::string r, n.String("reduction", "none"));
  if (r == "none") return ScatterReduction::kNone;
  if (r == "add" && n.opset() >= 16) return ScatterReduction::kAdd;
  if (r == "mul" && n.opset() >= 16) return ScatterReduction::kMul;
  if (r == "max" && n.opset() >= 18) return ScatterReduction::kMax;
  if (r == "min" && n.opset() >= 18) return ScatterReduction::kMin;
  return n.Invalid(absl::StrCat("reduction '", r, "' is not defined at opset ", n.opset()));
}

absl::Status Fold(OnnxNodeContext& n, ScatterReduction reduction, const OnnxConstant& data,
                  const OnnxConstant& indices, const OnnxConstant& updates) {
  std::string what;
  if (!CheckShapes(data.dims, indices.dims, updates.dims, &what).ok()) return n.Invalid(what);
  if (indices.is_float) return n.Invalid("indices must be int64");
  if (data.is_float != updates.is_float) {
    return n.Invalid("data and updates have different element types");
  }
  const int64_t k = indices.dims.back();
  const int64_t rows = Numel({indices.dims.begin(), indices.dims.end() - 1});
  const int64_t slice = Numel({data.dims.begin() + k, data.dims.end()});
  OnnxConstant out = data;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t offset = 0;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t dim = data.dims[j];
      int64_t idx = indices.ints[r * k + j];
      if (idx < -dim || idx >= dim) {
        return n.Invalid(
            absl::StrCat("index ", idx, " is out of range for dimension ", dim, " of data"));
      }
      offset = offset * dim + (idx < 0 ? idx + dim : idx);
    }
    for (int64_t e = 0; e < slice; ++e) {
      const int64_t to = offset * slice + e, from = r * slice + e;
      if (out.is_float) {
        out.floats[to] =
            static_cast<float>(Combine(reduction, out.floats[to], updates.floats[from]));
      } else {
        out.ints[to] = static_cast<int64_t>(
            Combine(reduction, double(out.ints[to]), double(updates.ints[from])));
      }
    }
  }
  return n.DefineConstant(std::move(out));
}

absl::Status Import(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"reduction"}));
  RECQ_ASSIGN_OR_RETURN(ScatterReduction reduction, ReductionOf(n));
  std::vector<const OnnxConstant*> c;
  if (AllConstantInputs(n, &c) && c.size() == 3 && c[0] && c[1] && c[2]) {
    return Fold(n, reduction, *c[0], *c[1], *c[2]);
  }
  std::vector<ValueId> in;
  for (int i = 0; i < 3; ++i) {
    RECQ_ASSIGN_OR_RETURN(ValueId v, n.Input(i));
    in.push_back(v);
  }
  return n.Emit(kScatterND, std::move(in), ScatterNDAttrs{reduction});
}

absl::StatusOr<TensorDesc> Infer(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kScatterND, in, 3, 3));
  RECQ_RETURN_IF_ERROR(AttrsOf<ScatterNDAttrs>(kScatterND, attrs).status());
  if (in[1]->dtype != DataType::kInt64) {
    return Bad(kScatterND, absl::StrCat("indices are ", in[1]->ToString(), "; expected int64"));
  }
  if (in[0]->dtype != in[2]->dtype) {
    return Bad(kScatterND, absl::StrCat("data is ", in[0]->ToString(), " and updates ",
                                        in[2]->ToString(), "; expected one element type"));
  }
  std::string what;
  if (!CheckShapes(in[0]->shape, in[1]->shape, in[2]->shape, &what).ok()) {
    return Bad(kScatterND, what);
  }
  if (in[1]->shape.back() > 8) return Bad(kScatterND, "indices rows longer than 8");
  const ScatterNDAttrs& a = *AttrsOf<ScatterNDAttrs>(kScatterND, attrs).value();
  if (a.reduction != ScatterReduction::kNone && in[0]->dtype == DataType::kBool) {
    return Bad(kScatterND, "a reduction on bool data");
  }
  return *in[0];
}

absl::Status Lower(LoweringContext& ctx, const Node& node) {
  const TensorDesc& y = ctx.graph().value(node.outputs[0]).desc;
  const Shape& indices = ShapeOf(ctx, node.inputs[1]);
  const ScatterNDAttrs& a = AttrsOr<ScatterNDAttrs>(node);
  const int64_t k = indices.back();
  const int64_t rows = Product(indices, 0, indices.size() - 1);
  const int64_t slice = Product(y.shape, k, y.shape.size());
  if (y.NumElements() >= (int64_t{1} << 31) || rows * slice >= (int64_t{1} << 31)) {
    return Unsupported(node, "2^31 elements or more");
  }
  EmitCopyOf(ctx, ctx.Arg(node.inputs[0]), ctx.Arg(node.outputs[0]), y);
  if (rows == 0 || slice == 0) return absl::OkStatus();
  // dims: data's first k dimensions, padded at the back with 1s.
  Shape head(y.shape.begin(), y.shape.begin() + k);
  cl_int8 dims{};
  for (int j = 0; j < 8; ++j) dims.s[j] = j < k ? static_cast<cl_int>(head[j]) : 1;
  const bool reduce = a.reduction != ScatterReduction::kNone;
  const size_t global = reduce ? size_t(slice) : size_t(rows * slice);
  Dispatch& d = ctx.Emit(
      MakeDispatch(ctx, "scatter_nd.cl", reduce ? "scatter_nd_reduce" : "scatter_nd", {global},
                   {absl::StrCat("-DKIND=", TypedKind(y.dtype)),
                    absl::StrCat("-DT=", reduce ? TypedStorage(y.dtype) : TypedBits(y.dtype)),
                    absl::StrCat("-DREDUCTION=", static_cast<int>(a.reduction))}));
  d.args = {ctx.Arg(node.inputs[1]), ctx.Arg(node.inputs[2]), ctx.Arg(node.outputs[0])};
  d.args.push_back(DispatchArg::Scalar(dims));
  AddInts(d, {k, rows, slice});
  return absl::OkStatus();
}

}  // namespace

RECQ_REGISTER_OPS(ScatterND) {
  OpDef def;
  def.type = kScatterND;
  def.typed = true;
  def.onnx = {{"", "ScatterND", 11, kOnnxOpsetMax, Import}};
  def.infer = Infer;
  def.variants = {{"scatter_nd", nullptr, Lower}};
  return table.Add(std::move(def));
}

}  // namespace recq::internal
