// 1-D Conv, ConvTranspose, MaxPool and AveragePool on (N, C, L), imported
// from small ONNX models as the 2-D ops on (N, C, 1, L) views, against a
// direct 1-D CPU reference (tests/reference/window_1d.h), and 3-D MaxPool
// and AveragePool on (N, C, D, H, W), imported as two 2-D pools, and 3-D
// Conv, imported as a 2-D conv over stacked depth taps, against direct 3-D
// loops here; fresh random inputs and weights, outputs poisoned
// with NaN before each run.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "onnx/onnx_pb.h"
#include "recq/onnx.h"
#include "reference/window_1d.h"
#include "testing/test_env.h"

namespace recq {
namespace {

using reference::Window1D;

// Float32 sums of at most a few hundred products of magnitude <= 1.
constexpr float kAtol = 1e-4f;
constexpr float kRtol = 1e-4f;

std::vector<float> Random(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& f : v) f = u(rng);
  return v;
}

using testing::FreshRng;

class Model {
 public:
  Model() {
    model_.set_ir_version(8);
    onnx::OperatorSetIdProto* id = model_.add_opset_import();
    id->set_domain("");
    id->set_version(13);
  }
  void Input(const std::string& name, const std::vector<int64_t>& shape) {
    onnx::ValueInfoProto* in = model_.mutable_graph()->add_input();
    in->set_name(name);
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : shape) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }
  void Initializer(const std::string& name, const std::vector<int64_t>& dims,
                   const std::vector<float>& data) {
    onnx::TensorProto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float f : data) t->add_float_data(f);
  }
  onnx::NodeProto* Node(const std::string& op, const std::vector<std::string>& in) {
    onnx::NodeProto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name("op");
    for (const std::string& s : in) n->add_input(s);
    n->add_output("y");
    onnx::ValueInfoProto* o = model_.mutable_graph()->add_output();
    o->set_name("y");
    o->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    return n;
  }
  static void Ints(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t i : v) a->add_ints(i);
  }
  static void Int(onnx::NodeProto* n, const std::string& name, int64_t v) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  std::string Bytes() const { return model_.SerializeAsString(); }

 private:
  onnx::ModelProto model_;
};

// Loads `m`, runs it on x [n, c, l] and compares y with `expected`.
void ExpectRunMatches(const Model& m, const std::vector<float>& x, std::vector<int64_t> x_shape,
                      const std::vector<float>& expected, std::vector<int64_t> y_shape) {
  absl::StatusOr<Graph> graph = LoadOnnxFromBytes(m.Bytes());
  ASSERT_TRUE(graph.ok()) << graph.status();
  const Value& y = graph->value(graph->outputs()[0]);
  ASSERT_EQ(y.desc.shape, y_shape);
  absl::StatusOr<Engine> engine = Engine::Compile(testing::SharedContext(), *graph);
  ASSERT_TRUE(engine.ok()) << engine.status();
  const std::vector<float> got =
      testing::RunRecorded(*engine, "x", reference::HostTensor{x_shape, x}, "y");
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], expected[i], kAtol + kRtol * std::abs(expected[i])) << "element " << i;
  }
}

struct ConvCase {
  const char* name;
  int64_t n, c, l, oc, k, stride, dilation, pad_begin, pad_end, groups;
  bool bias;
};

