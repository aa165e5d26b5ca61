// Shape profiles (recq/shape_profile.h) and ShapedEngine (recq/shaped_engine.h)
// on a tiny BERT encoder (tests/models/shapes/tiny_bert.onnx, made by
// make_tiny_bert.py there) whose batch and sequence are symbolic.
#include "recq/shaped_engine.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "onnx/onnx_pb.h"
#include "recq/engine_file.h"
#include "recq/onnx.h"
#include "recq/shape_profile.h"
#include "reference/reference_executor.h"
#include "testing/test_env.h"
#include "tools/shaped_commands.h"

namespace recq {
namespace {

using ::recq::testing::SharedContext;
using ::testing::HasSubstr;

constexpr char kModel[] = RECQ_SHAPES_MODEL_DIR "/tiny_bert.onnx";
constexpr int64_t kHidden = 32;
constexpr int64_t kVocab = 100;

// The device against the CPU reference: fp32 both, different summation
// orders (and, padded, longer softmax rows whose extra terms are exactly 0).
constexpr float kAtol = 1e-4f;
constexpr float kRtol = 1e-4f;

EngineOptions Fast() {
  EngineOptions o;
  o.tuning = EngineOptions::Tuning::kOff;
  return o;
}

uint32_t FreshSeed() {
  const uint32_t seed = std::random_device{}();
  ::testing::Test::RecordProperty("seed", static_cast<int>(seed));
  return seed;
}

const OnnxModel& Model() {
  static const OnnxModel* model = [] {
    absl::StatusOr<OnnxModel> m = OnnxModel::Read(kModel);
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? new OnnxModel(*std::move(m)) : nullptr;
  }();
  return *model;
}

// A request: ids uniform in the vocabulary, a mask of ones with the tail of
// each row but the first masked out at random.
struct Request {
  int64_t batch = 1;
  int64_t length = 1;
  std::vector<int64_t> ids;
  std::vector<int64_t> mask;
};

Request MakeRequest(int64_t batch, int64_t length, std::mt19937& rng) {
  Request r{batch, length, {}, {}};
  std::uniform_int_distribution<int64_t> token(0, kVocab - 1);
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t valid = b == 0 ? length : std::uniform_int_distribution<int64_t>(1, length)(rng);
    for (int64_t s = 0; s < length; ++s) {
      r.ids.push_back(token(rng));
      r.mask.push_back(s < valid ? 1 : 0);
    }
  }
  return r;
}

InputShapes ShapesOf(const Request& r) {
  return {{"input_ids", {r.batch, r.length}}, {"attention_mask", {r.batch, r.length}}};
}

// Reference runs the model imported at the request's exact shape on the CPU.
std::vector<float> Reference(const Request& r) {
  OnnxOptions load;
  load.input_shapes = ShapesOf(r);
  absl::StatusOr<Graph> graph = LoadOnnx(kModel, load);
  EXPECT_TRUE(graph.ok()) << graph.status();
  if (!graph.ok()) return {};
  absl::flat_hash_map<std::string, reference::HostTensor> in;
  for (const auto& [name, values] : {std::pair{"input_ids", &r.ids}, {"attention_mask", &r.mask}}) {
    reference::HostTensor t;
    t.shape = {r.batch, r.length};
    t.dtype = DataType::kInt64;
    t.data.assign(values->begin(), values->end());
    in[name] = std::move(t);
  }
  auto out = reference::RunReference(*graph, in);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? out->at("last_hidden_state").data : std::vector<float>{};
}

Tensor Int64Tensor(const std::vector<int64_t>& shape, const std::vector<int64_t>& values) {
  absl::StatusOr<Tensor> t = Tensor::Allocate(SharedContext(), {shape, DataType::kInt64});
  EXPECT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->Upload(absl::MakeConstSpan(values)).ok());
  return *std::move(t);
}

