// ONNX RNN, GRU and LSTM (opsets 7 on; layout from opset 14), imported as
// one MatMul for the input projection of every time step and direction
// (X [T, B, I] * W^T [I, D*G*H]) and a RecurrentSequence node (recurrent.h)
// that runs the steps, one dispatch each (two for a GRU with
// linear_before_reset 0), each work-item computing one hidden unit's gates
// from the previous state and R (recurrent_steps), or on GPUs, for 32 or
// more units, each work-group 32 units with every product split over 8
// work-items and summed in local memory (recurrent_steps_split). Slices,
// reshapes and transposes then cut Y, Y_h and Y_c from its output and bring
// them to the node's layout.
//
// Supported: forward, reverse and bidirectional; every activation ONNX
// lists, with activation_alpha / activation_beta; clip; optional B,
// sequence_lens (constant or computed, int32 or int64), initial_h,
// initial_c and peepholes; GRU linear_before_reset; LSTM input_forget
// (f = 1 - i); layout 0 and 1. Unimplemented: sequences of more than
// kMaxRecurrentSteps (4096) steps, and shapes unknown at import.
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "engine/ops/layout_attrs.h"
#include "engine/ops/onnx_emitter.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/ops/recurrent.h"
#include "engine/ops/typed.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

const OpType kSlice("Slice");

bool IsFloat(DataType t) { return t == DataType::kFloat32 || t == DataType::kFloat16; }

absl::StatusOr<TensorDesc> Infer(const OpAttrs& attrs, InferInputs in) {
  const OpType op = kRecurrentSequence;
  RECQ_RETURN_IF_ERROR(CheckInputCount(op, in, 2, 7));
  RECQ_ASSIGN_OR_RETURN(const RecurrentAttrs* a, AttrsOf<RecurrentAttrs>(op, attrs));
  const int64_t d = a->directions, h = a->hidden_size, g = GatesOf(a->cell);
  if (d != 1 && d != 2) return Bad(op, absl::StrCat("directions is ", d, "; expected 1 or 2"));
  if (h <= 0) return Bad(op, absl::StrCat("hidden_size is ", h, "; expected > 0"));
  if (static_cast<int64_t>(a->activations.size()) != d * FunctionsOf(a->cell)) {
    return Bad(op, absl::StrCat(a->activations.size(), " activations; expected ",
                                d * FunctionsOf(a->cell)));
  }
  const int64_t max_rows = a->cell == RecurrentCell::kLstm ? 2 : 1;
  if (a->state_rows < 0 || a->state_rows > max_rows) {
    return Bad(op, absl::StrCat("state_rows is ", a->state_rows, "; expected 0 to ", max_rows));
  }
  if (a->layout != 0 && a->layout != 1) {
    return Bad(op, absl::StrCat("layout is ", a->layout, "; expected 0 or 1"));
  }
  const TensorDesc& xw = *in[0];
  if (!IsFloat(xw.dtype) || xw.shape.size() != 3 || xw.shape[2] != d * g * h) {
    return Bad(op, absl::StrCat("xw is ", xw.ToString(), "; expected float [T, B, ", d * g * h,
                                "] or [B, T, ", d * g * h, "]"));
  }
  const int64_t t = xw.shape[a->layout == 0 ? 0 : 1];
  const int64_t b = xw.shape[a->layout == 0 ? 1 : 0];
  if (t < 1 || t > kMaxRecurrentSteps || b < 1) {
    return Bad(op, absl::StrCat("xw is ", xw.ToString(), "; expected 1 to ", kMaxRecurrentSteps,
                                " time steps and a batch of at least 1"));
  }
  auto check = [&](size_t i, const char* what, const Shape& want) -> absl::Status {
    if (i >= in.size() || in[i] == nullptr) return absl::OkStatus();
    if (in[i]->dtype != xw.dtype || in[i]->shape != want) {
      return Bad(op, absl::StrCat(what, " is ", in[i]->ToString(), "; expected ",
                                  DataTypeName(xw.dtype), " ", S(want)));
    }
    return absl::OkStatus();
  };
  RECQ_RETURN_IF_ERROR(check(1, "rt", {d, h, g * h}));
  RECQ_RETURN_IF_ERROR(check(2, "bias", {d, 2 * g * h}));
  if (in.size() > 3 && in[3] != nullptr &&
      ((in[3]->dtype != DataType::kInt32 && in[3]->dtype != DataType::kInt64) ||
       in[3]->shape != Shape{b})) {
    return Bad(op, absl::StrCat("sequence lengths are ", in[3]->ToString(),
                                "; expected int32 or int64 [", b, "]"));
  }
  RECQ_RETURN_IF_ERROR(check(4, "initial_h", {d, b, h}));
  if (a->cell != RecurrentCell::kLstm && in.size() > 5) {
    return Bad(op, "initial_c and peepholes are LSTM inputs");
  }
  RECQ_RETURN_IF_ERROR(check(5, "initial_c", {d, b, h}));
  RECQ_RETURN_IF_ERROR(check(6, "peepholes", {d, 3 * h}));
  return TensorDesc{{t + a->state_rows, d, b, h}, xw.dtype};
}

