// Engine files: Serialize / LoadEngine round trips, reproducible bytes, the
// three load paths (as stored, programs rebuilt, re-lowered) and the strict
// option, bad files of every kind, program sharing between engines of one
// context, and the warm-up phase.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/engine_file/archive.h"
#include "engine/engine_file/convert.h"
#include "engine/engine_file/pocl_binary.h"
#include "engine/engine_file/verifier.h"
#include "engine/engine_state.h"
#include "gtest/gtest.h"
#include "recq/onnx.h"
#include "recq/recq.h"
#include "reference/reference_executor.h"
#include "testing/small_net.h"
#include "testing/test_env.h"

namespace recq {
namespace {

using testing::SharedContext;
using testing::SmallNet;

constexpr float kAtol = 1e-4f;  // float32 sums of <= 80 terms of magnitude ~1
constexpr float kRtol = 1e-4f;

// A context of its own without the on-disk binary cache, so that programs
// come from the engine file (or the compiler), never from another test.
Context FreshContext() {
  ContextOptions options;
  options.cache_dir = "off";
  auto context = Context::Create(options);
  EXPECT_TRUE(context.ok()) << context.status();
  return *context;
}

// Run runs `engine` recorded on a fresh random input and returns the input
// and the output (poisoned with NaN first).
std::pair<reference::HostTensor, std::vector<float>> RunOnce(const Engine& engine, uint64_t seed) {
  reference::HostTensor in = reference::RandomTensor({1, 8, 10, 12}, seed);
  // Tensors in the engine's own context (several tests use fresh ones).
  auto x = Tensor::Allocate(engine.context(), engine.inputs()[0].desc);
  auto y = Tensor::Allocate(engine.context(), engine.outputs()[0].desc);
  EXPECT_TRUE(x.ok() && y.ok());
  EXPECT_TRUE(x->Upload(in.data).ok());
  EXPECT_TRUE(y->Fill(NAN).ok());
  auto rec = engine.Record();
  EXPECT_TRUE(rec.ok()) << rec.status();
  Bindings b;
  b.Set("x", *x);
  b.Set("y", *y);
  absl::Status s = rec->Run(b);
  EXPECT_TRUE(s.ok()) << s;
  auto out = y->Download();
  EXPECT_TRUE(out.ok()) << out.status();
  return {in, out.ok() ? *out : std::vector<float>()};
}

void ExpectMatchesReference(const Graph& graph, const Engine& engine, uint64_t seed) {
  auto [in, out] = RunOnce(engine, seed);
  std::vector<float> expected = testing::ReferenceOutput(graph, "x", in, "y");
  ASSERT_EQ(out.size(), expected.size());
  for (size_t i = 0; i < out.size(); ++i) {
    ASSERT_NEAR(out[i], expected[i], kAtol + kRtol * std::fabs(expected[i])) << "element " << i;
  }
}

// Rewrap parses `bytes`, lets `edit` change the payload, and wraps it again
// with a valid checksum (how a file made elsewhere would look).
template <typename Edit>
std::string Rewrap(const std::string& bytes, Edit edit) {
  auto file = internal::ParseEngineFile(bytes);
  EXPECT_TRUE(file.ok()) << file.status();
  edit(*file);
  return internal::WrapEngineFilePayload(file->SerializeAsString());
}

class EngineFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    graph_ = SmallNet();
    auto engine = Engine::Compile(SharedContext(), graph_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::make_unique<Engine>(*std::move(engine));
    auto bytes = engine_->Serialize();
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    bytes_ = *std::move(bytes);
  }