// RunShaped runs `r` and returns the output in the bucket's layout, and the
// bucket's output shape in `*bucket_shape`.
std::vector<float> RunShaped(ShapedEngine& engine, const Request& r,
                             std::vector<int64_t>* bucket_shape, ShapedRun* info = nullptr) {
  absl::StatusOr<Engine> bucket = engine.EngineFor(ShapesOf(r));
  EXPECT_TRUE(bucket.ok()) << bucket.status();
  if (!bucket.ok()) return {};
  const TensorDesc out_desc = bucket->outputs()[0].desc;
  *bucket_shape = out_desc.shape;
  Tensor ids = Int64Tensor({r.batch, r.length}, r.ids);
  Tensor mask = Int64Tensor({r.batch, r.length}, r.mask);
  Tensor out = testing::NewTensor(out_desc);  // NaN-poisoned
  Bindings b;
  b.Set("input_ids", ids);
  b.Set("attention_mask", mask);
  b.Set("last_hidden_state", out);
  absl::StatusOr<ShapedRun> run = engine.Run(b, ShapesOf(r));
  EXPECT_TRUE(run.ok()) << run.status();
  if (info != nullptr && run.ok()) *info = *run;
  return testing::Download(out);
}

// ExpectUnpaddedMatch compares the unpadded positions of a bucket-layout
// output with the exact-shape reference.
void ExpectUnpaddedMatch(const Request& r, const std::vector<float>& got,
                         const std::vector<int64_t>& bucket_shape) {
  const std::vector<float> want = Reference(r);
  ASSERT_EQ(want.size(), static_cast<size_t>(r.batch * r.length * kHidden));
  ASSERT_EQ(bucket_shape.size(), 3u);
  std::vector<float> unpadded;
  for (int64_t b = 0; b < r.batch; ++b) {
    for (int64_t s = 0; s < r.length; ++s) {
      const float* row = got.data() + (b * bucket_shape[1] + s) * kHidden;
      unpadded.insert(unpadded.end(), row, row + kHidden);
    }
  }
  const reference::CompareResult c = reference::Compare(unpadded, want, kAtol, kRtol);
  EXPECT_TRUE(c.ok()) << "batch " << r.batch << " length " << r.length << " bucket "
                      << ShapeToString(bucket_shape) << ": " << c.ToString();
}

TEST(ShapeProfileTest, ParsesFixedRangesRulesAndLists) {
  absl::StatusOr<ShapeProfiles> p = ParseShapeProfiles(
      "a:1x128,b:1x1..512/pow2,c:2..10x3,d:1x{16,64,512},e:1..500/pow2,f:1..512/mul64,g:3..9");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE((*p)["a"][0].fixed() && (*p)["a"][1].fixed());
  EXPECT_EQ((*p)["a"][1].min, 128);
  EXPECT_EQ((*p)["b"][1].Buckets(), (std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}));
  EXPECT_EQ((*p)["b"][1].BucketFor(37), 64);
  EXPECT_EQ((*p)["b"][1].BucketFor(513), -1);
  EXPECT_EQ((*p)["c"][0].rule, DimProfile::Rule::kExact);
  EXPECT_EQ((*p)["c"][0].BucketFor(7), 7);
  EXPECT_EQ((*p)["c"][0].BucketFor(1), -1);
  EXPECT_EQ((*p)["d"][1].Buckets(), (std::vector<int64_t>{16, 64, 512}));
  EXPECT_EQ((*p)["d"][1].BucketFor(17), 64);
  EXPECT_EQ((*p)["d"][1].min, 1);
  EXPECT_EQ((*p)["e"][0].Buckets().back(), 500);
  EXPECT_EQ((*p)["e"][0].BucketFor(300), 500);
  EXPECT_EQ((*p)["f"][0].Buckets(), (std::vector<int64_t>{64, 128, 192, 256, 320, 384, 448, 512}));
  EXPECT_EQ((*p)["f"][0].BucketFor(1), 64);
  EXPECT_EQ(InputProfileToString((*p)["b"]), "1x1..512/pow2");
  EXPECT_EQ(InputProfileToString((*p)["d"]), "1x{16,64,512}");
  EXPECT_FALSE(IsFixed(*p));
  absl::StatusOr<ShapeProfiles> fixed = ParseShapeProfiles("x:4x3x224x224");
  ASSERT_TRUE(fixed.ok());
  EXPECT_TRUE(IsFixed(*fixed));
}