bool Present(const Node& node, size_t i) {
  return i < node.inputs.size() && node.inputs[i] != kNoValue;
}

// The split variant's work-group: kUnits hidden units times kSplit slices
// of each recurrent product.
constexpr int64_t kUnits = 32;
constexpr int64_t kSplit = 8;

// Lower emits the steps with one work-item per hidden unit (split false)
// or a work-group of kUnits x kSplit per kUnits units (split true).
absl::Status Lower(LoweringContext& ctx, const Node& node, bool split) {
  const RecurrentAttrs& a = AttrsOr<RecurrentAttrs>(node);
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  const int64_t t = out[0] - a.state_rows, d = out[1], b = out[2], h = out[3];
  // Offsets are 32-bit on the device except into xw; the scratch holds 5
  // states.
  const int64_t limit = int64_t{1} << 31;
  if (5 * d * b * h >= limit || Product(out, 0, 4) >= limit ||
      Product(ShapeOf(ctx, node.inputs[1]), 0, 3) >= limit ||
      Product(ShapeOf(ctx, node.inputs[0]), 0, 3) >= int64_t{1} << 40) {
    return Unsupported(node, "tensors of 2^31 elements or more");
  }
  auto arg = [&](size_t i) { return ctx.Arg(Present(node, i) ? node.inputs[i] : kNoValue); };
  std::vector<std::string> options = {absl::StrCat("-DCELL=", static_cast<int>(a.cell))};
  options.push_back(Present(node, 3)
                        ? absl::StrCat("-DHAS_SEQ -DSEQ_T=",
                                       TypedStorage(ctx.graph().value(node.inputs[3]).desc.dtype))
                        : std::string("-DSEQ_T=int"));
  if (Present(node, 2)) options.push_back("-DHAS_B");
  if (Present(node, 6)) options.push_back("-DHAS_P");
  if (a.cell == RecurrentCell::kLstm && a.input_forget) options.push_back("-DINPUT_FORGET");
  if (split) options.push_back(absl::StrCat("-DKSPLIT=", kSplit, " -DUNITS=", kUnits));

  std::vector<std::string> init_options;
  if (Present(node, 4)) init_options.push_back("-DHAS_H0");
  if (Present(node, 5)) init_options.push_back("-DHAS_C0");
  const int64_t dbh = d * b * h;
  Dispatch& init = ctx.Emit(MakeDispatch(ctx, "recurrent.cl", "recurrent_init",
                                         {static_cast<size_t>(dbh)}, init_options));
  init.args = {arg(4), arg(5), ctx.Scratch()};
  AddInts(init, {dbh});

  cl_int8 kinds{};
  cl_float8 alphas{}, betas{};
  for (size_t i = 0; i < a.activations.size() && i < 8; ++i) {
    kinds.s[i] = static_cast<cl_int>(a.activations[i].kind);
    alphas.s[i] = a.activations[i].alpha;
    betas.s[i] = a.activations[i].beta;
  }
  int reverse_mask = 0;
  for (int64_t i = 0; i < d; ++i) reverse_mask |= IsReverse(a, i) ? 1 << i : 0;
  const cl_int4 dims = {{static_cast<cl_int>(t), static_cast<cl_int>(b), static_cast<cl_int>(h),
                         static_cast<cl_int>(d)}};
  const cl_int4 mode = {
      {static_cast<cl_int>(a.layout), reverse_mask, static_cast<cl_int>(a.state_rows), 0}};
  const bool two_phase = a.cell == RecurrentCell::kGru && !a.linear_before_reset;
  const std::vector<int> phases = two_phase ? std::vector<int>{1, 2} : std::vector<int>{0};
  for (int64_t s = 0; s < t; ++s) {
    for (int phase : phases) {
      std::vector<std::string> o = options;
      o.push_back(absl::StrCat("-DPHASE=", phase));
      Dispatch& step =
          ctx.Emit(MakeDispatch(ctx, "recurrent.cl", "recurrent_step",
                                {static_cast<size_t>(h), 1, static_cast<size_t>(b * d)}, o));
      if (split) {
        SetRange(step, {static_cast<size_t>(h), kSplit, static_cast<size_t>(b * d)},
                 {kUnits, kSplit, 1});
      }
      step.args = {arg(0), arg(1), arg(2), arg(3), arg(6), ctx.Arg(node.outputs[0]), ctx.Scratch()};
      AddInts(step, {s});
      step.args.push_back(DispatchArg::Scalar(dims));
      step.args.push_back(DispatchArg::Scalar(mode));
      step.args.push_back(DispatchArg::Scalar(kinds));
      step.args.push_back(DispatchArg::Scalar(alphas));
      step.args.push_back(DispatchArg::Scalar(betas));
      step.args.push_back(DispatchArg::Scalar(a.clip));
    }
  }
  return absl::OkStatus();
}

