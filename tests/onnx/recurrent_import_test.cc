// ONNX RNN, GRU and LSTM nodes imported (one MatMul for the input
// projection, a RecurrentSequence node, slices and transposes for the
// outputs) and run against the recurrences of tests/reference/recurrent.h
// fed with X * W^T computed here in double: bidirectional and reverse,
// both layouts, initial states as graph inputs, constant sequence lengths
// shorter than the sequence, peepholes, every output combination. Fresh
// random inputs and weights; outputs poisoned with NaN before the run.
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "engine/ops/recurrent.h"
#include "onnx/onnx_pb.h"
#include "recq/onnx.h"
#include "reference/recurrent.h"
#include "testing/test_env.h"

namespace recq {
namespace {

using internal::RecurrentAttrs;
using internal::RecurrentCell;

// Float32 sums of at most 8 products per gate over at most 6 steps of
// bounded functions.
constexpr float kAtol = 5e-5f;
constexpr float kRtol = 1e-4f;

struct Case {
  std::string name;
  RecurrentCell cell;
  std::string direction;
  int64_t layout = 0;
  bool lbr = false;
  bool seq = false, h0 = false, c0 = false, peep = false, bias = true;
  bool y = true, y_h = true, y_c = false;
};

const Case kCases[] = {
    {"LstmBidirectionalEverything", RecurrentCell::kLstm, "bidirectional", 0, false, true, true,
     true, true, true, true, true, true},
    {"LstmLayout1CellStateOnly", RecurrentCell::kLstm, "forward", 1, false, false, true, true,
     false, true, false, false, true},
    {"GruBidirectionalLayout1", RecurrentCell::kGru, "bidirectional", 1, false, false, true, false,
     false, true, true, true, false},
    {"GruReverseLinearBeforeReset", RecurrentCell::kGru, "reverse", 0, true, true, true, false,
     false, true, false, true, false},
    {"RnnBidirectionalLayout1YOnly", RecurrentCell::kRnn, "bidirectional", 1, false, false, false,
     false, false, false, true, false, false},
};

std::vector<float> Random(size_t n, std::mt19937& rng, float scale = 1.0f) {
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(n);
  for (float& f : v) f = u(rng);
  return v;
}

class RecurrentImportTest : public ::testing::TestWithParam<Case> {};

TEST_P(RecurrentImportTest, MatchesReference) {
  const Case& c = GetParam();
  const uint32_t seed = std::random_device{}();
  ::testing::Test::RecordProperty("seed", std::to_string(seed));
  std::mt19937 rng(seed);
  constexpr int64_t kT = 6, kB = 3, kI = 5, kH = 4;
  const int64_t d = c.direction == "bidirectional" ? 2 : 1, g = internal::GatesOf(c.cell);
  const bool lstm = c.cell == RecurrentCell::kLstm;

  const std::vector<float> x = Random(kT * kB * kI, rng);  // in the node's layout
  const std::vector<float> w = Random(d * g * kH * kI, rng, 0.6f);
  const std::vector<float> r = Random(d * g * kH * kH, rng, 0.5f);
  const std::vector<float> bias = Random(d * 2 * g * kH, rng, 0.5f);
  const std::vector<float> p = Random(d * 3 * kH, rng, 0.5f);
  const std::vector<float> h0 = Random(d * kB * kH, rng);  // in the node's layout
  const std::vector<float> c0 = Random(d * kB * kH, rng);
  const std::vector<int32_t> seq = {kT, 2, 5};

  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(14);
  onnx::GraphProto* graph = model.mutable_graph();
  auto add_input = [&](const std::string& name, std::vector<int64_t> shape) {
    onnx::ValueInfoProto* in = graph->add_input();
    in->set_name(name);
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t v : shape) tt->mutable_shape()->add_dim()->set_dim_value(v);
  };
  auto add_init = [&](const std::string& name, std::vector<int64_t> dims,
                      const std::vector<float>& data) {
    onnx::TensorProto* t = graph->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t v : dims) t->add_dims(v);
    for (float f : data) t->add_float_data(f);
  };
  const std::vector<int64_t> state_shape =
      c.layout == 0 ? std::vector<int64_t>{d, kB, kH} : std::vector<int64_t>{kB, d, kH};
  add_input("x",
            c.layout == 0 ? std::vector<int64_t>{kT, kB, kI} : std::vector<int64_t>{kB, kT, kI});
  add_init("w", {d, g * kH, kI}, w);
  add_init("r", {d, g * kH, kH}, r);
  if (c.bias) add_init("b", {d, 2 * g * kH}, bias);
  if (c.seq) {
    onnx::TensorProto* t = graph->add_initializer();
    t->set_name("seq");
    t->set_data_type(onnx::TensorProto::INT32);
    t->add_dims(kB);
    for (int32_t v : seq) t->add_int32_data(v);
  }
  if (c.h0) add_input("h0", state_shape);
  if (c.c0) add_input("c0", state_shape);
  if (c.peep) add_init("p", {d, 3 * kH}, p);