TEST(ShapeProfileTest, MalformedStringsNameTheBadPart) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"1x128", "no input name"},
      {"ids:1x0", "dimension 1 '0'"},
      {"ids:1xabc", "'abc'"},
      {"ids:1x8..4", "minimum 8 is above maximum 4"},
      {"ids:1x1..", "maximum ''"},
      {"ids:1x..8", "minimum ''"},
      {"ids:1x1..8/pow3", "unknown bucket rule '/pow3'"},
      {"ids:1x1..8/mul0", "unknown bucket rule"},
      {"ids:1x1..8/", "unknown bucket rule"},
      {"ids:1x{16,8}", "increasing order"},
      {"ids:1x{16,a}", "bucket 'a'"},
      {"ids:1x{16,32", "'{' without '}'"},
      {"ids:1x4,ids:1x5", "given twice"},
  };
  for (const auto& [text, want] : cases) {
    absl::StatusOr<ShapeProfiles> p = ParseShapeProfiles(text);
    ASSERT_FALSE(p.ok()) << text;
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(p.status().message(), HasSubstr(want)) << text;
    EXPECT_THAT(p.status().message(), HasSubstr("expected NAME:DIMxDIM")) << text;
  }
  EXPECT_FALSE(ParsePadValues("ids").ok());
  EXPECT_FALSE(ParsePadValues("ids:x").ok());
  absl::StatusOr<std::map<std::string, double>> pads = ParsePadValues("ids:0,mask:-1.5");
  ASSERT_TRUE(pads.ok());
  EXPECT_EQ(pads->at("mask"), -1.5);
}

TEST(ShapeProfileTest, LoadOnnxTakesFixedProfilesAndRejectsRanges) {
  OnnxOptions load;
  load.profiles = *ParseShapeProfiles("input_ids:1x9,attention_mask:1x9");
  absl::StatusOr<Graph> g = LoadOnnx(kModel, load);
  ASSERT_TRUE(g.ok()) << g.status();
  load.profiles = *ParseShapeProfiles("input_ids:1x1..9,attention_mask:1x1..9");
  g = LoadOnnx(kModel, load);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(g.status().message(), HasSubstr("input 'attention_mask' has the range profile"));
}

TEST(OnnxModelTest, ImportsShareInitializersAndConstantNodes) {
  OnnxOptions four, nine;
  four.input_shapes = {{"input_ids", {1, 4}}, {"attention_mask", {1, 4}}};
  nine.input_shapes = {{"input_ids", {1, 9}}, {"attention_mask", {1, 9}}};
  absl::StatusOr<Graph> a = Model().Import(four);
  absl::StatusOr<Graph> b = Model().Import(nine);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  std::ifstream file(kModel, std::ios::binary);
  onnx::ModelProto proto;
  ASSERT_TRUE(proto.ParseFromIstream(&file));
  std::set<std::string> fixed_values;
  for (const onnx::TensorProto& t : proto.graph().initializer()) fixed_values.insert(t.name());
  for (const onnx::NodeProto& n : proto.graph().node()) {
    if (n.op_type() == "Constant") fixed_values.insert(n.output(0));
  }
  size_t compared = 0;
  for (const Value& va : a->values()) {
    if (va.kind != Value::Kind::kConstant || fixed_values.count(va.name) == 0) continue;
    for (const Value& vb : b->values()) {
      if (vb.kind != Value::Kind::kConstant || vb.name != va.name) continue;
      EXPECT_EQ(vb.data, va.data) << va.name;
      ++compared;
    }
  }
  EXPECT_GE(compared, proto.graph().initializer_size() - 2);
}