  Graph graph_;
  std::unique_ptr<Engine> engine_;
  std::string bytes_;
};

TEST_F(EngineFileTest, LoadsAsStoredInAFreshContextWithoutCompiling) {
  Context context = FreshContext();
  auto loaded = LoadEngineFromBytes(context, bytes_);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const EngineStats& stats = loaded->stats();
  EXPECT_EQ(stats.origin, EngineOrigin::kFileAsStored) << stats.origin_reason;
  EXPECT_EQ(stats.kernels_built, 0u);
  EXPECT_GT(stats.programs_from_file, 0u);
  EXPECT_EQ(stats.dispatches, engine_->stats().dispatches);
  EXPECT_EQ(loaded->DispatchLabels(), engine_->DispatchLabels());
  ASSERT_EQ(loaded->inputs().size(), 1u);
  EXPECT_EQ(loaded->inputs()[0].name, "x");
  EXPECT_EQ(loaded->outputs()[0].desc, engine_->outputs()[0].desc);
  ExpectMatchesReference(graph_, *loaded, 101);
  // Bit-identical to the engine it was saved from, on the same input.
  EXPECT_EQ(RunOnce(*loaded, 102).second, RunOnce(*engine_, 102).second);
}

// Program binaries are what the driver returns; PoCL's hold the work-group
// functions built so far for the program (in this process or its cache), so
// byte-identity is checked from equal starting points: fresh contexts
// without the disk cache.
TEST_F(EngineFileTest, AnotherDriverRebuildsProgramsFromTheStoredSources) {
  std::string other = Rewrap(bytes_, [](engine_file::EngineFile& f) {
    f.mutable_built_for()->set_driver_version("another driver 0.0");
    for (auto& p : *f.mutable_programs()) p.set_binary("not a binary for this driver");
  });
  auto loaded = LoadEngineFromBytes(FreshContext(), other);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->stats().origin, EngineOrigin::kFileRebuiltPrograms);
  EXPECT_NE(loaded->stats().origin_reason.find("another driver 0.0"), std::string::npos)
      << loaded->stats().origin_reason;
  EXPECT_EQ(loaded->stats().programs_from_file, 0u);
  EXPECT_GT(loaded->stats().kernels_built, 0u);
  ExpectMatchesReference(graph_, *loaded, 103);

  EngineLoadOptions strict;
  strict.strict = true;
  auto refused = LoadEngineFromBytes(FreshContext(), other, strict);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition) << refused.status();
}

TEST_F(EngineFileTest, AnotherDeviceTypeRelowersFromTheStoredGraph) {
  std::string other = Rewrap(bytes_, [](engine_file::EngineFile& f) {
    f.mutable_built_for()->set_gpu_kernels(!f.built_for().gpu_kernels());
    f.mutable_built_for()->set_compute_units(f.built_for().compute_units() + 7);
  });
  auto loaded = LoadEngineFromBytes(SharedContext(), other);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->stats().origin, EngineOrigin::kFileRelowered);
  EXPECT_NE(loaded->stats().origin_reason.find("re-lowered"), std::string::npos);
  ExpectMatchesReference(graph_, *loaded, 104);

  EngineLoadOptions strict;
  strict.strict = true;
  auto refused = LoadEngineFromBytes(SharedContext(), other, strict);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition) << refused.status();

  // Without a stored graph there is nothing to re-lower: FailedPrecondition
  // that says why.
  // (Such a file stores its constants: with the graph gone, put them in.)
  const auto& constants = engine_->state()->list.constants;
  std::string no_graph = Rewrap(other, [&](engine_file::EngineFile& f) {
    f.clear_graph_onnx();
    f.set_graph_missing_reason("node 'n' has no ONNX export");
    ASSERT_EQ(static_cast<size_t>(f.constants_size()), constants.size());
    for (size_t i = 0; i < constants.size(); ++i) {
      f.mutable_constants(static_cast<int>(i))
          ->set_data(static_cast<const char*>(constants[i]->bytes()), constants[i]->byte_size());
    }
  });
  auto missing = LoadEngineFromBytes(SharedContext(), no_graph);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kFailedPrecondition) << missing.status();
  EXPECT_NE(missing.status().message().find("no ONNX export"), std::string::npos);
}

TEST_F(EngineFileTest, EnginesInOneContextShareBuiltPrograms) {
  Context context = FreshContext();
  auto first = Engine::Compile(context, graph_);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_GT(first->stats().kernels_built, 0u);
  const size_t programs = context.state()->programs.size();
  auto second = Engine::Compile(context, graph_);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->stats().kernels_built, 0u);
  auto loaded = LoadEngineFromBytes(context, bytes_);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->stats().kernels_built, 0u);
  EXPECT_EQ(loaded->stats().programs_from_file, 0u);  // all already built in this context
  EXPECT_EQ(context.state()->programs.size(), programs);
  const auto& a = first->state()->programs;
  const auto& b = second->state()->programs;
  const auto& c = loaded->state()->programs;
  ASSERT_EQ(a.size(), b.size());
  ASSERT_EQ(a.size(), c.size());
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(a[k], b[k]) << "kernel " << k;
    EXPECT_EQ(a[k], c[k]) << "kernel " << k;
  }
  ExpectMatchesReference(graph_, *loaded, 105);
}