  onnx::NodeProto* node = graph->add_node();
  node->set_op_type(c.cell == RecurrentCell::kRnn   ? "RNN"
                    : c.cell == RecurrentCell::kGru ? "GRU"
                                                    : "LSTM");
  node->set_name("rec");
  for (const std::string& in :
       {std::string("x"), std::string("w"), std::string("r"), std::string(c.bias ? "b" : ""),
        std::string(c.seq ? "seq" : ""), std::string(c.h0 ? "h0" : "")}) {
    node->add_input(in);
  }
  if (lstm) {
    node->add_input(c.c0 ? "c0" : "");
    node->add_input(c.peep ? "p" : "");
  }
  const std::vector<std::string> outputs = {c.y ? "y" : "", c.y_h ? "y_h" : "", c.y_c ? "y_c" : ""};
  for (int i = 0; i < (lstm ? 3 : 2); ++i) {
    node->add_output(outputs[i]);
    if (outputs[i].empty()) continue;
    onnx::ValueInfoProto* o = graph->add_output();
    o->set_name(outputs[i]);
    o->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  auto attr_int = [&](const char* name, int64_t v) {
    onnx::AttributeProto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  };
  attr_int("hidden_size", kH);
  attr_int("layout", c.layout);
  if (c.cell == RecurrentCell::kGru) attr_int("linear_before_reset", c.lbr ? 1 : 0);
  onnx::AttributeProto* dir = node->add_attribute();
  dir->set_name("direction");
  dir->set_type(onnx::AttributeProto::STRING);
  dir->set_s(c.direction);

  // The reference, in layout 0.
  RecurrentAttrs a;
  a.cell = c.cell;
  a.hidden_size = kH;
  a.directions = d;
  a.reverse = c.direction == "reverse";
  a.linear_before_reset = c.lbr;
  const std::vector<internal::RecurrentActivation> per =
      c.cell == RecurrentCell::kRnn
          ? std::vector<internal::RecurrentActivation>{{internal::RecurrentActivationKind::kTanh}}
      : c.cell == RecurrentCell::kGru
          ? std::vector<
                internal::RecurrentActivation>{{internal::RecurrentActivationKind::kSigmoid},
                                               {internal::RecurrentActivationKind::kTanh}}
          : std::vector<internal::RecurrentActivation>{
                {internal::RecurrentActivationKind::kSigmoid},
                {internal::RecurrentActivationKind::kTanh},
                {internal::RecurrentActivationKind::kTanh}};
  for (int64_t i = 0; i < d; ++i) a.activations.insert(a.activations.end(), per.begin(), per.end());
  auto state_at = [&](const std::vector<float>& s, int64_t dd, int64_t b, int64_t j) {
    return c.layout == 0 ? s[(dd * kB + b) * kH + j] : s[(b * d + dd) * kH + j];
  };
  reference::RecurrentInputs ri;
  ri.steps = kT;
  ri.batch = kB;
  ri.proj = [&](int64_t t, int64_t b, int64_t dd, int64_t row) {
    double s = 0;
    for (int64_t i = 0; i < kI; ++i) {
      const float xv = c.layout == 0 ? x[(t * kB + b) * kI + i] : x[(b * kT + t) * kI + i];
      s += double(xv) * w[(dd * g * kH + row) * kI + i];
    }
    return s;
  };
  ri.rec = [&](int64_t dd, int64_t row, int64_t k) {
    return double(r[(dd * g * kH + row) * kH + k]);
  };
  if (c.bias) ri.bias = bias;
  if (c.seq) ri.seq.assign(seq.begin(), seq.end());
  if (c.peep) ri.p = p;
  for (int64_t dd = 0; dd < d; ++dd) {
    for (int64_t b = 0; b < kB; ++b) {
      for (int64_t j = 0; j < kH; ++j) {
        if (c.h0) ri.h0.push_back(state_at(h0, dd, b, j));
        if (c.c0) ri.c0.push_back(state_at(c0, dd, b, j));
      }
    }
  }
  const reference::RecurrentResult want = reference::RunRecurrence(a, ri);

  absl::StatusOr<Graph> loaded = LoadOnnxFromBytes(model.SerializeAsString());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  absl::StatusOr<Engine> engine = Engine::Compile(testing::SharedContext(), *loaded);
  ASSERT_TRUE(engine.ok()) << engine.status();
  Bindings bindings;
  std::vector<Tensor> keep;
  keep.push_back(testing::NewTensor({{c.layout == 0 ? kT : kB, c.layout == 0 ? kB : kT, kI}}, x));
  bindings.Set("x", keep.back());
  if (c.h0) {
    keep.push_back(testing::NewTensor({state_shape}, h0));
    bindings.Set("h0", keep.back());
  }
  if (c.c0) {
    keep.push_back(testing::NewTensor({state_shape}, c0));
    bindings.Set("c0", keep.back());
  }
  std::vector<std::pair<std::string, Tensor>> outs;
  for (const BindingInfo& o : engine->outputs()) {
    outs.push_back({o.name, testing::NewTensor(o.desc)});
    bindings.Set(o.name, outs.back().second);
  }
  absl::StatusOr<Recording> rec = engine->Record();
  ASSERT_TRUE(rec.ok()) << rec.status();
  ASSERT_TRUE(rec->Run(bindings).ok());

  // Expected values in the node's layout.
  auto expect = [&](const std::string& name, int64_t i) -> float {
    if (name == "y") {
      // layout 0 [T, D, B, H]; layout 1 [B, T, D, H].
      int64_t t, dd, b, j = i % kH;
      if (c.layout == 0) {
        t = i / (d * kB * kH), dd = i / (kB * kH) % d, b = i / kH % kB;
      } else {
        b = i / (kT * d * kH), t = i / (d * kH) % kT, dd = i / kH % d;
      }
      return want.y[((t * d + dd) * kB + b) * kH + j];
    }
    const std::vector<float>& s = name == "y_h" ? want.y_h : want.y_c;
    const int64_t j = i % kH;
    const int64_t dd = c.layout == 0 ? i / (kB * kH) : i / kH % d;
    const int64_t b = c.layout == 0 ? i / kH % kB : i / (d * kH);
    return s[(dd * kB + b) * kH + j];
  };
  ASSERT_EQ(outs.size(), size_t(c.y) + c.y_h + c.y_c);
  for (const auto& [name, tensor] : outs) {
    const std::vector<float> got = testing::Download(tensor);
    const int64_t n = name == "y" ? kT * d * kB * kH : d * kB * kH;
    ASSERT_EQ(static_cast<int64_t>(got.size()), n) << name;
    for (int64_t i = 0; i < n; ++i) {
      const float e = expect(name, i);
      ASSERT_NEAR(got[i], e, kAtol + kRtol * std::abs(e)) << name << " element " << i;
    }
  }
}

// An RNN node over x [steps, 1, 2] with hidden size 3 and weights as graph
// inputs; `activation` and `direction` set when not empty.
std::string SmallRnn(int64_t steps, const std::string& activation, const std::string& direction) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(14);
  onnx::GraphProto* graph = model.mutable_graph();
  const std::vector<std::pair<std::string, std::vector<int64_t>>> inputs = {
      {"x", {steps, 1, 2}}, {"w", {1, 3, 2}}, {"r", {1, 3, 3}}};
  onnx::NodeProto* node = graph->add_node();
  node->set_op_type("RNN");
  node->set_name("rnn");
  for (const auto& [name, shape] : inputs) {
    onnx::ValueInfoProto* in = graph->add_input();
    in->set_name(name);
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t v : shape) tt->mutable_shape()->add_dim()->set_dim_value(v);
    node->add_input(name);
  }
  node->add_output("y");
  graph->add_output()->set_name("y");
  if (!activation.empty()) {
    onnx::AttributeProto* a = node->add_attribute();
    a->set_name("activations");
    a->set_type(onnx::AttributeProto::STRINGS);
    a->add_strings(activation);
  }
  if (!direction.empty()) {
    onnx::AttributeProto* a = node->add_attribute();
    a->set_name("direction");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(direction);
  }
  return model.SerializeAsString();
}