// One engine over lengths 1..64 in power-of-two buckets, padded: random
// lengths against the CPU reference at each exact length; the weights are
// uploaded once whatever the number of buckets.
TEST(ShapedEngineTest, PaddedBucketsMatchReferenceAndShareWeights) {
  OnnxOptions load;
  load.profiles = *ParseShapeProfiles("input_ids:1x1..64/pow2,attention_mask:1x1..64/pow2");
  ShapedEngineOptions options;
  options.engine = Fast();
  options.pad_values = {{"input_ids", 0}, {"attention_mask", 0}};
  RECQ_ASSERT_OK_AND_ASSIGN(ShapedEngine engine,
                            ShapedEngine::Create(SharedContext(), Model(), load, options));
  std::mt19937 rng(FreshSeed());
  // The ends of the range, a length in bucket 2 or 4 (three buckets at
  // least), and two anywhere.
  std::vector<int64_t> lengths = {64, 1, std::uniform_int_distribution<int64_t>(2, 4)(rng)};
  for (int i = 0; i < 2; ++i) lengths.push_back(std::uniform_int_distribution<int64_t>(2, 63)(rng));
  for (int64_t length : lengths) {
    const Request r = MakeRequest(1, length, rng);
    std::vector<int64_t> bucket_shape;
    ShapedRun info;
    const std::vector<float> got = RunShaped(engine, r, &bucket_shape, &info);
    int64_t pow2 = 1;
    while (pow2 < length) pow2 *= 2;
    EXPECT_EQ(info.bucket.at("input_ids")[1], pow2);
    EXPECT_EQ(info.padded, info.bucket.at("input_ids")[1] != length);
    ExpectUnpaddedMatch(r, got, bucket_shape);
  }
  // The model's weights (initializers, Constant nodes) are uploaded by the
  // first bucket only; a later bucket uploads just the constants that shape
  // folding made for its size (the position embeddings sliced to it...).
  const ShapedEngineStats stats = engine.stats();
  ASSERT_GE(stats.buckets.size(), 3u);
  size_t uploaded = 0, largest = 0;
  for (size_t i = 0; i < stats.buckets.size(); ++i) {
    const BucketStats& b = stats.buckets[i];
    EXPECT_GT(b.first_result_ms, b.engine.compile_ms);
    uploaded += b.weight_bytes_uploaded;
    largest = std::max(largest, b.engine.weight_bytes);
    if (i > 0) {
      EXPECT_LT(b.weight_bytes_uploaded, b.engine.weight_bytes / 4)
          << "bucket " << i << " of " << stats.buckets.size();
    }
  }
  EXPECT_EQ(uploaded, stats.weight_bytes_uploaded);
  EXPECT_LT(stats.weight_bytes_uploaded, largest * 3 / 2)
      << stats.buckets.size() << " buckets, the largest binds " << largest << " bytes";
  EXPECT_GT(stats.weight_reuses, 0u);
}

// Batch and sequence both padded: the rectangle copies of a 2-D pad.
TEST(ShapedEngineTest, PadsBatchAndSequence) {
  OnnxOptions load;
  load.profiles = *ParseShapeProfiles("input_ids:{2,4}x1..16/pow2,attention_mask:{2,4}x1..16/pow2");
  ShapedEngineOptions options;
  options.engine = Fast();
  options.pad_values = {{"input_ids", 0}, {"attention_mask", 0}};
  RECQ_ASSERT_OK_AND_ASSIGN(ShapedEngine engine,
                            ShapedEngine::Create(SharedContext(), Model(), load, options));
  std::mt19937 rng(FreshSeed());
  const Request r = MakeRequest(3, std::uniform_int_distribution<int64_t>(9, 15)(rng), rng);
  std::vector<int64_t> bucket_shape;
  const std::vector<float> got = RunShaped(engine, r, &bucket_shape);
  EXPECT_EQ(bucket_shape, (std::vector<int64_t>{4, 16, kHidden}));
  ExpectUnpaddedMatch(r, got, bucket_shape);
}