TEST_F(EngineFileTest, WarmUpRunsEveryLaunchShapeOnceAndCanBeTurnedOff) {
  // Each distinct (kernel, launch shape) once: at least one, at most all.
  EXPECT_GT(engine_->stats().warmup_dispatches, 0u);
  EXPECT_LE(engine_->stats().warmup_dispatches, engine_->stats().dispatches);
  EXPECT_GT(engine_->stats().warmup_ms, 0.0);
  EXPECT_LE(engine_->stats().warmup_ms, engine_->stats().compile_ms);
  EngineOptions cold;
  cold.warm_up = false;
  auto engine = Engine::Compile(SharedContext(), graph_, cold);
  ASSERT_TRUE(engine.ok()) << engine.status();
  EXPECT_EQ(engine->stats().warmup_dispatches, 0u);
  EngineLoadOptions load;
  load.warm_up = false;
  auto loaded = LoadEngineFromBytes(FreshContext(), bytes_, load);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->stats().warmup_dispatches, 0u);
  ExpectMatchesReference(graph_, *loaded, 106);
}

TEST_F(EngineFileTest, FileRoundTripAndSummary) {
  const std::string path = ::testing::TempDir() + "/engine_file_test.recq";
  ASSERT_TRUE(engine_->SerializeToFile(path).ok());
  auto loaded = LoadEngine(SharedContext(), path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ExpectMatchesReference(graph_, *loaded, 107);
  auto bytes = ReadFileBytes(path);
  ASSERT_TRUE(bytes.ok());
  EXPECT_TRUE(LooksLikeEngineFile(*bytes));
  auto summary = SummarizeEngineFile(*bytes);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->format_version, kEngineFileFormatVersion);
  EXPECT_EQ(summary->built_for.name, SharedContext().device_info().name);
  EXPECT_EQ(summary->built_for.driver_version, SharedContext().device_info().driver_version);
  EXPECT_EQ(summary->dispatches, engine_->DispatchLabels());
  ASSERT_EQ(summary->inputs.size(), 1u);
  EXPECT_EQ(summary->inputs[0].desc, engine_->inputs()[0].desc);
  EXPECT_TRUE(summary->has_graph);
  EXPECT_GT(summary->programs_with_binary, 0u);
  std::remove(path.c_str());
  auto missing = LoadEngine(SharedContext(), path);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound) << missing.status();
}

// --- bad files ---

bool IsBadFileError(const absl::Status& s) {
  return s.code() == absl::StatusCode::kInvalidArgument || s.code() == absl::StatusCode::kDataLoss;
}

TEST_F(EngineFileTest, ForeignEmptyAndWrongVersionFilesAreInvalidArgument) {
  auto onnx = SaveOnnxToBytes(graph_, "small");
  ASSERT_TRUE(onnx.ok());
  EXPECT_FALSE(LooksLikeEngineFile(*onnx));
  for (const std::string& bytes :
       {std::string(), *onnx, std::string("recq-engine"), std::string(1000, '\xff')}) {
    auto loaded = LoadEngineFromBytes(SharedContext(), bytes);
    EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument) << loaded.status();
  }
  auto file = internal::ParseEngineFile(bytes_);
  ASSERT_TRUE(file.ok());
  for (uint32_t version : {kEngineFileFormatVersion - 1, kEngineFileFormatVersion + 1}) {
    std::string other = internal::WrapEngineFilePayload(file->SerializeAsString(), version);
    auto loaded = LoadEngineFromBytes(SharedContext(), other);
    EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(loaded.status().message().find(absl::StrCat("version ", version)), std::string::npos)
        << loaded.status();
  }
}

