// ONNX node conformance: runs ONNX's own node test cases (model.onnx and
// test_data_set_*/{input,output}_*.pb) through LoadOnnx, Engine::Compile,
// Record and Run, and compares with the expected outputs.
//
// ctest runs every case in tests/onnx/expected_pass.txt in a few shards
// (onnx_conformance_shard_N, gtest sharding; tests/onnx/CMakeLists.txt); a
// listed case missing from the data directory fails. With RECQ_ONNX_ALL=1,
// OnnxAllCases.Summary runs every case under the data directory and prints
// "N passed, N failed, N skipped" (skipped: the importer says Unimplemented);
// tests/onnx/update_lists.py turns that output into expected_pass.txt and
// excluded.txt.
// RECQ_ONNX_DATA overrides the data directory. Where the importer needs a
// graph input as a constant, the case is retried with its inputs after the
// first baked in from its data set (BakeConstantInputs).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "engine/onnx/onnx_node.h"
#include "engine/onnx/onnx_tensor.h"
#include "onnx/onnx_pb.h"
#include "recq/onnx.h"
#include "testing/test_env.h"

namespace recq {
namespace {

namespace fs = std::filesystem;

constexpr float kAtol = 1e-7f;
constexpr float kRtol = 1e-3f;

std::string DataDir() {
  const char* env = std::getenv("RECQ_ONNX_DATA");
  return env != nullptr && *env != '\0' ? env : RECQ_ONNX_TESTDATA_DIR;
}

std::vector<std::string> ReadList(const std::string& path) {
  std::vector<std::string> names;
  std::ifstream file(path);
  std::string line;
  while (std::getline(file, line)) {
    absl::string_view s = absl::StripAsciiWhitespace(line);
    if (s.empty() || s[0] == '#') continue;
    names.emplace_back(s);
  }
  return names;
}

absl::StatusOr<std::string> ReadBytes(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat("cannot open ", path.string()));
  std::ostringstream s;
  s << file.rdbuf();
  return s.str();
}

struct CaseResult {
  enum Outcome { kPass, kFail, kSkip } outcome = kPass;
  std::string message;
};

CaseResult Fail(std::string message) { return {CaseResult::kFail, std::move(message)}; }

// RunDataSet runs one test_data_set_* directory.
CaseResult RunDataSet(const Context& context, const Graph& graph, Recording& recording,
                      const fs::path& dir) {
  std::vector<Tensor> keep;
  Bindings bindings;
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    const Value& v = graph.value(graph.inputs()[i]);
    absl::StatusOr<std::string> bytes = ReadBytes(dir / absl::StrCat("input_", i, ".pb"));
    if (!bytes.ok()) return Fail(std::string(bytes.status().message()));
    absl::StatusOr<onnx_import::HostTensorData> t = onnx_import::ParseTensorBytes(*bytes);
    if (!t.ok()) return Fail(absl::StrCat("input_", i, ": ", t.status().message()));
    if (t->dtype != v.desc.dtype || t->dims != v.desc.shape) {
      return Fail(absl::StrCat("input_", i, " is ", onnx_import::DataTypeName(t->data_type), " [",
                               absl::StrJoin(t->dims, ","), "], the graph input '", v.name, "' is ",
                               v.desc.ToString()));
    }
    absl::StatusOr<Tensor> tensor = Tensor::Allocate(context, v.desc);
    if (!tensor.ok()) return Fail(tensor.status().ToString());
    const HostData data = onnx_import::ToConstant(*std::move(t)).ToHostData();
    if (absl::Status s = tensor->UploadBytes(
            absl::MakeConstSpan(static_cast<const uint8_t*>(data.bytes()), data.byte_size()));
        !s.ok()) {
      return Fail(s.ToString());
    }
    bindings.Set(v.name, *tensor);
    keep.push_back(*tensor);
  }
  std::vector<Tensor> outputs;
  for (ValueId id : graph.outputs()) {
    const Value& v = graph.value(id);
    absl::StatusOr<Tensor> tensor = Tensor::Allocate(context, v.desc);
    if (!tensor.ok()) return Fail(tensor.status().ToString());
    // Poisoned: NaN for float32, a 0xA5 byte pattern for the other types.
    const float nan = std::nanf("");
    const uint8_t pattern = 0xA5;
    absl::Status poisoned =
        v.desc.dtype == DataType::kFloat32 ? tensor->Fill(nan) : tensor->FillBytes(&pattern, 1);
    if (!poisoned.ok()) return Fail(poisoned.ToString());
    bindings.Set(v.name, *tensor);
    outputs.push_back(*tensor);
  }
  if (absl::Status s = recording.Run(bindings); !s.ok())
    return Fail(absl::StrCat("Run: ", s.ToString()));
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Value& v = graph.value(graph.outputs()[i]);
    absl::StatusOr<std::string> bytes = ReadBytes(dir / absl::StrCat("output_", i, ".pb"));
    if (!bytes.ok()) return Fail(std::string(bytes.status().message()));
    absl::StatusOr<onnx_import::HostTensorData> e = onnx_import::ParseTensorBytes(*bytes);
    if (!e.ok()) return Fail(absl::StrCat("output_", i, ": ", e.status().message()));
    if (e->dtype != v.desc.dtype || e->dims != v.desc.shape) {
      return Fail(absl::StrCat("output '", v.name, "' is ", v.desc.ToString(), ", the expected ",
                               "output is ", onnx_import::DataTypeName(e->data_type), " [",
                               absl::StrJoin(e->dims, ","), "]"));
    }
    absl::StatusOr<std::vector<uint8_t>> bytes_out = outputs[i].DownloadBytes();
    if (!bytes_out.ok()) return Fail(bytes_out.status().ToString());
    absl::StatusOr<HostData> got = HostData::FromBytes(v.desc.dtype, *bytes_out);
    if (!got.ok()) return Fail(got.status().ToString());
    // Floats within the tolerances; integers and bools exactly.
    std::vector<float> actual(got->size()), expected(got->size());
    for (size_t k = 0; k < got->size(); ++k) actual[k] = static_cast<float>(got->at(k));
    const HostData want = onnx_import::ToConstant(*std::move(e)).ToHostData();
    if (want.size() != expected.size()) return Fail("output size mismatch");
    for (size_t k = 0; k < want.size(); ++k) expected[k] = static_cast<float>(want.at(k));
    const bool exact = !IsFloatingPoint(v.desc.dtype);
    reference::CompareResult r =
        reference::Compare(actual, expected, exact ? 0.0f : kAtol, exact ? 0.0f : kRtol);
    if (!r.ok()) {
      return Fail(absl::StrCat(dir.filename().string(), " output '", v.name, "': ", r.ToString()));
    }
  }
  return {};
}

