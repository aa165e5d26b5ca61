// Sample: the next token id of each row of logits (sampling.h), one
// work-group per row (sampling.cl). Reached through the graph API only
// (Sample, AddSample): ONNX has no such op.
#include "engine/ops/sampling.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "engine/graph_edit.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "recq/status_macros.h"

namespace recq::internal {

const char* SampleModeName(SampleMode mode) {
  switch (mode) {
    case SampleMode::kGreedy:
      return "greedy";
    case SampleMode::kTopK:
      return "top_k";
    case SampleMode::kTopP:
      return "top_p";
  }
  return "?";
}

absl::Status CheckSampleAttrs(const SampleAttrs& a) {
  switch (a.mode) {
    case SampleMode::kGreedy:
      return absl::OkStatus();
    case SampleMode::kTopK:
      if (a.k < 1) {
        return absl::InvalidArgumentError(absl::StrCat("Sample: k is ", a.k, "; expected >= 1"));
      }
      break;
    case SampleMode::kTopP:
      if (!(a.p > 0.0f && a.p <= 1.0f)) {
        return absl::InvalidArgumentError(
            absl::StrCat("Sample: p is ", a.p, "; expected in (0, 1]"));
      }
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat("Sample: mode ", static_cast<int>(a.mode),
                                                     " is not greedy, top_k or top_p"));
  }
  if (!(a.temperature > 0.0f) || !std::isfinite(a.temperature) ||
      !std::isfinite(SampleScale(a.temperature))) {
    return absl::InvalidArgumentError(absl::StrCat("Sample: temperature is ", a.temperature,
                                                   "; expected a finite value > 0 (and >= 1e-30)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<SampleAttrs> ParseSampling(absl::string_view text) {
  SampleAttrs a;
  bool have_mode = false;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(part, absl::MaxSplits('=', 1));
    const absl::string_view key = kv.first, value = kv.second;
    const auto bad = [&](const char* expected) {
      return absl::InvalidArgumentError(
          absl::StrCat("sampling '", text, "': '", part, "' is not ", expected));
    };
    if (key == "greedy" || key == "top_k" || key == "top_p") {
      if (have_mode) return bad("a second mode; expected one of greedy, top_k=K, top_p=P");
      have_mode = true;
      if (key == "greedy") {
        if (!value.empty() || part.size() != key.size()) return bad("'greedy' (it takes no value)");
        a.mode = SampleMode::kGreedy;
      } else if (key == "top_k") {
        a.mode = SampleMode::kTopK;
        if (!absl::SimpleAtoi(value, &a.k)) return bad("top_k=K with an integer K");
      } else {
        a.mode = SampleMode::kTopP;
        if (!absl::SimpleAtof(value, &a.p)) return bad("top_p=P with a number P");
      }
    } else if (key == "temperature") {
      if (!absl::SimpleAtof(value, &a.temperature)) return bad("temperature=T with a number T");
    } else if (key == "seed") {
      if (!absl::SimpleAtoi(value, &a.seed)) return bad("seed=S with an integer S");
    } else {
      return bad("one of greedy, top_k=K, top_p=P, temperature=T, seed=S");
    }
  }
  if (!have_mode) {
    return absl::InvalidArgumentError(
        absl::StrCat("sampling '", text, "' names no mode; expected greedy, top_k=K or top_p=P"));
  }
  RECQ_RETURN_IF_ERROR(CheckSampleAttrs(a));
  return a;
}

TensorRef Sample(GraphBuilder& b, TensorRef logits, TensorRef step, const SampleAttrs& attrs,
                 std::string name) {
  return b.AddNode(kSample, {logits, step}, attrs, std::move(name));
}

absl::StatusOr<ValueId> AddSample(Editable& g, ValueId logits, ValueId step,
                                  const SampleAttrs& attrs, const std::string& name) {
  const int32_t count = static_cast<int32_t>(g.values.size());
  if (logits < 0 || logits >= count || step < 0 || step >= count) {
    return absl::InvalidArgumentError(absl::StrCat("AddSample '", name, "': value ids ", logits,
                                                   " and ", step, " must be in [0, ", count, ")"));
  }
  const TensorDesc* in[2] = {&g.values[logits].desc, &g.values[step].desc};
  RECQ_ASSIGN_OR_RETURN(TensorDesc out, InferOutputShape(kSample, attrs, in));
  Value v;
  v.name = absl::StrCat(name, ".ids");
  for (int i = 1; std::any_of(g.values.begin(), g.values.end(),
                              [&](const Value& o) { return o.name == v.name; });
       ++i) {
    v.name = absl::StrCat(name, ".ids_", i);
  }
  v.desc = std::move(out);
  v.kind = Value::Kind::kIntermediate;
  g.values.push_back(std::move(v));
  const ValueId id = static_cast<ValueId>(g.values.size() - 1);
  Node node;
  node.op = kSample;
  node.name = name;
  node.inputs = {logits, step};
  node.outputs = {id};
  node.attrs = attrs;
  g.nodes.push_back(std::move(node));
  g.removed.push_back(false);
  return id;
}

namespace {

absl::StatusOr<TensorDesc> InferSample(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kSample, in, 2, 2));
  RECQ_ASSIGN_OR_RETURN(const SampleAttrs* a, AttrsOf<SampleAttrs>(kSample, attrs));
  RECQ_RETURN_IF_ERROR(CheckSampleAttrs(*a));
  const TensorDesc& x = *in[0];
  if ((x.dtype != DataType::kFloat32 && x.dtype != DataType::kFloat16) ||
      (x.shape.size() != 2 && x.shape.size() != 3)) {
    return Bad(kSample, absl::StrCat("logits are ", x.ToString(),
                                     "; expected float32 or float16 [B, V] or [B, S, V]"));
  }
  for (int64_t d : x.shape) {
    if (d < 1)
      return Bad(kSample,
                 absl::StrCat("logits are ", x.ToString(), "; expected no empty dimension"));
  }
  const int64_t vocab = x.shape.back();
  if (x.NumElements() >= (int64_t{1} << 40) || vocab >= (int64_t{1} << 31)) {
    return Bad(kSample, absl::StrCat("logits are ", x.ToString(), "; expected V < 2^31"));
  }
  if (a->mode == SampleMode::kTopP && vocab > kSampleTopPMaxVocab) {
    return Bad(kSample, absl::StrCat("top_p takes V <= ", kSampleTopPMaxVocab, "; the logits are ",
                                     x.ToString()));
  }
  const TensorDesc& step = *in[1];
  if (step.dtype != DataType::kInt64 || step.NumElements() != 1) {
    return Bad(kSample, absl::StrCat("step is ", step.ToString(), "; expected int64 [1]"));
  }
  return TensorDesc{{x.shape[0], 1}, DataType::kInt64};
}

// The work-group size: 256 items on GPUs (a row of 50257 logits is about
// 200 elements an item a pass), 64 on CPUs (PoCL runs a group as loops over
// its items; 64 keeps the barriers' loops short). One size whatever the
// vocabulary, so that one program serves every model.
int64_t HeuristicLocal(const LoweringContext& ctx) { return ctx.device().GpuKernels() ? 256 : 64; }

absl::Status LowerSample(LoweringContext& ctx, const Node& node) {
  const SampleAttrs& a = AttrsOr<SampleAttrs>(node);
  const TensorDesc& x = ctx.graph().value(node.inputs[0]).desc;
  const int64_t batch = x.shape[0];
  const int64_t rows = x.shape.size() == 3 ? x.shape[1] : 1;
  const int64_t vocab = x.shape.back();
  RECQ_ASSIGN_OR_RETURN(int64_t local, Param(ctx, node, "local", HeuristicLocal(ctx),
                                             {16, 32, 64, 128, 256, 512, 1024}));
  local = static_cast<int64_t>(GpuGroup(ctx.device(), static_cast<size_t>(local)));
  Dispatch& d =
      ctx.Emit(MakeDispatch(ctx, "sampling.cl", "sample", {static_cast<size_t>(batch * local)},
                            {absl::StrCat("-DSAMPLE_KIND=", x.dtype == DataType::kFloat16 ? 1 : 0),
                             absl::StrCat("-DSAMPLE_LOCAL=", local),
                             absl::StrCat("-DSAMPLE_MODE=", static_cast<int>(a.mode))}));
  d.local = {static_cast<size_t>(local), 1, 1};
  static const std::shared_ptr<const HostData> kTable = std::make_shared<const HostData>(
      std::vector<int64_t>(SampleExpTable().begin(), SampleExpTable().end()));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]), ctx.Arg(node.outputs[0]),
            ctx.AddConstant(kTable)};
  const int64_t k = std::min<int64_t>(a.k, std::numeric_limits<int32_t>::max());
  AddInts(d, {vocab, rows, a.mode == SampleMode::kTopK ? k : 1});
  const double p16 = std::nearbyint(static_cast<double>(a.p) * 65536.0);
  d.args.push_back(
      DispatchArg::Scalar(static_cast<cl_uint>(std::min(65536.0, std::max(0.0, p16)))));
  d.args.push_back(DispatchArg::Scalar(SampleScale(a.temperature)));
  const uint64_t seed = static_cast<uint64_t>(a.seed);
  d.args.push_back(DispatchArg::Scalar(static_cast<cl_uint>(seed & 0xffffffffu)));
  d.args.push_back(DispatchArg::Scalar(static_cast<cl_uint>(seed >> 32)));
  return absl::OkStatus();
}

std::vector<KernelParams> SampleParamSpace(const Node&, const LoweringContext& ctx) {
  // GPUs: a bigger group spreads a row over more lanes of its one compute
  // unit; CPUs: fewer items, fewer barrier loops.
  const std::vector<int64_t> sizes =
      ctx.device().GpuKernels() ? std::vector<int64_t>{256, 1024} : std::vector<int64_t>{64, 16};
  return ParamSpace({{"local", HeuristicLocal(ctx)}}, {{"local", sizes}});
}

}  // namespace

RECQ_REGISTER_OPS(Sampling) {
  OpDef def;
  def.type = kSample;
  def.typed = true;
  def.infer = InferSample;
  KernelVariant v;
  v.name = "sample";
  v.lower = LowerSample;
  v.param_space = SampleParamSpace;
  def.variants = {std::move(v)};
  return table.Add(std::move(def));
}

}  // namespace recq::internal