TEST_F(EngineFileTest, TruncatedAndMutatedFilesAreErrorsNeverCrashes) {
  std::mt19937_64 rng(::testing::UnitTest::GetInstance()->random_seed());
  int checked = 0;
  auto check = [&](const std::string& bytes, const std::string& what) {
    absl::Status s = internal::ParseEngineFile(bytes).status();
    ASSERT_TRUE(IsBadFileError(s)) << what << ": " << s;
    ++checked;
  };
  // Truncations: every length near both ends, and a spread in between.
  for (size_t n = 0; n < 64 && n < bytes_.size(); ++n) {
    check(bytes_.substr(0, n), absl::StrCat("first ", n, " bytes"));
    check(bytes_.substr(0, bytes_.size() - 1 - n), absl::StrCat("minus ", n + 1, " bytes"));
  }
  for (int i = 0; i < 500; ++i) {
    size_t n = rng() % bytes_.size();
    check(bytes_.substr(0, n), absl::StrCat("first ", n, " bytes"));
  }
  // Byte flips, inserted and deleted bytes, anywhere in the file.
  for (int i = 0; i < 2500; ++i) {
    std::string mutated = bytes_;
    const size_t at = rng() % mutated.size();
    switch (i % 3) {
      case 0:
        mutated[at] = static_cast<char>(mutated[at] ^ (1 + rng() % 255));
        break;
      case 1:
        mutated.insert(at, 1, static_cast<char>(rng()));
        break;
      case 2:
        mutated.erase(at, 1);
        break;
    }
    check(mutated, absl::StrCat("mutation ", i, " at byte ", at));
  }
  EXPECT_GE(checked, 3000);
  // A flipped payload byte behind an intact envelope is DataLoss.
  std::string tampered = bytes_;
  tampered[bytes_.size() / 2] ^= 0x20;
  absl::Status s = internal::ParseEngineFile(tampered).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  // Whole-file loads of a few mutants take the same paths through the device API.
  for (int i = 0; i < 20; ++i) {
    std::string mutated = bytes_;
    mutated[rng() % mutated.size()] ^= 0x01;
    auto loaded = LoadEngineFromBytes(SharedContext(), mutated);
    EXPECT_TRUE(IsBadFileError(loaded.status())) << loaded.status();
  }
}

// The summary reads verified files without checks of its own: every payload
// mutant the verifier accepts summarizes. (The fuzzer links the archive and
// the verifier alone, so this is where the summary meets mutants.)
TEST_F(EngineFileTest, EveryPayloadMutantTheVerifierAcceptsSummarizes) {
  auto file = internal::ParseEngineFile(bytes_);
  ASSERT_TRUE(file.ok()) << file.status();
  // Neither reads the graph, sources or binaries beyond their presence:
  // cut short, so that the mutations land on the structure.
  file->set_graph_onnx("graph");
  for (auto& p : *file->mutable_programs()) {
    p.set_source(p.source().substr(0, 16));
    p.set_binary(p.binary().substr(0, 16));
  }
  const std::string payload = file->SerializeAsString();
  ASSERT_TRUE(internal::ParseEngineFile(internal::WrapEngineFilePayload(payload)).ok());
  std::mt19937_64 rng(::testing::UnitTest::GetInstance()->random_seed());
  int accepted = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string mutated = payload;
    const size_t at = rng() % mutated.size();
    mutated[at] = static_cast<char>(mutated[at] ^ (1 + rng() % 255));
    const std::string bytes = internal::WrapEngineFilePayload(mutated);
    auto parsed = internal::ParseEngineFile(bytes);
    if (!parsed.ok()) {
      ASSERT_TRUE(IsBadFileError(parsed.status())) << "byte " << at << ": " << parsed.status();
      continue;
    }
    ++accepted;
    auto summary = SummarizeEngineFile(bytes);
    ASSERT_TRUE(summary.ok()) << "byte " << at << ": " << summary.status();
    EXPECT_EQ(summary->dispatches.size(), static_cast<size_t>(parsed->dispatches_size()));
    EXPECT_EQ(summary->inputs.size() + summary->outputs.size(),
              static_cast<size_t>(parsed->bindings_size()));
  }
  EXPECT_GT(accepted, 0);
}