// Without pad values each length is its own bucket, compiled once.
TEST(ShapedEngineTest, UnpaddedProfileCompilesExactShapesOnce) {
  OnnxOptions load;
  load.profiles = *ParseShapeProfiles("input_ids:1x1..64/pow2,attention_mask:1x1..64/pow2");
  ShapedEngineOptions options;
  options.engine = Fast();
  RECQ_ASSERT_OK_AND_ASSIGN(ShapedEngine engine,
                            ShapedEngine::Create(SharedContext(), Model(), load, options));
  std::mt19937 rng(FreshSeed());
  const int64_t length = std::uniform_int_distribution<int64_t>(33, 63)(rng);
  for (int i = 0; i < 2; ++i) {
    const Request r = MakeRequest(1, length, rng);
    std::vector<int64_t> bucket_shape;
    ShapedRun info;
    const std::vector<float> got = RunShaped(engine, r, &bucket_shape, &info);
    EXPECT_EQ(bucket_shape[1], length);
    EXPECT_FALSE(info.padded);
    ExpectUnpaddedMatch(r, got, bucket_shape);
  }
  EXPECT_EQ(engine.stats().buckets.size(), 1u);
  EXPECT_EQ(engine.stats().buckets[0].runs, 2u);
}

TEST(ShapedEngineTest, ShapesOutsideTheProfileAreInvalidArgument) {
  OnnxOptions load;
  load.profiles = *ParseShapeProfiles("input_ids:1x1..8/pow2,attention_mask:1x1..8/pow2");
  ShapedEngineOptions options;
  options.engine = Fast();
  options.pad_values = {{"input_ids", 0}, {"attention_mask", 0}};
  RECQ_ASSERT_OK_AND_ASSIGN(ShapedEngine engine,
                            ShapedEngine::Create(SharedContext(), Model(), load, options));
  const auto expect_invalid = [&](const InputShapes& shapes, const std::string& want) {
    absl::StatusOr<InputShapes> b = engine.BucketFor(shapes);
    ASSERT_FALSE(b.ok()) << want;
    EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(b.status().message(), HasSubstr(want));
    Bindings none;
    EXPECT_EQ(engine.Run(none, shapes).status().code(), absl::StatusCode::kInvalidArgument);
  };
  expect_invalid({{"input_ids", {1, 9}}, {"attention_mask", {1, 9}}},
                 "input 'attention_mask' dimension 1 is 9, outside the profile's range 1..8");
  expect_invalid({{"input_ids", {2, 4}}, {"attention_mask", {2, 4}}},
                 "dimension 0 is 2; the profile fixes it at 1");
  expect_invalid({{"input_ids", {1, 4}}, {"attention_mask", {1, 5}}},
                 "both are dimension 'sequence' of the model and must agree");
  expect_invalid({{"input_ids", {4}}, {"attention_mask", {1, 4}}}, "has rank 2");
  expect_invalid({{"input_ids", {1, 4}}}, "no shape given for input 'attention_mask'");
  expect_invalid({{"input_ids", {1, 4}}, {"attention_mask", {1, 4}}, {"x", {1}}},
                 "a shape is given for input 'x'");
  // A padded input bound with too few bytes.
  Tensor ids = Int64Tensor({1, 2}, {1, 2});
  Tensor mask = Int64Tensor({1, 2}, {1, 1});
  absl::StatusOr<Tensor> out =
      Tensor::Allocate(SharedContext(), {{1, 4, kHidden}, DataType::kFloat32});
  ASSERT_TRUE(out.ok());
  Bindings b;
  b.Set("input_ids", ids);
  b.Set("attention_mask", mask);
  b.Set("last_hidden_state", *out);
  absl::StatusOr<ShapedRun> bad =
      engine.Run(b, {{"input_ids", {1, 3}}, {"attention_mask", {1, 3}}});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("binding 'attention_mask' has 16 bytes"));
  // Still usable.
  absl::StatusOr<ShapedRun> good =
      engine.Run(b, {{"input_ids", {1, 2}}, {"attention_mask", {1, 2}}});
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_EQ(good->bucket.at("input_ids"), (std::vector<int64_t>{1, 2}));
}