size_t ScratchBytes(const Node& node, const LoweringContext& ctx) {
  const Shape& out = ShapeOf(ctx, node.outputs[0]);
  return static_cast<size_t>(5 * out[1] * out[2] * out[3]) * sizeof(float);
}

// --- ONNX import ---

struct ActivationName {
  const char* name;
  RecurrentActivationKind kind;
  bool alpha, beta;
  float default_alpha, default_beta;
};

constexpr ActivationName kActivationNames[] = {
    {"relu", RecurrentActivationKind::kRelu, false, false, 0, 0},
    {"tanh", RecurrentActivationKind::kTanh, false, false, 0, 0},
    {"sigmoid", RecurrentActivationKind::kSigmoid, false, false, 0, 0},
    {"affine", RecurrentActivationKind::kAffine, true, true, 1.0f, 0.0f},
    {"leakyrelu", RecurrentActivationKind::kLeakyRelu, true, false, 0.01f, 0},
    {"thresholdedrelu", RecurrentActivationKind::kThresholdedRelu, true, false, 1.0f, 0},
    {"scaledtanh", RecurrentActivationKind::kScaledTanh, true, true, 1.0f, 1.0f},
    {"hardsigmoid", RecurrentActivationKind::kHardSigmoid, true, true, 0.2f, 0.5f},
    {"elu", RecurrentActivationKind::kElu, true, false, 1.0f, 0},
    {"softsign", RecurrentActivationKind::kSoftsign, false, false, 0, 0},
    {"softplus", RecurrentActivationKind::kSoftplus, false, false, 0, 0},
};