// The verifier's element-type table (it reads messages without recq's
// graph types) agrees with DataTypeSize and DataTypeName.
TEST(EngineFileVerifierTest, ElementTypesAreRecqsDataTypes) {
  for (DataType dtype :
       {DataType::kFloat32, DataType::kFloat16, DataType::kInt64, DataType::kInt32, DataType::kInt8,
        DataType::kUInt8, DataType::kBool, DataType::kFloat64, DataType::kUInt16, DataType::kInt16,
        DataType::kUInt32, DataType::kUInt64}) {
    const int element_type = internal::ElementTypeOf(dtype);
    EXPECT_TRUE(internal::CheckElementType(element_type, "x").ok()) << DataTypeName(dtype);
    EXPECT_EQ(internal::ElementTypeSize(element_type), DataTypeSize(dtype)) << DataTypeName(dtype);
    EXPECT_STREQ(internal::ElementTypeName(element_type), DataTypeName(dtype));
    auto back = internal::DataTypeOf(element_type, "x");
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, dtype);
  }
  for (int undefined : {0, 13, -1, 42}) {
    const absl::Status s = internal::CheckElementType(undefined, "constant 3");
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(s.message(), absl::StrCat("engine file: constant 3 has element type ", undefined,
                                        "; expected 1 to 12 (FLOAT32 to UINT64)"));
    EXPECT_EQ(internal::ElementTypeSize(undefined), 0u);
  }
}

TEST_F(EngineFileTest, InconsistentContentsBehindAValidChecksumAreInvalidArgument) {
  using F = engine_file::EngineFile;
  const std::vector<std::pair<std::string, std::function<void(F&)>>> edits = {
      {"kernel index", [](F& f) { f.mutable_dispatches(0)->set_kernel(9999); }},
      {"slot index",
       [](F& f) {
         auto* arg = f.mutable_dispatches(0)->add_args();
         arg->set_kind(engine_file::DispatchArg::SLOT);
         arg->set_index(f.bindings_size());
       }},
      {"constant index",
       [](F& f) {
         auto* arg = f.mutable_dispatches(0)->add_args();
         arg->set_kind(engine_file::DispatchArg::CONSTANT);
         arg->set_index(-1);
       }},
      {"internal index",
       [](F& f) {
         auto* arg = f.mutable_dispatches(0)->add_args();
         arg->set_kind(engine_file::DispatchArg::INTERNAL);
         arg->set_index(f.memory_plan().buffer_bytes_size());
       }},
      {"arg kind",
       [](F& f) {
         f.mutable_dispatches(0)->add_args()->set_kind(
             static_cast<engine_file::DispatchArg::Kind>(77));
       }},
      {"work_dim", [](F& f) { f.mutable_dispatches(0)->set_work_dim(4); }},
      {"global size", [](F& f) { f.mutable_dispatches(0)->set_global(0, 0); }},
      {"negative dim", [](F& f) { f.mutable_bindings(0)->mutable_desc()->set_shape(0, -1); }},
      {"huge shape",
       [](F& f) {
         for (int i = 0; i < 8; ++i) f.mutable_bindings(0)->mutable_desc()->add_shape(1 << 20);
       }},
      {"element type",
       [](F& f) {
         f.mutable_bindings(0)->mutable_desc()->set_element_type(
             static_cast<engine_file::ElementType>(42));
       }},
      {"duplicate binding", [](F& f) { *f.add_bindings() = f.bindings(0); }},
      {"no outputs",
       [](F& f) {
         while (f.bindings_size() > 1) f.mutable_bindings()->RemoveLast();
       }},
      {"program index", [](F& f) { f.mutable_kernels(0)->set_program(f.programs_size()); }},
      {"kernel options", [](F& f) { f.mutable_kernels(0)->add_options("-DTAMPERED"); }},
      {"no dispatches", [](F& f) { f.clear_dispatches(); }},
  };
  for (const auto& [what, edit] : edits) {
    std::string bytes = Rewrap(bytes_, edit);
    auto loaded = LoadEngineFromBytes(SharedContext(), bytes);
    EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument)
        << what << ": " << loaded.status();
  }
  // A payload that passes its checksum but is not an EngineFile: DataLoss.
  auto loaded = LoadEngineFromBytes(SharedContext(), internal::WrapEngineFilePayload("\xff\xff"));
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss) << loaded.status();
}

