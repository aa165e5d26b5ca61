// Einsum (engine/ops/einsum.h) and the import of ONNX Einsum (opset 12 on)
// for one or two operands. The import lowers float32 equations that are
// products to existing ops: a two-operand equation whose labels are each
// in both operands, or in one operand and the output, without repeats
// within an operand (matrix, batched and outer products, inner products,
// contractions over several labels) becomes Transpose, Reshape, one
// batched MatMul [B, M, K] x [B, K, N], Reshape and Transpose; a
// one-operand permutation becomes a Transpose. Every other equation
// (diagonals and traces, sums over a label, broadcast ellipsis dims,
// float16 and float64 operands) runs the Einsum op's kernel. More than two
// operands are Unimplemented.
#include "engine/ops/einsum.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "engine/ops/onnx_emitter.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/ops/typed.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

constexpr int64_t kEllipsisLabel = 52;

std::string LabelName(int64_t label) {
  if (label < 26) return std::string(1, static_cast<char>('a' + label));
  if (label < kEllipsisLabel) return std::string(1, static_cast<char>('A' + label - 26));
  return absl::StrCat("...[", label - kEllipsisLabel, "]");
}

struct Term {
  std::vector<int64_t> before;  // labels before the ellipsis (all, without one)
  std::vector<int64_t> after;   // labels after it
  bool ellipsis = false;
};

absl::StatusOr<Term> ParseTerm(absl::string_view t) {
  Term term;
  for (size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (c == '.') {
      if (term.ellipsis || t.substr(i, 3) != "...") {
        return absl::InvalidArgumentError(
            absl::StrCat("term '", t, "' has a '.' outside one ellipsis '...'"));
      }
      term.ellipsis = true;
      i += 2;
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      const int64_t label = std::islower(static_cast<unsigned char>(c)) ? c - 'a' : 26 + c - 'A';
      (term.ellipsis ? term.after : term.before).push_back(label);
    } else {
      return absl::InvalidArgumentError(absl::StrCat("term '", t, "' has the character '",
                                                     std::string(1, c),
                                                     "'; expected letters and one '...'"));
    }
  }
  return term;
}

// The size of every label over the operands (the largest, so that a
// dimension of 1 broadcasts), or InvalidArgument.
absl::StatusOr<std::map<int64_t, int64_t>> LabelSizes(const EinsumAttrs& a,
                                                      const std::vector<const Shape*>& shapes) {
  std::map<int64_t, int64_t> sizes;
  for (size_t k = 0; k < a.operands.size(); ++k) {
    const std::vector<int64_t>& labels = a.operands[k];
    if (labels.size() != shapes[k]->size()) {
      return absl::InvalidArgumentError(absl::StrCat("operand ", k, " is ", S(*shapes[k]),
                                                     "; the equation gives it ", labels.size(),
                                                     " labels"));
    }
    for (size_t d = 0; d < labels.size(); ++d) {
      const int64_t size = (*shapes[k])[d];
      auto [it, fresh] = sizes.emplace(labels[d], size);
      if (fresh || it->second == size || size == 1) continue;
      if (it->second != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("label ", LabelName(labels[d]), " has sizes ", it->second, " and ", size));
      }
      it->second = size;
    }
  }
  return sizes;
}

// The labels of the operands that the output does not keep, in order of
// first appearance.
std::vector<int64_t> SummedLabels(const EinsumAttrs& a) {
  std::vector<int64_t> summed;
  for (const std::vector<int64_t>& labels : a.operands) {
    for (int64_t l : labels) {
      if (std::find(a.output.begin(), a.output.end(), l) == a.output.end() &&
          std::find(summed.begin(), summed.end(), l) == summed.end()) {
        summed.push_back(l);
      }
    }
  }
  return summed;
}

absl::StatusOr<TensorDesc> Infer(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kEinsum, in, 1, 2));
  RECQ_ASSIGN_OR_RETURN(const EinsumAttrs* a, AttrsOf<EinsumAttrs>(kEinsum, attrs));
  if (a->operands.size() != in.size()) {
    return Bad(kEinsum, absl::StrCat("the equation has ", a->operands.size(),
                                     " operands, the node ", in.size(), " inputs"));
  }
  std::vector<const Shape*> shapes;
  for (const TensorDesc* d : in) {
    if (!IsFloatingPoint(d->dtype) || d->dtype != in[0]->dtype) {
      return Bad(kEinsum, absl::StrCat("operand ", d->ToString(),
                                       "; expected float32, float16 or float64, one type for all"));
    }
    if (d->shape.size() > 8) return Bad(kEinsum, "operands of rank 8 or less");
    shapes.push_back(&d->shape);
  }
  absl::StatusOr<std::map<int64_t, int64_t>> sizes = LabelSizes(*a, shapes);
  if (!sizes.ok()) return Bad(kEinsum, std::string(sizes.status().message()));
  Shape out;
  for (size_t i = 0; i < a->output.size(); ++i) {
    auto it = sizes->find(a->output[i]);
    if (it == sizes->end() || std::count(a->output.begin(), a->output.end(), a->output[i]) > 1) {
      return Bad(kEinsum, absl::StrCat("output label ", LabelName(a->output[i]),
                                       " is repeated or in no operand"));
    }
    out.push_back(it->second);
  }
  if (out.size() > 8 || SummedLabels(*a).size() > 8) {
    return Bad(kEinsum, "more than 8 output labels or more than 8 summed labels");
  }
  return TensorDesc{out, in[0]->dtype};
}

