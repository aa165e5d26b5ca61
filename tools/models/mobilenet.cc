#include "tools/models/mobilenet.h"

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace recq::models {

namespace {

class Builder {
 public:
  explicit Builder(uint64_t seed) : rng_(seed) {}

  GraphBuilder& graph() { return b_; }

  std::vector<float> Normal(size_t n, float stddev) {
    std::normal_distribution<float> dist(0.0f, stddev);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng_);
    return v;
  }
  std::vector<float> Uniform(size_t n, float lo, float hi) {
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng_);
    return v;
  }

  // Conv (no bias) + BatchNorm, then `act`: 0 none, 1 ReLU, 2 ReLU6.
  TensorRef ConvBn(const std::string& name, TensorRef x, int64_t in_c, int64_t out_c, int64_t k,
                   int64_t stride, int64_t groups, int act) {
    const int64_t fan_in = in_c / groups * k * k;
    TensorRef w = b_.Constant(name + ".weight", {out_c, in_c / groups, k, k},
                              Normal(out_c * fan_in, std::sqrt(2.0f / fan_in)));
    Conv2DAttrs attrs;
    attrs.strides = {stride, stride};
    int64_t pad = k / 2;
    attrs.pads = {pad, pad, pad, pad};
    attrs.groups = groups;
    TensorRef y = b_.AddNode(OpType::kConv2D, {x, w, TensorRef{}}, attrs, name);
    const size_t c = out_c;
    TensorRef scale = b_.Constant(name + ".bn.scale", {out_c}, Uniform(c, 0.5f, 1.5f));
    TensorRef bias = b_.Constant(name + ".bn.bias", {out_c}, Uniform(c, -0.2f, 0.2f));
    TensorRef mean = b_.Constant(name + ".bn.mean", {out_c}, Uniform(c, -0.2f, 0.2f));
    TensorRef var = b_.Constant(name + ".bn.var", {out_c}, Uniform(c, 0.5f, 1.5f));
    y = b_.AddNode(OpType::kBatchNorm, {y, scale, bias, mean, var}, BatchNormAttrs{1e-5f},
                   name + ".bn");
    if (act == 1) y = b_.AddNode(OpType::kRelu, {y}, ActivationAttrs{}, name + ".relu");
    if (act == 2) y = b_.AddNode(OpType::kClip, {y}, ActivationAttrs{0.0f, 6.0f}, name + ".relu6");
    return y;
  }

  TensorRef Classifier(TensorRef x, int64_t channels, int64_t classes) {
    x = b_.AddNode(OpType::kGlobalAveragePool, {x}, {}, "pool");
    x = b_.AddNode(OpType::kFlatten, {x}, FlattenAttrs{1}, "flatten");
    TensorRef w = b_.Constant("fc.weight", {classes, channels},
                              Normal(classes * channels, 2.0f / std::sqrt(float(channels))));
    TensorRef bias = b_.Constant("fc.bias", {classes}, Uniform(classes, -0.1f, 0.1f));
    GemmAttrs attrs;
    attrs.trans_b = true;
    x = b_.AddNode(OpType::kGemm, {x, w, bias}, attrs, "fc");
    return b_.AddNode(OpType::kSoftmax, {x}, SoftmaxAttrs{1, false}, "softmax");
  }

 private:
  GraphBuilder b_;
  std::mt19937_64 rng_;
};

int64_t Channels(int64_t c, float width) {
  int64_t scaled = static_cast<int64_t>(std::lround(c * width / 8.0f)) * 8;
  return std::max<int64_t>(8, scaled);
}

absl::Status CheckOptions(const MobileNetOptions& o) {
  if (o.batch <= 0 || o.resolution < 32 || o.resolution % 32 != 0 || o.num_classes <= 0 ||
      !(o.width > 0.0f)) {
    return absl::InvalidArgumentError(
        absl::StrCat("MobileNet options: batch ", o.batch, ", resolution ", o.resolution,
                     ", classes ", o.num_classes, ", width ", o.width,
                     "; expected positive values and a resolution that is a multiple of 32"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Graph> BuildMobileNetV1(const MobileNetOptions& o) {
  if (absl::Status s = CheckOptions(o); !s.ok()) return s;
  Builder m(o.seed);
  TensorRef x = m.graph().Input("input", {o.batch, 3, o.resolution, o.resolution});
  int64_t c = Channels(32, o.width);
  x = m.ConvBn("conv0", x, 3, c, 3, 2, 1, 1);
  const int64_t blocks[][2] = {{64, 1},  {128, 2},  {128, 1}, {256, 2}, {256, 1},
                               {512, 2}, {512, 1},  {512, 1}, {512, 1}, {512, 1},
                               {512, 1}, {1024, 2}, {1024, 1}};
  int i = 1;
  for (const auto& block : blocks) {
    int64_t out = Channels(block[0], o.width);
    x = m.ConvBn(absl::StrCat("block", i, ".dw"), x, c, c, 3, block[1], c, 1);
    x = m.ConvBn(absl::StrCat("block", i, ".pw"), x, c, out, 1, 1, 1, 1);
    c = out;
    ++i;
  }
  m.graph().Output(m.Classifier(x, c, o.num_classes), "prob");
  return std::move(m.graph()).Build();
}

absl::StatusOr<Graph> BuildMobileNetV2(const MobileNetOptions& o) {
  if (absl::Status s = CheckOptions(o); !s.ok()) return s;
  Builder m(o.seed);
  TensorRef x = m.graph().Input("input", {o.batch, 3, o.resolution, o.resolution});
  int64_t c = Channels(32, o.width);
  x = m.ConvBn("conv0", x, 3, c, 3, 2, 1, 2);
  // expansion t, output channels, repeats n, first stride s
  const int64_t settings[][4] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                                 {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  int block = 1;
  for (const auto& s : settings) {
    int64_t out = Channels(s[1], o.width);
    for (int64_t r = 0; r < s[2]; ++r, ++block) {
      int64_t stride = r == 0 ? s[3] : 1;
      std::string name = absl::StrCat("block", block);
      TensorRef y = x;
      int64_t hidden = c * s[0];
      if (s[0] != 1) y = m.ConvBn(name + ".expand", y, c, hidden, 1, 1, 1, 2);
      y = m.ConvBn(name + ".dw", y, hidden, hidden, 3, stride, hidden, 2);
      y = m.ConvBn(name + ".project", y, hidden, out, 1, 1, 1, 0);
      if (stride == 1 && c == out) y = m.graph().AddNode(OpType::kAdd, {x, y}, {}, name + ".add");
      x = y;
      c = out;
    }
  }
  int64_t last = o.width > 1.0f ? Channels(1280, o.width) : 1280;
  x = m.ConvBn("conv_last", x, c, last, 1, 1, 1, 2);
  m.graph().Output(m.Classifier(x, last, o.num_classes), "prob");
  return std::move(m.graph()).Build();
}

}  // namespace recq::models