TEST(RecurrentImportErrorsTest, RejectsWhatItCannotRun) {
  ASSERT_TRUE(LoadOnnxFromBytes(SmallRnn(internal::kMaxRecurrentSteps, "Relu", "")).ok());
  absl::StatusOr<Graph> g = LoadOnnxFromBytes(SmallRnn(internal::kMaxRecurrentSteps + 1, "", ""));
  EXPECT_TRUE(absl::IsUnimplemented(g.status())) << g.status();
  EXPECT_THAT(std::string(g.status().message()),
              ::testing::AllOf(::testing::HasSubstr("'rnn'"), ::testing::HasSubstr("4097 steps")));
  g = LoadOnnxFromBytes(SmallRnn(4, "Swish", ""));
  EXPECT_TRUE(absl::IsUnimplemented(g.status())) << g.status();
  EXPECT_THAT(std::string(g.status().message()), ::testing::HasSubstr("activation 'Swish'"));
  g = LoadOnnxFromBytes(SmallRnn(4, "", "sideways"));
  EXPECT_TRUE(absl::IsInvalidArgument(g.status())) << g.status();
  EXPECT_THAT(std::string(g.status().message()), ::testing::HasSubstr("direction 'sideways'"));
}

INSTANTIATE_TEST_SUITE_P(Nodes, RecurrentImportTest, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace recq