// The element strides of an operand per label of `labels` (summed over its
// repeats; 0 where the operand lacks the label or has it as size 1).
std::vector<int64_t> LabelStrides(const std::vector<int64_t>& operand, const Shape& shape,
                                  const std::vector<int64_t>& labels) {
  std::vector<int64_t> strides(labels.size(), 0);
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    const auto it = std::find(labels.begin(), labels.end(), operand[d]);
    if (it != labels.end() && shape[d] != 1) strides[it - labels.begin()] += stride;
    stride *= shape[d];
  }
  return strides;
}

absl::Status Lower(LoweringContext& ctx, const Node& node) {
  const EinsumAttrs& a = AttrsOr<EinsumAttrs>(node);
  std::vector<const Shape*> shapes;
  for (ValueId v : node.inputs) shapes.push_back(&ShapeOf(ctx, v));
  RECQ_ASSIGN_OR_RETURN(auto sizes, LabelSizes(a, shapes));
  const std::vector<int64_t> summed = SummedLabels(a);
  Shape summed_sizes;
  for (int64_t l : summed) summed_sizes.push_back(sizes[l]);
  const TensorDesc& y = ctx.graph().value(node.outputs[0]).desc;
  const int64_t total = Product(summed_sizes, 0, summed_sizes.size());
  for (const Shape* s : shapes) {
    if (Product(*s, 0, s->size()) >= (int64_t{1} << 31)) {
      return Unsupported(node, "an operand of 2^31 elements or more");
    }
  }
  if (y.NumElements() >= (int64_t{1} << 31) || total >= (int64_t{1} << 31)) {
    return Unsupported(node, "2^31 output elements or summed terms or more");
  }
  const bool two = node.inputs.size() == 2;
  Dispatch& d = ctx.Emit(MakeDispatch(
      ctx, "einsum.cl", "einsum_naive", {static_cast<size_t>(y.NumElements())},
      {absl::StrCat("-DKIND=", TypedKind(y.dtype)), absl::StrCat("-DT=", TypedStorage(y.dtype)),
       absl::StrCat("-DTWO=", two ? 1 : 0)}));
  // Without a second operand the kernel never reads b.
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[two ? 1 : 0]), ctx.Arg(node.outputs[0])};
  const size_t b = two ? 1 : 0;
  d.args.push_back(DispatchArg::Scalar(Pad8(y.shape, 1)));
  d.args.push_back(DispatchArg::Scalar(Pad8(LabelStrides(a.operands[0], *shapes[0], a.output), 0)));
  d.args.push_back(DispatchArg::Scalar(Pad8(LabelStrides(a.operands[b], *shapes[b], a.output), 0)));
  d.args.push_back(DispatchArg::Scalar(Pad8(summed_sizes, 1)));
  d.args.push_back(DispatchArg::Scalar(Pad8(LabelStrides(a.operands[0], *shapes[0], summed), 0)));
  d.args.push_back(DispatchArg::Scalar(Pad8(LabelStrides(a.operands[b], *shapes[b], summed), 0)));
  d.args.push_back(DispatchArg::Scalar(static_cast<cl_int>(total)));
  return absl::OkStatus();
}

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}
bool HasRepeats(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return std::adjacent_find(v.begin(), v.end()) != v.end();
}
int64_t IndexOf(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) - v.begin();
}
bool IsIdentity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// EmitTransposed emits x with its dims (labelled `labels`) in the order of
// `order` (a Transpose, or nothing when it is the same order).
absl::StatusOr<ValueId> EmitTransposed(OnnxNodeEmitter& e, ValueId x,
                                       const std::vector<int64_t>& labels,
                                       const std::vector<int64_t>& order,
                                       absl::string_view suffix) {
  std::vector<int64_t> perm;
  for (int64_t l : order) perm.push_back(IndexOf(labels, l));
  if (IsIdentity(perm)) return x;
  return e.EmitValue(OpType::kTranspose, {x}, TransposeAttrs{perm}, suffix);
}