TEST(ShapedEngineTest, BadProfilesAreRejectedAtCreate) {
  const auto create_error = [](const std::string& profile, std::map<std::string, double> pads) {
    OnnxOptions load;
    load.profiles = *ParseShapeProfiles(profile);
    ShapedEngineOptions options;
    options.engine = Fast();
    options.pad_values = std::move(pads);
    absl::StatusOr<ShapedEngine> e = ShapedEngine::Create(SharedContext(), Model(), load, options);
    EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument) << profile;
    return std::string(e.status().message());
  };
  EXPECT_THAT(create_error("input_ids:1x1..8/pow2,attention_mask:1x1..8/pow2", {{"input_ids", 0}}),
              HasSubstr("give every input with that dimension a pad value, or none"));
  EXPECT_THAT(create_error("input_ids:1x1..8/pow2,attention_mask:1x1..16/pow2", {}),
              HasSubstr("need one profile"));
  EXPECT_THAT(create_error("token_type_ids:1x1..8", {}), HasSubstr("the model's inputs are"));
  EXPECT_THAT(create_error("input_ids:1x1x1..8", {}), HasSubstr("has rank 2 in the model"));
}

// Runs of one padded bucket from two threads on two queues (sharing its
// recording and staging buffers) give what sequential runs gave.
TEST(ShapedEngineTest, ConcurrentPaddedRunsOnTwoQueues) {
  OnnxOptions load;
  load.profiles = *ParseShapeProfiles("input_ids:1x1..16/pow2,attention_mask:1x1..16/pow2");
  ShapedEngineOptions options;
  options.engine = Fast();
  options.pad_values = {{"input_ids", 0}, {"attention_mask", 0}};
  RECQ_ASSERT_OK_AND_ASSIGN(ShapedEngine engine,
                            ShapedEngine::Create(SharedContext(), Model(), load, options));
  std::mt19937 rng(FreshSeed());
  struct Job {
    Request request;
    Tensor ids, mask, out;
    std::vector<float> expected;
    Bindings bindings;
  };
  std::vector<Job> jobs;
  for (int i = 0; i < 4; ++i) {
    Job job;
    job.request = MakeRequest(1, std::uniform_int_distribution<int64_t>(9, 15)(rng), rng);
    std::vector<int64_t> bucket_shape;
    job.expected = RunShaped(engine, job.request, &bucket_shape);
    job.ids = Int64Tensor({1, job.request.length}, job.request.ids);
    job.mask = Int64Tensor({1, job.request.length}, job.request.mask);
    job.out = testing::NewTensor({bucket_shape, DataType::kFloat32});
    job.bindings.Set("input_ids", job.ids);
    job.bindings.Set("attention_mask", job.mask);
    job.bindings.Set("last_hidden_state", job.out);
    jobs.push_back(std::move(job));
  }
  const Context& ctx = SharedContext();
  std::vector<cl_command_queue> queues;
  for (int q = 0; q < 2; ++q) {
    cl_int err = CL_SUCCESS;
    queues.push_back(
        clCreateCommandQueueWithProperties(ctx.context(), ctx.device(), nullptr, &err));
    ASSERT_EQ(err, CL_SUCCESS);
  }
  std::vector<absl::Status> status(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 3 && status[t].ok(); ++rep) {
        for (int j = t; j < 4; j += 2) {
          absl::StatusOr<ShapedRun> run =
              engine.Enqueue(queues[t], jobs[j].bindings, ShapesOf(jobs[j].request));
          if (!run.ok()) status[t] = run.status();
        }
      }
      clFinish(queues[t]);
    });
  }
  for (std::thread& th : threads) th.join();
  for (cl_command_queue q : queues) clReleaseCommandQueue(q);
  for (const absl::Status& st : status) RECQ_ASSERT_OK(st);
  for (const Job& job : jobs) {
    const std::vector<float> got = testing::Download(job.out);
    ASSERT_EQ(got.size(), job.expected.size());
    EXPECT_EQ(std::memcmp(got.data(), job.expected.data(), got.size() * sizeof(float)), 0)
        << "length " << job.request.length;
  }
}