class Conv1DTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(Conv1DTest, MatchesDirectReference) {
  const ConvCase& p = GetParam();
  std::mt19937 rng = FreshRng();
  const std::vector<float> x = Random(p.n * p.c * p.l, rng);
  const std::vector<float> w = Random(p.oc * (p.c / p.groups) * p.k, rng);
  const std::vector<float> b = p.bias ? Random(p.oc, rng) : std::vector<float>();
  Model m;
  m.Input("x", {p.n, p.c, p.l});
  m.Initializer("w", {p.oc, p.c / p.groups, p.k}, w);
  std::vector<std::string> inputs = {"x", "w"};
  if (p.bias) {
    m.Initializer("b", {p.oc}, b);
    inputs.push_back("b");
  }
  onnx::NodeProto* node = m.Node("Conv", inputs);
  Model::Ints(node, "kernel_shape", {p.k});
  Model::Ints(node, "strides", {p.stride});
  Model::Ints(node, "dilations", {p.dilation});
  Model::Ints(node, "pads", {p.pad_begin, p.pad_end});
  Model::Int(node, "group", p.groups);
  int64_t lo = 0;
  const std::vector<float> want =
      reference::Conv1D(x, p.n, p.c, p.l, w, p.oc, b,
                        Window1D{p.k, p.stride, p.dilation, p.pad_begin, p.pad_end}, p.groups, &lo);
  ExpectRunMatches(m, x, {p.n, p.c, p.l}, want, {p.n, p.oc, lo});
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Conv1DTest,
    ::testing::Values(ConvCase{"Plain", 2, 8, 37, 6, 3, 1, 1, 1, 1, 1, true},
                      ConvCase{"StridedDilatedUneven", 2, 8, 37, 6, 5, 2, 2, 2, 1, 2, false},
                      // wav2vec2's positional conv at a smaller width: groups 16, kernel
                      // 128, padding 64 (the output is one longer than the input).
                      ConvCase{"Wav2Vec2Positional", 1, 32, 150, 32, 128, 1, 1, 64, 64, 16, true},
                      // Whisper's front end: kernel 3, padding 1, then stride 2.
                      ConvCase{"WhisperStride2", 1, 16, 60, 24, 3, 2, 1, 1, 1, 1, true}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(Conv1DTest, SameUpperAutoPad) {
  std::mt19937 rng = FreshRng();
  const std::vector<float> x = Random(1 * 4 * 20, rng);
  const std::vector<float> w = Random(5 * 4 * 4, rng);
  Model m;
  m.Input("x", {1, 4, 20});
  m.Initializer("w", {5, 4, 4}, w);
  onnx::NodeProto* node = m.Node("Conv", {"x", "w"});
  Model::Ints(node, "strides", {3});
  onnx::AttributeProto* a = node->add_attribute();
  a->set_name("auto_pad");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s("SAME_UPPER");
  // out = ceil(20 / 3) = 7; total pad = (7 - 1) * 3 + 4 - 20 = 2: 1 and 1.
  int64_t lo = 0;
  const std::vector<float> want =
      reference::Conv1D(x, 1, 4, 20, w, 5, {}, Window1D{4, 3, 1, 1, 1}, 1, &lo);
  ExpectRunMatches(m, x, {1, 4, 20}, want, {1, 5, lo});
}

TEST(ConvTranspose1DTest, MatchesDirectReference) {
  std::mt19937 rng = FreshRng();
  constexpr int64_t kN = 2, kC = 4, kL = 11, kOcg = 3, kK = 3, kGroups = 2;
  const std::vector<float> x = Random(kN * kC * kL, rng);
  const std::vector<float> w = Random(kC * kOcg * kK, rng);
  Model m;
  m.Input("x", {kN, kC, kL});
  m.Initializer("w", {kC, kOcg, kK}, w);
  onnx::NodeProto* node = m.Node("ConvTranspose", {"x", "w"});
  Model::Ints(node, "strides", {2});
  Model::Ints(node, "pads", {1, 0});
  Model::Ints(node, "output_padding", {1});
  Model::Int(node, "group", kGroups);
  int64_t lo = 0;
  const std::vector<float> want =
      reference::ConvTranspose1D(x, kN, kC, kL, w, kOcg, Window1D{kK, 2, 1, 1, 0}, 1, kGroups, &lo);
  ExpectRunMatches(m, x, {kN, kC, kL}, want, {kN, kOcg * kGroups, lo});
}

class Pool1DTest : public ::testing::TestWithParam<bool> {};

TEST_P(Pool1DTest, MatchesDirectReference) {
  const bool max = GetParam();
  std::mt19937 rng = FreshRng();
  constexpr int64_t kN = 2, kC = 5, kL = 29;
  const std::vector<float> x = Random(kN * kC * kL, rng);
  Model m;
  m.Input("x", {kN, kC, kL});
  onnx::NodeProto* node = m.Node(max ? "MaxPool" : "AveragePool", {"x"});
  Model::Ints(node, "kernel_shape", {4});
  Model::Ints(node, "strides", {2});
  Model::Ints(node, "pads", {1, 2});
  int64_t lo = 0;
  const std::vector<float> want =
      reference::Pool1D(x, kN, kC, kL, Window1D{4, 2, 1, 1, 2}, max, false, &lo);
  ExpectRunMatches(m, x, {kN, kC, kL}, want, {kN, kC, lo});
}

INSTANTIATE_TEST_SUITE_P(Kinds, Pool1DTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Max" : "Average"; });

// A 3-D pool computed directly: kernel k, strides st, dilations dl and
// pads (begins, then ends) per axis D, H, W; `out` receives the output dims.
std::vector<float> Pool3D(const std::vector<float>& x, const std::vector<int64_t>& shape,
                          const int64_t k[3], const int64_t st[3], const int64_t dl[3],
                          const int64_t pads[6], bool max, bool include_pad,
                          std::vector<int64_t>* out) {
  int64_t o[3];
  for (int a = 0; a < 3; ++a) {
    o[a] = (shape[2 + a] + pads[a] + pads[3 + a] - ((k[a] - 1) * dl[a] + 1)) / st[a] + 1;
  }
  *out = {shape[0], shape[1], o[0], o[1], o[2]};
  std::vector<float> y;
  for (int64_t nc = 0; nc < shape[0] * shape[1]; ++nc) {
    for (int64_t od = 0; od < o[0]; ++od) {
      for (int64_t oh = 0; oh < o[1]; ++oh) {
        for (int64_t ow = 0; ow < o[2]; ++ow) {
          double acc = max ? -INFINITY : 0.0;
          int64_t count = 0;
          for (int64_t a = 0; a < k[0]; ++a) {
            for (int64_t b = 0; b < k[1]; ++b) {
              for (int64_t c = 0; c < k[2]; ++c) {
                const int64_t d = od * st[0] - pads[0] + a * dl[0];
                const int64_t h = oh * st[1] - pads[1] + b * dl[1];
                const int64_t w = ow * st[2] - pads[2] + c * dl[2];
                if (d < 0 || d >= shape[2] || h < 0 || h >= shape[3] || w < 0 || w >= shape[4]) {
                  continue;
                }
                const double v = x[((nc * shape[2] + d) * shape[3] + h) * shape[4] + w];
                acc = max ? std::max(acc, v) : acc + v;
                ++count;
              }
            }
          }
          if (!max) acc /= static_cast<double>(include_pad ? k[0] * k[1] * k[2] : count);
          y.push_back(static_cast<float>(acc));
        }
      }
    }
  }
  return y;
}

class Pool3DTest : public ::testing::TestWithParam<std::tuple<bool, bool>> {};

TEST_P(Pool3DTest, MatchesDirectReference) {
  const auto [max, include_pad] = GetParam();
  std::mt19937 rng = FreshRng();
  const std::vector<int64_t> shape = {2, 3, 5, 6, 7};
  const std::vector<float> x = Random(2 * 3 * 5 * 6 * 7, rng);
  const int64_t k[3] = {2, 3, 2}, st[3] = {2, 1, 2}, dl[3] = {1, 2, 1};
  const int64_t pads[6] = {1, 1, 0, 0, 1, 1};
  Model m;
  m.Input("x", shape);
  onnx::NodeProto* node = m.Node(max ? "MaxPool" : "AveragePool", {"x"});
  Model::Ints(node, "kernel_shape", {k[0], k[1], k[2]});
  Model::Ints(node, "strides", {st[0], st[1], st[2]});
  Model::Ints(node, "dilations", {dl[0], dl[1], dl[2]});
  Model::Ints(node, "pads", {pads[0], pads[1], pads[2], pads[3], pads[4], pads[5]});
  if (!max) Model::Int(node, "count_include_pad", include_pad ? 1 : 0);
  std::vector<int64_t> y_shape;
  const std::vector<float> want = Pool3D(x, shape, k, st, dl, pads, max, include_pad, &y_shape);
  ExpectRunMatches(m, x, shape, want, y_shape);
}

INSTANTIATE_TEST_SUITE_P(Kinds, Pool3DTest,
                         ::testing::Values(std::make_tuple(true, false),
                                           std::make_tuple(false, false),
                                           std::make_tuple(false, true)),
                         [](const auto& info) {
                           if (std::get<0>(info.param)) return std::string("Max");
                           return std::string(std::get<1>(info.param) ? "AverageIncludePad"
                                                                      : "Average");
                         });

// 3-D Conv, imported as one 2-D conv over the depth taps stacked as
// channels, against a direct loop: groups, strides, dilations and pads on
// every axis, with and without bias.
struct Conv3DCase {
  const char* name;
  int64_t groups;
  bool bias;
};

class Conv3DTest : public ::testing::TestWithParam<Conv3DCase> {};

TEST_P(Conv3DTest, MatchesDirectLoop) {
  const Conv3DCase& p = GetParam();
  std::mt19937 rng = FreshRng();
  const int64_t N = 2, C = 4, D = 5, H = 6, W = 5, OC = 8;
  const int64_t k[3] = {3, 2, 3}, st[3] = {2, 1, 2}, dl[3] = {1, 2, 1};
  const int64_t pads[6] = {1, 0, 1, 1, 1, 0};
  const int64_t cg = C / p.groups, ocg = OC / p.groups;
  const std::vector<float> x = Random(N * C * D * H * W, rng);
  const std::vector<float> w = Random(OC * cg * k[0] * k[1] * k[2], rng);
  const std::vector<float> bias = Random(OC, rng);
  Model m;
  m.Input("x", {N, C, D, H, W});
  m.Initializer("w", {OC, cg, k[0], k[1], k[2]}, w);
  std::vector<std::string> inputs = {"x", "w"};
  if (p.bias) {
    m.Initializer("b", {OC}, bias);
    inputs.push_back("b");
  }
  onnx::NodeProto* node = m.Node("Conv", inputs);
  Model::Ints(node, "strides", {st[0], st[1], st[2]});
  Model::Ints(node, "dilations", {dl[0], dl[1], dl[2]});
  Model::Ints(node, "pads", {pads[0], pads[1], pads[2], pads[3], pads[4], pads[5]});
  Model::Int(node, "group", p.groups);
  int64_t o[3];
  const int64_t in[3] = {D, H, W};
  for (int a = 0; a < 3; ++a) {
    o[a] = (in[a] + pads[a] + pads[3 + a] - ((k[a] - 1) * dl[a] + 1)) / st[a] + 1;
  }
  std::vector<float> want;
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t oc = 0; oc < OC; ++oc) {
      const int64_t g = oc / ocg;
      for (int64_t od = 0; od < o[0]; ++od) {
        for (int64_t oh = 0; oh < o[1]; ++oh) {
          for (int64_t ow = 0; ow < o[2]; ++ow) {
            double acc = p.bias ? bias[oc] : 0.0;
            for (int64_t c = 0; c < cg; ++c) {
              for (int64_t a = 0; a < k[0]; ++a) {
                for (int64_t b = 0; b < k[1]; ++b) {
                  for (int64_t e = 0; e < k[2]; ++e) {
                    const int64_t d = od * st[0] - pads[0] + a * dl[0];
                    const int64_t h = oh * st[1] - pads[1] + b * dl[1];
                    const int64_t ww = ow * st[2] - pads[2] + e * dl[2];
                    if (d < 0 || d >= D || h < 0 || h >= H || ww < 0 || ww >= W) continue;
                    acc += double(x[(((n * C + g * cg + c) * D + d) * H + h) * W + ww]) *
                           w[(((oc * cg + c) * k[0] + a) * k[1] + b) * k[2] + e];
                  }
                }
              }
            }
            want.push_back(static_cast<float>(acc));
          }
        }
      }
    }
  }
  ExpectRunMatches(m, x, {N, C, D, H, W}, want, {N, OC, o[0], o[1], o[2]});
}

INSTANTIATE_TEST_SUITE_P(Cases, Conv3DTest,
                         ::testing::Values(Conv3DCase{"dense_bias", 1, true},
                                           Conv3DCase{"grouped", 2, false},
                                           Conv3DCase{"depthwise", 4, true}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace recq