// ImportAsMatMul emits a float32 two-operand product as Transpose, Reshape,
// MatMul, Reshape and Transpose; false (nothing emitted) when the equation
// is not such a product.
absl::StatusOr<bool> ImportAsMatMul(OnnxNodeContext& n, OnnxNodeEmitter& e, const EinsumAttrs& a,
                                    ValueId x0, ValueId x1) {
  const std::vector<int64_t>& la = a.operands[0];
  const std::vector<int64_t>& lb = a.operands[1];
  if (HasRepeats(la) || HasRepeats(lb)) return false;
  const Shape& sa = n.desc(x0).shape;
  const Shape& sb = n.desc(x1).shape;
  std::vector<int64_t> batch, m, k, nn;
  std::map<int64_t, int64_t> size;
  for (size_t i = 0; i < la.size(); ++i) size[la[i]] = sa[i];
  for (size_t i = 0; i < lb.size(); ++i) {
    if (Contains(la, lb[i]) && size[lb[i]] != sb[i]) return false;  // broadcast
    size[lb[i]] = sb[i];
  }
  for (int64_t l : a.output) {
    const bool in_a = Contains(la, l), in_b = Contains(lb, l);
    (in_a && in_b ? batch : in_a ? m : nn).push_back(l);
  }
  for (int64_t l : la) {
    if (Contains(a.output, l)) continue;
    if (!Contains(lb, l)) return false;  // summed over one operand only
    k.push_back(l);
  }
  for (int64_t l : lb) {
    if (!Contains(a.output, l) && !Contains(la, l)) return false;
  }
  auto product = [&](const std::vector<int64_t>& labels) {
    int64_t p = 1;
    for (int64_t l : labels) p *= size[l];
    return p;
  };
  auto concat = [](std::vector<int64_t> x, const std::vector<int64_t>& y,
                   const std::vector<int64_t>& z = {}) {
    x.insert(x.end(), y.begin(), y.end());
    x.insert(x.end(), z.begin(), z.end());
    return x;
  };
  const int64_t pb = product(batch), pm = product(m), pk = product(k), pn = product(nn);
  RECQ_ASSIGN_OR_RETURN(ValueId ta, EmitTransposed(e, x0, la, concat(batch, m, k), "a_t"));
  RECQ_ASSIGN_OR_RETURN(ValueId a3,
                        e.EmitValue(OpType::kReshape, {ta}, ReshapeAttrs{{pb, pm, pk}}, "a_3d"));
  RECQ_ASSIGN_OR_RETURN(ValueId tb, EmitTransposed(e, x1, lb, concat(batch, k, nn), "b_t"));
  RECQ_ASSIGN_OR_RETURN(ValueId b3,
                        e.EmitValue(OpType::kReshape, {tb}, ReshapeAttrs{{pb, pk, pn}}, "b_3d"));
  RECQ_ASSIGN_OR_RETURN(ValueId p, e.EmitValue(OpType::kMatMul, {a3, b3}, {}, "matmul"));
  const std::vector<int64_t> labels = concat(batch, m, nn);
  Shape shape;
  for (int64_t l : labels) shape.push_back(size[l]);
  std::vector<int64_t> perm;
  for (int64_t l : a.output) perm.push_back(IndexOf(labels, l));
  if (IsIdentity(perm)) {
    RECQ_RETURN_IF_ERROR(n.Emit(OpType::kReshape, {p}, ReshapeAttrs{shape}));
    return true;
  }
  RECQ_ASSIGN_OR_RETURN(ValueId r, e.EmitValue(OpType::kReshape, {p}, ReshapeAttrs{shape}, "y"));
  RECQ_RETURN_IF_ERROR(n.Emit(OpType::kTranspose, {r}, TransposeAttrs{perm}));
  return true;
}

absl::Status Import(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"equation"}));
  RECQ_ASSIGN_OR_RETURN(std::string equation, n.String("equation", ""));
  if (equation.empty()) return n.Invalid("the equation attribute is missing or empty");
  if (n.num_inputs() < 1 || n.num_inputs() > 2) {
    return n.Unsupported(
        absl::StrCat("Einsum of ", n.num_inputs(), " operands (one or two are supported)"));
  }
  std::vector<ValueId> inputs;
  std::vector<size_t> ranks;
  for (int i = 0; i < n.num_inputs(); ++i) {
    RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(i));
    if (!IsFloatingPoint(n.desc(x).dtype)) {
      return n.Unsupported(absl::StrCat("Einsum of ", n.desc(x).ToString(),
                                        " (float32, float16 and float64 are supported)"));
    }
    inputs.push_back(x);
    ranks.push_back(n.desc(x).shape.size());
  }
  absl::StatusOr<EinsumAttrs> a = ParseEinsum(equation, ranks);
  if (!a.ok()) return n.Invalid(absl::StrCat("equation '", equation, "': ", a.status().message()));
  OnnxNodeEmitter* e = EmitterOf(n);
  if (e != nullptr && n.desc(inputs[0]).dtype == DataType::kFloat32) {
    if (inputs.size() == 2 && n.desc(inputs[1]).dtype == DataType::kFloat32) {
      RECQ_ASSIGN_OR_RETURN(bool done, ImportAsMatMul(n, *e, *a, inputs[0], inputs[1]));
      if (done) return absl::OkStatus();
    }
    const std::vector<int64_t>& labels = a->operands[0];
    if (inputs.size() == 1 && !HasRepeats(labels) && labels.size() == a->output.size()) {
      std::vector<int64_t> perm;
      for (int64_t l : a->output) perm.push_back(IndexOf(labels, l));
      if (IsIdentity(perm)) return n.Emit(OpType::kIdentity, inputs, {});
      return n.Emit(OpType::kTranspose, inputs, TransposeAttrs{perm});
    }
  }
  return n.Emit(kEinsum, std::move(inputs), *std::move(a));
}

}  // namespace