// Activations reads `activations`, `activation_alpha` and `activation_beta`
// (alphas and betas consumed in order by the functions that take one);
// absent ones take the cell's defaults.
absl::StatusOr<std::vector<RecurrentActivation>> Activations(OnnxNodeContext& n, OnnxNodeEmitter& e,
                                                             RecurrentCell cell,
                                                             int64_t directions) {
  RECQ_ASSIGN_OR_RETURN(std::vector<std::string> names, e.Strings("activations"));
  RECQ_ASSIGN_OR_RETURN(std::vector<float> alphas, n.Floats("activation_alpha"));
  RECQ_ASSIGN_OR_RETURN(std::vector<float> betas, n.Floats("activation_beta"));
  const int64_t per = FunctionsOf(cell);
  if (names.empty()) {
    const std::vector<std::string> defaults =
        cell == RecurrentCell::kRnn   ? std::vector<std::string>{"Tanh"}
        : cell == RecurrentCell::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                      : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    for (int64_t i = 0; i < directions; ++i)
      names.insert(names.end(), defaults.begin(), defaults.end());
  } else if (static_cast<int64_t>(names.size()) == per && directions == 2) {
    // One list for both directions.
    std::vector<std::string> twice = names;
    names.insert(names.end(), twice.begin(), twice.end());
  }
  if (static_cast<int64_t>(names.size()) != per * directions) {
    return n.Invalid(absl::StrCat("activations has ", names.size(), " entries; expected ",
                                  per * directions, " (", per, " per direction)"));
  }
  std::vector<RecurrentActivation> out;
  size_t next_alpha = 0, next_beta = 0;
  for (const std::string& name : names) {
    const std::string lower = absl::AsciiStrToLower(name);
    const ActivationName* found = nullptr;
    for (const ActivationName& c : kActivationNames) {
      if (lower == c.name) found = &c;
    }
    if (found == nullptr) return n.Unsupported(absl::StrCat("activation '", name, "'"));
    RecurrentActivation f{found->kind, found->default_alpha, found->default_beta};
    if (found->alpha && next_alpha < alphas.size()) f.alpha = alphas[next_alpha++];
    if (found->beta && next_beta < betas.size()) f.beta = betas[next_beta++];
    out.push_back(f);
  }
  return out;
}