// An engine file holds every bucket; loading restores them as stored (no
// compile, no tuning), weights uploaded once, with the same outputs.
TEST(ShapedEngineTest, EngineFileHoldsEveryBucket) {
  OnnxOptions load;
  load.profiles = *ParseShapeProfiles("input_ids:1x{4,16},attention_mask:1x{4,16}");
  ShapedEngineOptions options;
  options.engine = Fast();
  options.pad_values = {{"input_ids", 0}, {"attention_mask", 0}};
  RECQ_ASSERT_OK_AND_ASSIGN(ShapedEngine built,
                            ShapedEngine::Create(SharedContext(), Model(), load, options));
  RECQ_ASSERT_OK_AND_ASSIGN(std::string bytes, built.Serialize());
  ASSERT_EQ(built.stats().buckets.size(), 2u);
  RECQ_ASSERT_OK_AND_ASSIGN(ShapedEngine loaded,
                            ShapedEngine::LoadFromBytes(SharedContext(), bytes));
  const ShapedEngineStats stats = loaded.stats();
  ASSERT_EQ(stats.buckets.size(), 2u);
  size_t bound = 0;
  for (const BucketStats& b : stats.buckets) {
    EXPECT_EQ(b.engine.origin, EngineOrigin::kFileAsStored) << b.engine.origin_reason;
    EXPECT_EQ(b.engine.tuning_measured, 0u);
    bound += b.engine.weight_bytes;
  }
  // The second bucket's weights are the first's (equal bytes), but for
  // constants that shape folding made for its size.
  EXPECT_LT(stats.weight_bytes_uploaded, bound * 3 / 4);
  std::mt19937 rng(FreshSeed());
  const Request r = MakeRequest(1, std::uniform_int_distribution<int64_t>(5, 16)(rng), rng);
  std::vector<int64_t> shape_built, shape_loaded;
  ShapedRun info;
  const std::vector<float> want = RunShaped(built, r, &shape_built);
  const std::vector<float> got = RunShaped(loaded, r, &shape_loaded, &info);
  EXPECT_FALSE(info.compiled);
  ASSERT_EQ(shape_loaded, shape_built);
  ASSERT_EQ(got.size(), want.size());
  EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0);
  ExpectUnpaddedMatch(r, got, shape_loaded);
  EXPECT_EQ(loaded.stats().buckets.size(), 2u);
  // An engine file reader that knows no profiles loads the first bucket.
  RECQ_ASSERT_OK_AND_ASSIGN(Engine first, LoadEngineFromBytes(SharedContext(), bytes));
  EXPECT_EQ(first.inputs()[0].desc.shape, (std::vector<int64_t>{1, 4}));
  // A plain engine file has no profile.
  RECQ_ASSERT_OK_AND_ASSIGN(std::string plain, first.Serialize());
  absl::StatusOr<ShapedEngine> not_shaped = ShapedEngine::LoadFromBytes(SharedContext(), plain);
  EXPECT_EQ(not_shaped.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(not_shaped.status().message(), HasSubstr("no shape profile"));
}