absl::StatusOr<EinsumAttrs> ParseEinsum(absl::string_view equation,
                                        const std::vector<size_t>& ranks) {
  std::string eq;
  for (char c : equation) {
    if (!std::isspace(static_cast<unsigned char>(c))) eq.push_back(c);
  }
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms = absl::StrSplit(lhs, ',');
  if (terms.size() != ranks.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("it has ", terms.size(), " operands; the node has ", ranks.size()));
  }
  std::vector<Term> parsed;
  size_t ellipsis_rank = 0;
  for (size_t k = 0; k < terms.size(); ++k) {
    RECQ_ASSIGN_OR_RETURN(Term t, ParseTerm(terms[k]));
    const size_t letters = t.before.size() + t.after.size();
    if (t.ellipsis ? ranks[k] < letters : ranks[k] != letters) {
      return absl::InvalidArgumentError(absl::StrCat("operand ", k, " has rank ", ranks[k],
                                                     "; its term '", terms[k], "' gives ", letters,
                                                     " labels"));
    }
    if (t.ellipsis) ellipsis_rank = std::max(ellipsis_rank, ranks[k] - letters);
    parsed.push_back(std::move(t));
  }
  auto ellipsis = [&](size_t count) {
    std::vector<int64_t> labels;
    for (size_t i = ellipsis_rank - count; i < ellipsis_rank; ++i) {
      labels.push_back(kEllipsisLabel + static_cast<int64_t>(i));
    }
    return labels;
  };
  EinsumAttrs a;
  std::map<int64_t, int> count;
  for (size_t k = 0; k < parsed.size(); ++k) {
    const Term& t = parsed[k];
    std::vector<int64_t> labels = t.before;
    if (t.ellipsis) {
      const std::vector<int64_t> e = ellipsis(ranks[k] - t.before.size() - t.after.size());
      labels.insert(labels.end(), e.begin(), e.end());
    }
    labels.insert(labels.end(), t.after.begin(), t.after.end());
    for (int64_t l : labels) ++count[l];
    a.operands.push_back(std::move(labels));
  }
  if (arrow != std::string::npos) {
    RECQ_ASSIGN_OR_RETURN(Term t, ParseTerm(absl::string_view(eq).substr(arrow + 2)));
    a.output = t.before;
    if (t.ellipsis) {
      const std::vector<int64_t> e = ellipsis(ellipsis_rank);
      a.output.insert(a.output.end(), e.begin(), e.end());
    }
    a.output.insert(a.output.end(), t.after.begin(), t.after.end());
    for (int64_t l : a.output) {
      if (count.count(l) == 0 || std::count(a.output.begin(), a.output.end(), l) > 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("output label ", LabelName(l), " is repeated or in no operand"));
      }
    }
  } else {
    // numpy's implicit output: the ellipsis' dims, then the letters that
    // occur once in ASCII order (upper case first).
    a.output = ellipsis(ellipsis_rank);
    std::vector<int64_t> once;
    for (const auto& [l, c] : count) {
      if (c == 1 && l < kEllipsisLabel) once.push_back(l);
    }
    std::sort(once.begin(), once.end(), [](int64_t x, int64_t y) {
      return (x >= 26 ? x - 26 : x + 26) < (y >= 26 ? y - 26 : y + 26);
    });
    a.output.insert(a.output.end(), once.begin(), once.end());
  }
  return a;
}

RECQ_REGISTER_OPS(Einsum) {
  OpDef def;
  def.type = kEinsum;
  def.typed = true;
  def.infer = Infer;
  def.onnx = {{"", "Einsum", 12, kOnnxOpsetMax, Import}};
  def.variants = {{"einsum_naive", nullptr, Lower}};
  return table.Add(std::move(def));
}

}  // namespace recq::internal