absl::Status Import(OnnxNodeContext& n, RecurrentCell cell) {
  OnnxNodeEmitter* e = EmitterOf(n);
  if (e == nullptr) return n.Unsupported("an importer that can emit several graph nodes");
  if (cell == RecurrentCell::kRnn) {
    RECQ_RETURN_IF_ERROR(n.CheckAttrs({"activation_alpha", "activation_beta", "activations", "clip",
                                       "direction", "hidden_size", "layout"}));
  } else if (cell == RecurrentCell::kGru) {
    RECQ_RETURN_IF_ERROR(
        n.CheckAttrs({"activation_alpha", "activation_beta", "activations", "clip", "direction",
                      "hidden_size", "layout", "linear_before_reset"}));
  } else {
    RECQ_RETURN_IF_ERROR(n.CheckAttrs({"activation_alpha", "activation_beta", "activations", "clip",
                                       "direction", "hidden_size", "layout", "input_forget"}));
  }
  RecurrentAttrs a;
  a.cell = cell;
  RECQ_ASSIGN_OR_RETURN(std::string direction, n.String("direction", "forward"));
  if (direction == "bidirectional") {
    a.directions = 2;
  } else if (direction == "reverse") {
    a.reverse = true;
  } else if (direction != "forward") {
    return n.Invalid(
        absl::StrCat("direction '", direction, "'; expected forward, reverse or bidirectional"));
  }
  RECQ_ASSIGN_OR_RETURN(a.layout, n.Int("layout", 0));
  RECQ_ASSIGN_OR_RETURN(int64_t lbr, n.Int("linear_before_reset", 0));
  RECQ_ASSIGN_OR_RETURN(int64_t input_forget, n.Int("input_forget", 0));
  a.linear_before_reset = lbr != 0;
  a.input_forget = input_forget != 0;
  RECQ_ASSIGN_OR_RETURN(a.clip, n.Float("clip", 0.0f));
  if (n.HasAttr("clip") && !(a.clip > 0.0f)) {
    return n.Invalid(absl::StrCat("clip is ", a.clip, "; expected > 0"));
  }
  if (a.layout != 0 && a.layout != 1) {
    return n.Invalid(absl::StrCat("layout is ", a.layout, "; expected 0 or 1"));
  }
  RECQ_ASSIGN_OR_RETURN(a.activations, Activations(n, *e, cell, a.directions));

  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  RECQ_ASSIGN_OR_RETURN(ValueId w, n.Input(1));
  RECQ_ASSIGN_OR_RETURN(ValueId r, n.Input(2));
  const Shape xs = n.desc(x).shape, ws = n.desc(w).shape, rs = n.desc(r).shape;
  const int64_t g = GatesOf(cell), d = a.directions;
  if (xs.size() != 3 || ws.size() != 3 || rs.size() != 3) {
    return n.Invalid(absl::StrCat("X ", n.desc(x).ToString(), ", W ", n.desc(w).ToString(),
                                  " and R ", n.desc(r).ToString(), " must have rank 3"));
  }
  if (ws[0] != d || ws[1] % g != 0) {
    return n.Invalid(absl::StrCat("W is ", n.desc(w).ToString(), "; expected [", d, ", ", g,
                                  " * hidden_size, input_size]"));
  }
  const int64_t h = ws[1] / g;
  RECQ_ASSIGN_OR_RETURN(int64_t hidden, n.Int("hidden_size", h));
  const int64_t t = xs[a.layout == 0 ? 0 : 1], b = xs[a.layout == 0 ? 1 : 0], in = xs[2];
  if (hidden != h || ws[2] != in || rs != Shape{d, g * h, h}) {
    return n.Invalid(absl::StrCat("X ", n.desc(x).ToString(), ", W ", n.desc(w).ToString(),
                                  " and R ", n.desc(r).ToString(), " do not fit hidden_size ",
                                  hidden, " and ", d, " direction(s)"));
  }
  if (t < 1 || b < 1 || in < 1) {
    return n.Unsupported(absl::StrCat("X of shape ", n.desc(x).ToString(),
                                      " (time steps, batch and input size must be known)"));
  }
  if (t > kMaxRecurrentSteps) {
    return n.Unsupported(absl::StrCat("a sequence of ", t, " steps (at most ", kMaxRecurrentSteps,
                                      ": each step is one dispatch)"));
  }
  a.hidden_size = h;
  const bool lstm = cell == RecurrentCell::kLstm;
  RECQ_ASSIGN_OR_RETURN(ValueId bias, n.Input(3, true));
  RECQ_ASSIGN_OR_RETURN(ValueId seq, n.Input(4, true));
  RECQ_ASSIGN_OR_RETURN(ValueId h0, n.Input(5, true));
  ValueId c0 = kNoValue, p = kNoValue;
  if (lstm) {
    RECQ_ASSIGN_OR_RETURN(c0, n.Input(6, true));
    RECQ_ASSIGN_OR_RETURN(p, n.Input(7, true));
  }
  const bool want_y = n.num_outputs() > 0 && n.OutputUsed(0);
  const bool want_h = n.num_outputs() > 1 && n.OutputUsed(1);
  const bool want_c = lstm && n.num_outputs() > 2 && n.OutputUsed(2);
  a.state_rows = want_c ? 2 : want_h ? 1 : 0;

  // The input projection of every step and direction: X * W^T, W viewed as
  // [D*G*H, I].
  RECQ_ASSIGN_OR_RETURN(
      ValueId w2, e->EmitValue(OpType::kReshape, {w}, ReshapeAttrs{{d * g * h, in}}, "w_rows"));
  RECQ_ASSIGN_OR_RETURN(ValueId wt,
                        e->EmitValue(OpType::kTranspose, {w2}, TransposeAttrs{{1, 0}}, "w_t"));
  RECQ_ASSIGN_OR_RETURN(ValueId xw, e->EmitValue(OpType::kMatMul, {x, wt}, {}, "xw"));
  RECQ_ASSIGN_OR_RETURN(ValueId rt,
                        e->EmitValue(OpType::kTranspose, {r}, TransposeAttrs{{0, 2, 1}}, "r_t"));
  if (a.layout == 1) {
    // initial_h and initial_c are [B, D, H] in layout 1.
    for (ValueId* s : {&h0, &c0}) {
      if (*s == kNoValue) continue;
      RECQ_ASSIGN_OR_RETURN(*s, e->EmitValue(OpType::kTranspose, {*s}, TransposeAttrs{{1, 0, 2}},
                                             s == &h0 ? "h0_dbh" : "c0_dbh"));
    }
  }
  std::vector<ValueId> inputs = {xw, rt, bias, seq, h0};
  if (lstm) inputs.insert(inputs.end(), {c0, p});
  while (inputs.size() > 2 && inputs.back() == kNoValue) inputs.pop_back();
  RECQ_ASSIGN_OR_RETURN(ValueId seq_out, e->EmitValue(kRecurrentSequence, inputs, a, "sequence"));

  // Y: rows 0..T-1 ([T, D, B, H]; [B, T, D, H] in layout 1).
  if (want_y) {
    ValueId y = seq_out;
    if (a.state_rows > 0) {
      RECQ_ASSIGN_OR_RETURN(
          y, e->EmitValue(kSlice, {seq_out}, SliceAttrs{{0}, {t}, {0}, {1}}, "y_rows"));
    }
    if (a.layout == 1) {
      RECQ_RETURN_IF_ERROR(n.EmitOutput(0, OpType::kTranspose, {y}, TransposeAttrs{{2, 0, 1, 3}}));
    } else {
      RECQ_RETURN_IF_ERROR(n.EmitOutput(0, OpType::kReshape, {y}, ReshapeAttrs{{t, d, b, h}}));
    }
  }
  // Y_h and Y_c: rows T and T + 1 ([D, B, H]; [B, D, H] in layout 1).
  for (int out = 1; out <= 2; ++out) {
    if (!(out == 1 ? want_h : want_c)) continue;
    RECQ_ASSIGN_OR_RETURN(
        ValueId row, e->EmitValue(kSlice, {seq_out}, SliceAttrs{{t + out - 1}, {t + out}, {0}, {1}},
                                  out == 1 ? "h_row" : "c_row"));
    if (a.layout == 1) {
      RECQ_ASSIGN_OR_RETURN(row, e->EmitValue(OpType::kReshape, {row}, ReshapeAttrs{{d, b, h}},
                                              out == 1 ? "h_dbh" : "c_dbh"));
      RECQ_RETURN_IF_ERROR(n.EmitOutput(out, OpType::kTranspose, {row}, TransposeAttrs{{1, 0, 2}}));
    } else {
      RECQ_RETURN_IF_ERROR(n.EmitOutput(out, OpType::kReshape, {row}, ReshapeAttrs{{d, b, h}}));
    }
  }
  return absl::OkStatus();
}

}  // namespace