// BakeConstantInputs returns the case's model with every graph input after
// the first turned into an initializer holding its value from the case's
// only data set. ONNX's node tests feed shapes, indices, pads, scales and
// split sizes as graph inputs; exported models give them as constants, which
// is what recq requires there. NotFound if the case has several data sets,
// Unimplemented if such an input is a sequence or an optional.
absl::StatusOr<std::string> BakeConstantInputs(const fs::path& dir) {
  std::vector<fs::path> sets;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  }
  if (sets.size() != 1) return absl::NotFoundError("not exactly one data set");
  absl::StatusOr<std::string> bytes = ReadBytes(dir / "model.onnx");
  if (!bytes.ok()) return bytes.status();
  onnx::ModelProto model;
  if (!model.ParseFromString(*bytes)) return absl::InvalidArgumentError("bad model.onnx");
  onnx::GraphProto* graph = model.mutable_graph();
  std::vector<std::string> init_names;
  for (const onnx::TensorProto& t : graph->initializer()) init_names.push_back(t.name());
  int index = 0;
  for (int i = 0; i < graph->input_size();) {
    const std::string name = graph->input(i).name();
    if (std::find(init_names.begin(), init_names.end(), name) != init_names.end()) {
      ++i;
      continue;
    }
    if (index++ == 0) {
      ++i;
      continue;
    }
    // A sequence or optional input has no tensor to bake (its .pb is a
    // SequenceProto/OptionalProto, which would parse as a garbled tensor).
    if (!graph->input(i).type().has_tensor_type()) {
      return absl::UnimplementedError(absl::StrCat("input '", name, "' is not a tensor"));
    }
    absl::StatusOr<std::string> t = ReadBytes(sets[0] / absl::StrCat("input_", index - 1, ".pb"));
    if (!t.ok()) return t.status();
    onnx::TensorProto* init = graph->add_initializer();
    if (!init->ParseFromString(*t)) return absl::InvalidArgumentError("bad input tensor");
    init->set_name(name);
    graph->mutable_input()->DeleteSubrange(i, 1);
  }
  return model.SerializeAsString();
}