// A file that passes its checksum and its own consistency checks but lies
// about its bindings, work sizes, arguments, constants or variant choices is
// caught against the lowering of its stored graph: DataLoss naming what
// differs, never a run with wrong sizes.
TEST_F(EngineFileTest, LiesBehindAValidChecksumAreCaughtAgainstTheStoredGraph) {
  using F = engine_file::EngineFile;
  auto file = internal::ParseEngineFile(bytes_);
  ASSERT_TRUE(file.ok()) << file.status();
  // A dispatch with an explicit local size, and one internal-buffer argument.
  int local_dispatch = -1, internal_dispatch = -1, internal_arg = -1;
  for (int d = 0; d < file->dispatches_size(); ++d) {
    if (local_dispatch < 0 && file->dispatches(d).local_size() == 3) local_dispatch = d;
    for (int a = 0; internal_dispatch < 0 && a < file->dispatches(d).args_size(); ++a) {
      if (file->dispatches(d).args(a).kind() == engine_file::DispatchArg::INTERNAL) {
        internal_dispatch = d;
        internal_arg = a;
      }
    }
  }
  ASSERT_GE(internal_dispatch, 0);
  ASSERT_GE(file->memory_plan().buffer_bytes_size(), 2);
  ASSERT_GE(file->constants_size(), 2);
  ASSERT_GE(file->variant_choices_size(), 1);
  const std::vector<std::tuple<std::string, std::string, std::function<void(F&)>>> lies = {
      {"binding element type", "binding 0",
       [](F& f) { f.mutable_bindings(0)->mutable_desc()->set_element_type(engine_file::FLOAT16); }},
      {"binding shape", "binding 1",
       [](F& f) {
         auto* desc = f.mutable_bindings(1)->mutable_desc();
         desc->set_shape(desc->shape_size() - 1, 2 * desc->shape(desc->shape_size() - 1));
       }},
      {"binding name", "binding 0", [](F& f) { f.mutable_bindings(0)->set_name("z"); }},
      {"global size", "global",
       [](F& f) {
         auto* d = f.mutable_dispatches(0);
         const uint64_t l = d->local_size() ? d->local(0) : 1;
         d->set_global(0, d->global(0) + 64 * l);
       }},
      {"intermediate size", "intermediate buffers",
       [](F& f) {
         f.mutable_memory_plan()->set_buffer_bytes(0, f.memory_plan().buffer_bytes(0) / 2);
       }},
      {"argument", "argument",
       [&](F& f) {
         auto* arg = f.mutable_dispatches(internal_dispatch)->mutable_args(internal_arg);
         arg->set_index((arg->index() + 1) % f.memory_plan().buffer_bytes_size());
       }},
      {"constant size", "constant 0",
       [](F& f) { f.mutable_constants(0)->set_elements(f.constants(0).elements() + 1); }},
      {"constants swapped", "constant", [](F& f) { f.mutable_constants()->SwapElements(0, 1); }},
      {"kernel entry point", "kernel 0",
       [](F& f) { f.mutable_kernels(0)->set_entry_point("other"); }},
      {"variant choice", "variant", [](F& f) { f.mutable_variant_choices(0)->set_variant(1000); }},
  };
  for (const auto& [what, names, edit] : lies) {
    std::string bytes = Rewrap(bytes_, edit);
    auto loaded = LoadEngineFromBytes(SharedContext(), bytes);
    ASSERT_FALSE(loaded.ok()) << what;
    EXPECT_TRUE(loaded.status().code() == absl::StatusCode::kDataLoss ||
                loaded.status().code() == absl::StatusCode::kInvalidArgument)
        << what << ": " << loaded.status();
    EXPECT_NE(loaded.status().message().find(names), std::string::npos)
        << what << ": " << loaded.status();
  }
  if (local_dispatch >= 0) {
    std::string bytes = Rewrap(bytes_, [&](F& f) {
      auto* d = f.mutable_dispatches(local_dispatch);
      d->set_global(0, d->global(0) * 2);
      d->set_local(0, d->local(0) * 2);
    });
    auto loaded = LoadEngineFromBytes(SharedContext(), bytes);
    EXPECT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss) << loaded.status();
  }
}