RECQ_REGISTER_OPS(Recurrent) {
  OpDef def;
  def.type = kRecurrentSequence;
  def.typed = true;
  def.onnx = {{"", "RNN", 7, kOnnxOpsetMax,
               [](OnnxNodeContext& n) { return Import(n, RecurrentCell::kRnn); }},
              {"", "GRU", 7, kOnnxOpsetMax,
               [](OnnxNodeContext& n) { return Import(n, RecurrentCell::kGru); }},
              {"", "LSTM", 7, kOnnxOpsetMax,
               [](OnnxNodeContext& n) { return Import(n, RecurrentCell::kLstm); }}};
  def.infer = Infer;
  // GPUs: a step's kUnits x kSplit work-groups give a small batch enough
  // work-items to fill the device, and read R coalesced.
  KernelVariant split{
      "recurrent_steps_split",
      [](const Node& node, const LoweringContext& ctx) {
        const size_t group = kUnits * kSplit;
        return ctx.device().GpuKernels() && ShapeOf(ctx, node.outputs[0])[3] >= kUnits &&
               (ctx.device().max_work_group_size == 0 || ctx.device().max_work_group_size >= group);
      },
      [](LoweringContext& ctx, const Node& node) { return Lower(ctx, node, true); }};
  split.scratch_bytes = ScratchBytes;
  KernelVariant plain{"recurrent_steps", nullptr, [](LoweringContext& ctx, const Node& node) {
                        return Lower(ctx, node, false);
                      }};
  plain.scratch_bytes = ScratchBytes;
  def.variants = {std::move(split), std::move(plain)};
  return table.Add(std::move(def));
}

}  // namespace recq::internal
