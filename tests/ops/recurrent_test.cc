// RecurrentSequence (the recurrence of ONNX RNN, GRU and LSTM) against the
// reference: every cell, both directions and bidirectional, both layouts,
// with and without bias, sequence lengths (int32 and int64, drawn from 0 to
// T, so entries stop early or never start), initial states, peepholes, GRU's
// linear_before_reset both ways, LSTM input_forget, clip and non-default
// activations. Odd sizes throughout.
#include <string>
#include <vector>

#include "engine/ops/recurrent.h"
#include "gtest/gtest.h"
#include "ops/op_test_util.h"

namespace recq::optest {
namespace {

using internal::RecurrentActivation;
using internal::RecurrentActivationKind;
using internal::RecurrentAttrs;
using internal::RecurrentCell;

struct Case {
  std::string name;
  RecurrentCell cell = RecurrentCell::kRnn;
  int64_t directions = 1;
  bool reverse = false;
  int64_t layout = 0;
  bool bias = false, seq = false, h0 = false, c0 = false, peep = false;
  DataType seq_type = DataType::kInt32;
  bool lbr = false, input_forget = false;
  float clip = 0.0f;
  int64_t state_rows = 0;
  // Every direction's functions in turn; empty: the defaults in each.
  std::vector<RecurrentActivation> activations;
  int64_t hidden = 7;  // >= 32: the GPU family's split variant
};

std::vector<RecurrentActivation> Defaults(RecurrentCell cell) {
  const RecurrentActivation tanh{RecurrentActivationKind::kTanh, 0, 0};
  const RecurrentActivation sigmoid{RecurrentActivationKind::kSigmoid, 0, 0};
  if (cell == RecurrentCell::kRnn) return {tanh};
  if (cell == RecurrentCell::kGru) return {sigmoid, tanh};
  return {sigmoid, tanh, tanh};
}

Case Make(std::string name, RecurrentCell cell, int64_t directions) {
  Case c;
  c.name = std::move(name);
  c.cell = cell;
  c.directions = directions;
  return c;
}

std::vector<Case> Cases() {
  using K = RecurrentActivationKind;
  std::vector<Case> cases;
  Case c = Make("LstmBidirectionalFull", RecurrentCell::kLstm, 2);
  c.bias = c.seq = c.h0 = c.c0 = c.peep = true;
  c.state_rows = 2;
  cases.push_back(c);
  c.name = "LstmBidirectionalWide";  // 45 units: 1.4 work-groups of the split variant
  c.hidden = 45;
  cases.push_back(c);

  c = Make("LstmReverseLayout1InputForgetClip", RecurrentCell::kLstm, 1);
  c.reverse = c.bias = c.h0 = c.input_forget = true;
  c.layout = 1;
  c.clip = 0.6f;
  c.state_rows = 1;
  c.activations = {
      {K::kHardSigmoid, 0.3f, 0.4f}, {K::kSoftsign, 0, 0}, {K::kScaledTanh, 0.9f, 1.2f}};
  cases.push_back(c);

  c = Make("GruBidirectionalLayout1", RecurrentCell::kGru, 2);
  c.layout = 1;
  c.bias = c.h0 = true;
  c.state_rows = 1;
  cases.push_back(c);
  c.name = "GruTwoPhaseWideSeq64";  // 33 units: just over one work-group
  c.hidden = 33;
  c.seq = true;
  c.seq_type = DataType::kInt64;
  cases.push_back(c);

  c = Make("GruLinearBeforeResetSeq64", RecurrentCell::kGru, 1);
  c.reverse = c.bias = c.seq = c.h0 = c.lbr = true;
  c.seq_type = DataType::kInt64;
  c.state_rows = 1;
  cases.push_back(c);
  c.name = "GruLinearBeforeResetWide";
  c.hidden = 33;
  cases.push_back(c);

  c = Make("GruNoBiasSeqBidirectional", RecurrentCell::kGru, 2);
  c.seq = true;
  c.activations = {
      {K::kSigmoid, 0, 0}, {K::kElu, 0.8f, 0}, {K::kHardSigmoid, 0.25f, 0.45f}, {K::kTanh, 0, 0}};
  cases.push_back(c);

  cases.push_back(Make("RnnForwardPlain", RecurrentCell::kRnn, 1));

  c = Make("RnnBidirectionalActivations", RecurrentCell::kRnn, 2);
  c.bias = c.seq = c.h0 = true;
  c.state_rows = 1;
  c.activations = {{K::kLeakyRelu, 0.1f, 0}, {K::kAffine, 0.5f, 0.1f}};
  cases.push_back(c);
  c.name = "RnnBidirectionalWide";
  c.hidden = 40;
  cases.push_back(c);

  c = Make("RnnMoreActivations", RecurrentCell::kRnn, 2);
  c.layout = 1;
  c.bias = true;
  c.clip = 2.0f;
  c.state_rows = 1;
  c.activations = {{K::kSoftplus, 0, 0}, {K::kThresholdedRelu, 0.2f, 0}};
  cases.push_back(c);

  c = Make("RnnRelu", RecurrentCell::kRnn, 1);
  c.bias = true;
  c.state_rows = 1;
  c.activations = {{K::kRelu, 0, 0}};
  cases.push_back(c);
  return cases;
}

class RecurrentTest : public ::testing::TestWithParam<Case> {};

TEST_P(RecurrentTest, MatchesReference) {
  const Case& c = GetParam();
  constexpr int64_t kT = 5, kB = 3;
  const int64_t kH = c.hidden;
  const int64_t d = c.directions, g = internal::GatesOf(c.cell);
  RecurrentAttrs a;
  a.cell = c.cell;
  a.hidden_size = kH;
  a.directions = d;
  a.reverse = c.reverse;
  a.layout = c.layout;
  a.linear_before_reset = c.lbr;
  a.input_forget = c.input_forget;
  a.clip = c.clip;
  a.state_rows = c.state_rows;
  a.activations = c.activations;
  for (int64_t i = 0; i < d && c.activations.empty(); ++i) {
    const std::vector<RecurrentActivation> per = Defaults(c.cell);
    a.activations.insert(a.activations.end(), per.begin(), per.end());
  }

  OpGraphBuilder b;
  const std::vector<int64_t> xw_shape = c.layout == 0 ? std::vector<int64_t>{kT, kB, d * g * kH}
                                                      : std::vector<int64_t>{kB, kT, d * g * kH};
  std::vector<TensorRef> in = {b.Input("xw", xw_shape, -1.5f, 1.5f),
                               b.Constant("rt", {d, kH, g * kH}, -0.4f, 0.4f)};
  in.push_back(c.bias ? b.Constant("bias", {d, 2 * g * kH}, -0.5f, 0.5f) : TensorRef{});
  in.push_back(c.seq ? b.Input("seq", {kB}, 0.0f, kT + 0.99f, c.seq_type) : TensorRef{});
  in.push_back(c.h0 ? b.Input("h0", {d, kB, kH}) : TensorRef{});
  if (c.cell == RecurrentCell::kLstm) {
    in.push_back(c.c0 ? b.Input("c0", {d, kB, kH}) : TensorRef{});
    in.push_back(c.peep ? b.Constant("p", {d, 3 * kH}, -0.5f, 0.5f) : TensorRef{});
  }
  while (in.size() > 2 && !in.back().valid()) in.pop_back();
  TensorRef y = b.graph().AddNode(internal::kRecurrentSequence, in, a);
  // Float32 sums of at most 45 products of magnitude <= 0.4 per gate,
  // through at most 5 steps of bounded functions (Relu, Affine and Softplus
  // grow by at most a few times).
  CheckOptions options;
  options.atol = 2e-5f;
  options.rtol = 1e-4f;
  // One node that no pass changes: optimize=false would compile it again.
  options.optimize = {true};
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), options);
}

INSTANTIATE_TEST_SUITE_P(Cells, RecurrentTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace recq::optest