// Program binaries from PoCL name a temporary source file with a random
// suffix; CanonicalizePoclBinary fixes it in both of its encodings and
// leaves other bytes and other drivers' binaries alone.
TEST(CanonicalizePoclBinaryTest, FixesTheRandomSourceNameInBothEncodings) {
  const std::string name = "tempfile_Ab3xYz.cl";
  std::string binary("poclbin\0", 8);
  binary += "head/dir/" + name + "tail";
  // The same name as 7-bit characters starting 3 bits into a byte.
  const size_t start_bit = (binary.size() + 2) * 8 + 3;
  binary += std::string(4 + (name.size() * 7 + 10) / 8, '\x5a');
  auto put = [](std::string& bytes, size_t bit, uint32_t v) {
    for (int k = 0; k < 7; ++k, ++bit) {
      char& byte = bytes[bit / 8];
      byte =
          static_cast<char>((v >> k) & 1 ? (byte | (1 << (bit % 8))) : (byte & ~(1 << (bit % 8))));
    }
  };
  for (size_t c = 0; c < name.size(); ++c)
    put(binary, start_bit + 7 * c, static_cast<uint8_t>(name[c]));
  std::string other = binary;
  for (size_t c = 9; c < 15; ++c) put(other, start_bit + 7 * c, 'q');  // another random suffix
  other.replace(binary.find(name) + 9, 6, "qqqqqq");
  ASSERT_NE(binary, other);
  internal::CanonicalizePoclBinary(&binary);
  internal::CanonicalizePoclBinary(&other);
  EXPECT_EQ(binary, other);
  EXPECT_NE(binary.find("head/dir/tempfile_000000.cl"), std::string::npos);
  std::string decoded;
  for (size_t c = 0; c < name.size(); ++c) {
    uint32_t v = 0;
    for (int k = 0; k < 7; ++k) {
      const size_t bit = start_bit + 7 * c + k;
      v |= ((static_cast<uint8_t>(binary[bit / 8]) >> (bit % 8)) & 1u) << k;
    }
    decoded += static_cast<char>(v);
  }
  EXPECT_EQ(decoded, "tempfile_000000.cl");
  // Not a PoCL binary: untouched.
  std::string foreign = "ELF" + name;
  internal::CanonicalizePoclBinary(&foreign);
  EXPECT_EQ(foreign, "ELF" + name);
}

// With RECQ_WRITE_ENGINE_FILE_SEEDS=DIR, writes the engine-file fuzzer's
// seed corpus (tests/fuzz/corpus/engine_file) to DIR: small files of a
// one-node graph, program binaries dropped and sources cut short to stay
// under the fuzzer's 64 KiB inputs.
TEST(EngineFileSeeds, WriteWhenAsked) {
  const char* dir = std::getenv("RECQ_WRITE_ENGINE_FILE_SEEDS");
  if (dir == nullptr) GTEST_SKIP() << "RECQ_WRITE_ENGINE_FILE_SEEDS is not set";
  GraphBuilder b;
  TensorRef x = b.Input("x", {1, 4, 3, 3});
  b.Output(b.Relu(b.Add(x, x)), "y");
  auto graph = std::move(b).Build();
  ASSERT_TRUE(graph.ok());
  auto engine = Engine::Compile(SharedContext(), *graph);
  ASSERT_TRUE(engine.ok()) << engine.status();
  auto bytes = engine->Serialize();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  auto file = internal::ParseEngineFile(*bytes);
  ASSERT_TRUE(file.ok());
  for (auto& p : *file->mutable_programs()) {
    p.clear_binary();
    p.set_source(p.source().substr(0, 200));
  }
  const std::string payload = file->SerializeAsString();
  const std::string valid = internal::WrapEngineFilePayload(payload);
  auto write = [&](const std::string& name, const std::string& data) {
    std::ofstream out(std::string(dir) + "/" + name, std::ios::binary);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    ASSERT_TRUE(out.good()) << name;
  };
  write("valid.recq", valid);
  write("payload.bin", std::string("\x01") + payload);
  write("truncated.recq", valid.substr(0, valid.size() / 2));
  write("version2.recq", internal::WrapEngineFilePayload(payload, 2));
  file->mutable_dispatches(0)->set_kernel(5);
  write("bad_kernel_payload.bin", std::string("\x03") + file->SerializeAsString());
}

}  // namespace
}  // namespace recq