// recq run and bench over a profile (tools/shaped_commands.cc).
TEST(ShapedCommandsTest, BenchReportsEveryBucketAndRunRejectsBadShapes) {
  const std::string dir = ::testing::TempDir();
  tools::ShapedBenchOptions bench;
  bench.model_path = kModel;
  bench.shapes = "input_ids:1x{2,4},attention_mask:1x{2,4}";
  bench.pad = "input_ids:0,attention_mask:0";
  bench.warmup_s = 0;
  bench.iterations = 3;
  bench.json_path = dir + "/shaped_bench.json";
  RECQ_ASSERT_OK(tools::ShapedBenchCommand(bench));
  std::ifstream json_file(bench.json_path);
  const std::string json((std::istreambuf_iterator<char>(json_file)), {});
  EXPECT_THAT(json, HasSubstr("\"shapes\":\"attention_mask:1x2,input_ids:1x2\""));
  EXPECT_THAT(json, HasSubstr("\"shapes\":\"attention_mask:1x4,input_ids:1x4\""));
  EXPECT_THAT(json, HasSubstr("\"weight_bytes_uploaded\":"));
  EXPECT_THAT(json, HasSubstr("\"first_result_ms\":"));

  bench.shapes = "input_ids:1x{2,4},attention_mask:1x2..";
  absl::Status bad = tools::ShapedBenchCommand(bench);
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.message(), HasSubstr("bad shape 'attention_mask:1x2..'"));

  // A 5-token request against 1..4: the input (attention_mask, sized by its
  // tie to input_ids, is checked first), dimension and range.
  const std::string ids = dir + "/ids5.bin";
  std::ofstream(ids, std::ios::binary)
      .write(reinterpret_cast<const char*>(std::vector<int64_t>(5, 1).data()), 5 * 8);
  tools::ShapedRunOptions run;
  run.model_path = kModel;
  run.shapes = "input_ids:1x1..4/pow2,attention_mask:1x1..4/pow2";
  run.pad = "input_ids:0,attention_mask:0";
  run.inputs = {"input_ids=" + ids};
  absl::Status outside = tools::ShapedRunCommand(run);
  EXPECT_EQ(outside.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(outside.message(),
              HasSubstr("dimension 1 is 5, outside the profile's range 1..4 (1x1..4/pow2)"));
}

// Bucket recordings replay bit-identical on every backend the device has.
TEST(ShapedEngineTest, BucketReplaysBitIdenticalOnEveryBackend) {
  OnnxOptions load;
  load.profiles = *ParseShapeProfiles("input_ids:1x1..64/pow2,attention_mask:1x1..64/pow2");
  ShapedEngineOptions options;
  options.engine = Fast();
  options.pad_values = {{"input_ids", 0}, {"attention_mask", 0}};
  RECQ_ASSERT_OK_AND_ASSIGN(ShapedEngine engine,
                            ShapedEngine::Create(SharedContext(), Model(), load, options));
  std::mt19937 rng(FreshSeed());
  const Request r = MakeRequest(1, 16, rng);
  RECQ_ASSERT_OK_AND_ASSIGN(Engine bucket, engine.EngineFor(ShapesOf(r)));
  Tensor ids = Int64Tensor({1, 16}, r.ids);
  Tensor mask = Int64Tensor({1, 16}, r.mask);
  std::vector<float> replay;
  for (Backend backend : RegisteredBackends()) {
    if (!BackendAvailable(SharedContext(), backend).ok()) continue;
    RECQ_ASSERT_OK_AND_ASSIGN(Recording rec, bucket.Record({backend}));
    Tensor out = testing::NewTensor(bucket.outputs()[0].desc);
    Bindings b;
    b.Set("input_ids", ids);
    b.Set("attention_mask", mask);
    b.Set("last_hidden_state", out);
    RECQ_ASSERT_OK(rec.Run(b));
    const std::vector<float> got = testing::Download(out);
    if (backend == Backend::kReplay) replay = got;
    if (replay.empty()) continue;
    ASSERT_EQ(got.size(), replay.size());
    EXPECT_EQ(std::memcmp(got.data(), replay.data(), got.size() * sizeof(float)), 0)
        << BackendName(backend);
  }
  ASSERT_FALSE(replay.empty());
}

}  // namespace
}  // namespace recq