CaseResult RunCase(const Context& context, const fs::path& dir) {
  if (!fs::exists(dir / "model.onnx")) return Fail(absl::StrCat(dir.string(), ": no model.onnx"));
  absl::StatusOr<Graph> graph = LoadOnnx((dir / "model.onnx").string());
  if (absl::IsUnimplemented(graph.status())) {
    absl::StatusOr<std::string> baked = BakeConstantInputs(dir);
    if (baked.ok()) {
      absl::StatusOr<Graph> retry = LoadOnnxFromBytes(*baked);
      if (retry.ok() || !absl::IsUnimplemented(retry.status())) graph = std::move(retry);
    }
  }
  if (!graph.ok()) {
    return {graph.status().code() == absl::StatusCode::kUnimplemented ? CaseResult::kSkip
                                                                      : CaseResult::kFail,
            absl::StrCat("LoadOnnx: ", graph.status().ToString())};
  }
  absl::StatusOr<Engine> engine = Engine::Compile(context, *graph);
  if (!engine.ok()) return Fail(absl::StrCat("Compile: ", engine.status().ToString()));
  absl::StatusOr<Recording> recording = engine->Record();
  if (!recording.ok()) return Fail(absl::StrCat("Record: ", recording.status().ToString()));
  std::vector<fs::path> sets;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) {
      sets.push_back(e.path());
    }
  }
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return Fail("no test_data_set_* directory");
  for (const fs::path& set : sets) {
    CaseResult r = RunDataSet(context, *graph, *recording, set);
    if (r.outcome != CaseResult::kPass) return r;
  }
  return {};
}

class OnnxNodeTest : public ::testing::TestWithParam<std::string> {};

TEST_P(OnnxNodeTest, MatchesExpectedOutputs) {
  const fs::path dir = fs::path(DataDir()) / GetParam();
  ASSERT_TRUE(fs::is_directory(dir)) << "case " << GetParam() << " is missing: " << dir;
  CaseResult r = RunCase(testing::SharedContext(), dir);
  EXPECT_EQ(r.outcome, CaseResult::kPass) << r.message;
}

INSTANTIATE_TEST_SUITE_P(ExpectedPass, OnnxNodeTest,
                         ::testing::ValuesIn(ReadList(RECQ_ONNX_EXPECTED_PASS)),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

// Cases of opsets newer than libonnx-testdata's (tests/onnx/newer_opsets,
// written with onnxruntime's outputs by make_cases.py there).
std::vector<std::string> NewerOpsetCases() {
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(RECQ_ONNX_NEWER_OPSETS_DIR)) {
    if (e.is_directory()) names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class OnnxNewerOpsetTest : public ::testing::TestWithParam<std::string> {};

TEST_P(OnnxNewerOpsetTest, MatchesOnnxruntime) {
  CaseResult r =
      RunCase(testing::SharedContext(), fs::path(RECQ_ONNX_NEWER_OPSETS_DIR) / GetParam());
  // Until the importer's model-level range reaches the op's opset (the ops
  // register their mappings up to 21 already), the case cannot load.
  if (r.outcome == CaseResult::kSkip &&
      absl::StrContains(r.message, "of the default domain; recq supports")) {
    GTEST_SKIP() << r.message;
  }
  EXPECT_EQ(r.outcome, CaseResult::kPass) << r.message;
}

INSTANTIATE_TEST_SUITE_P(NewerOpsets, OnnxNewerOpsetTest, ::testing::ValuesIn(NewerOpsetCases()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

TEST(OnnxAllCases, Summary) {
  const char* all = std::getenv("RECQ_ONNX_ALL");
  if (all == nullptr || std::string(all) != "1") GTEST_SKIP() << "set RECQ_ONNX_ALL=1 to run";
  std::vector<fs::path> cases;
  for (const fs::directory_entry& e : fs::directory_iterator(DataDir())) {
    if (e.is_directory()) cases.push_back(e.path());
  }
  std::sort(cases.begin(), cases.end());
  int passed = 0, failed = 0, skipped = 0;
  for (const fs::path& dir : cases) {
    CaseResult r = RunCase(testing::SharedContext(), dir);
    const char* tag = r.outcome == CaseResult::kPass   ? "PASS"
                      : r.outcome == CaseResult::kFail ? "FAIL"
                                                       : "SKIP";
    (r.outcome == CaseResult::kPass ? passed : r.outcome == CaseResult::kFail ? failed : skipped)++;
    std::printf("%s %s %s\n", tag, dir.filename().string().c_str(), r.message.c_str());
    std::fflush(stdout);
  }
  std::printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
}

}  // namespace
}  // namespace recq
