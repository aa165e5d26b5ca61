#include "ops/op_test_util.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <system_error>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "recq/bindings.h"
#include "recq/engine.h"
#include "recq/recording.h"
#include "recq/tensor.h"
#include "reference/reference_executor.h"

namespace recq::optest {

namespace {
// As tests/testing/test_env.cc: the op tests run with the auto-tuner off
// (RECQ_TUNING) unless the environment sets it.
const bool kTuningOffInTests = setenv("RECQ_TUNING", "off", /*overwrite=*/0) == 0;
}  // namespace
namespace {

using reference::Compare;
using reference::CompareResult;
using reference::IndexString;
using reference::RandomTensor;
using reference::RunReference;
using reference::ShapeString;

// Fnv1a is a hash that is stable across runs and platforms.
uint64_t Fnv1a(absl::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

// SplitMix64 finalizer: spreads a counter over all bits.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::string CurrentTestName() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  if (info == nullptr) return "";
  return absl::StrCat(info->test_suite_name(), ".", info->name());
}

// The variant runs of this process (VariantRunsOfThisProcess).
struct VariantRunLog {
  std::mutex mu;
  std::set<VariantRun> runs;
};

VariantRunLog& RunLog() {
  static VariantRunLog* const log = new VariantRunLog();
  return *log;
}

// Notes, for the compile that calls it, which variant lowers `node`;
// CheckAgainstReference adds them to RunLog() once the engine's runs pass.
void NoteVariant(std::vector<VariantRun>& lowered, const Node& node, const LoweringContext& ctx,
                 size_t variant) {
  const OpDef* def = FindOp(node.op);
  if (def == nullptr || variant >= def->variants.size()) return;
  lowered.push_back(
      {node.op.name(), def->variants[variant].name, ctx.device().GpuKernels() ? "gpu" : "cpu"});
}

// WriteVariantCoverage writes this process's runs to
// $RECQ_OP_COVERAGE_DIR/VariantCoverageFileName() (through a temporary file
// and a rename, so a reader never sees half a file). Nothing is written
// without the variable or without runs (a process that ran only the
// coverage check must not replace a shard's records).
void WriteVariantCoverage() {
  const char* dir = std::getenv("RECQ_OP_COVERAGE_DIR");
  if (dir == nullptr || *dir == '\0') return;
  const std::vector<VariantRun> runs = VariantRunsOfThisProcess();
  if (runs.empty()) return;
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  const std::filesystem::path path = std::filesystem::path(dir) / VariantCoverageFileName();
  const std::filesystem::path temp = path.string() + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(temp, std::ios::trunc);
    for (const VariantRun& r : runs) out << r.op << '\t' << r.variant << '\t' << r.family << '\n';
    out.close();
    if (!out) {
      ADD_FAILURE() << "variant coverage: cannot write " << temp;
      return;
    }
  }
  std::filesystem::rename(temp, path, error);
  if (error) ADD_FAILURE() << "variant coverage: rename " << temp << ": " << error.message();
}

// Writes the runs once every test of the process has finished.
class VariantCoverageWriter : public ::testing::Environment {
 public:
  void TearDown() override { WriteVariantCoverage(); }
};
[[maybe_unused]] ::testing::Environment* const kVariantCoverageWriter =
    ::testing::AddGlobalTestEnvironment(new VariantCoverageWriter());

// Annotate prefixes a status message with `what`, keeping the code.
absl::Status Annotate(const absl::Status& status, absl::string_view what) {
  return absl::Status(status.code(), absl::StrCat(what, ": ", status.message()));
}

// RunOnce draws inputs, runs `recording` once and compares its outputs with
// the reference. `label` names the path for messages.
absl::Status RunOnce(const Context& context, const Engine& engine, Recording& recording,
                     const OpGraph& op, const CheckOptions& options, bool fp16,
                     const std::string& label) {
  absl::flat_hash_map<std::string, HostTensor> host_inputs;
  std::string seeds;
  for (const InputSpec& spec : op.inputs) {
    const uint64_t seed = NextSeed();
    absl::StrAppend(&seeds, seeds.empty() ? "" : ", ", spec.name, "=", seed);
    HostTensor t = RandomTensor(spec.shape, seed, spec.lo, spec.hi);
    t.dtype = spec.dtype;
    for (float& v : t.data) {
      if (spec.dtype == DataType::kBool) v = v > 0 ? 1.0f : 0.0f;
      if (IsIntegral(spec.dtype) && spec.dtype != DataType::kBool) {
        // Rounded down and kept inside the type's range.
        float lo = -1e9f, hi = 1e9f;
        switch (spec.dtype) {
          case DataType::kInt8:
            lo = -128.0f, hi = 127.0f;
            break;
          case DataType::kUInt8:
            lo = 0.0f, hi = 255.0f;
            break;
          case DataType::kInt16:
            lo = -32768.0f, hi = 32767.0f;
            break;
          case DataType::kUInt16:
            lo = 0.0f, hi = 65535.0f;
            break;
          case DataType::kUInt32:
          case DataType::kUInt64:
            lo = 0.0f;
            break;
          default:
            break;
        }
        v = std::clamp(std::floor(v), lo, hi);
      }
      if (spec.dtype == DataType::kFloat16) v = HalfToFloat(FloatToHalf(v));
    }
    host_inputs[spec.name] = std::move(t);
  }
  const std::string where = absl::StrCat(label, " (input seeds: ", seeds, ")");

  absl::StatusOr<absl::flat_hash_map<std::string, HostTensor>> expected =
      RunReference(op.graph, host_inputs);
  if (!expected.ok()) return Annotate(expected.status(), "reference");

  Bindings bindings;
  std::vector<Tensor> keep_alive;
  for (const BindingInfo& info : engine.inputs()) {
    auto it = host_inputs.find(info.name);
    if (it == host_inputs.end()) {
      return absl::InternalError(
          absl::StrCat("engine input '", info.name, "' is not an input of the test graph"));
    }
    if (info.desc.shape != it->second.shape) {
      return absl::InternalError(absl::StrCat("engine input '", info.name, "' has shape ",
                                              ShapeString(info.desc.shape), ", the graph says ",
                                              ShapeString(it->second.shape)));
    }
    absl::StatusOr<Tensor> t = Tensor::Allocate(context, info.desc);
    if (!t.ok()) return Annotate(t.status(), info.name);
    const std::vector<double> values(it->second.data.begin(), it->second.data.end());
    const HostData data = HostData::FromDoubles(info.desc.dtype, values);
    if (absl::Status s = t->UploadBytes(
            absl::MakeConstSpan(static_cast<const uint8_t*>(data.bytes()), data.byte_size()));
        !s.ok()) {
      return Annotate(s, info.name);
    }
    bindings.Set(info.name, *t);
    keep_alive.push_back(*std::move(t));
  }
  EXPECT_EQ(engine.outputs().size(), expected->size()) << where << ": output count";
  std::vector<std::pair<std::string, Tensor>> outputs;
  for (const BindingInfo& info : engine.outputs()) {
    absl::StatusOr<Tensor> t = Tensor::Allocate(context, info.desc);
    if (!t.ok()) return Annotate(t.status(), info.name);
    // Poisoned: NaN for float32, a 0xA5 byte pattern for the other types.
    const uint8_t pattern = 0xA5;
    absl::Status poisoned =
        info.desc.dtype == DataType::kFloat32 ? t->Fill(NAN) : t->FillBytes(&pattern, 1);
    if (!poisoned.ok()) return Annotate(poisoned, "poisoning " + info.name);
    bindings.Set(info.name, *t);
    outputs.emplace_back(info.name, *std::move(t));
  }

  if (absl::Status s = recording.Run(bindings); !s.ok()) return Annotate(s, where);

  for (const auto& [name, tensor] : outputs) {
    auto it = expected->find(name);
    if (it == expected->end()) {
      ADD_FAILURE() << where << ": engine output '" << name << "' is not a graph output";
      continue;
    }
    const HostTensor& want = it->second;
    EXPECT_EQ(tensor.desc().shape, want.shape)
        << where << ": output '" << name << "' shape " << ShapeString(tensor.desc().shape)
        << ", reference " << ShapeString(want.shape);
    absl::StatusOr<std::vector<uint8_t>> bytes = tensor.DownloadBytes();
    if (!bytes.ok()) return Annotate(bytes.status(), "downloading " + name);
    absl::StatusOr<HostData> data = HostData::FromBytes(tensor.desc().dtype, *bytes);
    if (!data.ok()) return Annotate(data.status(), "decoding " + name);
    std::vector<float> got(data->size());
    for (size_t i = 0; i < got.size(); ++i) got[i] = static_cast<float>(data->at(i));
    float atol = options.atol;
    float rtol = options.rtol;
    if (fp16) {
      float scale = 1.0f;
      for (float v : want.data) scale = std::max(scale, std::fabs(v));
      atol = options.fp16_exact ? scale / 1024 : options.fp16_atol * scale;
      rtol = options.fp16_exact ? 1.0f / 1024 : options.fp16_rtol;
    }
    const CompareResult r = Compare(got, want.data, atol, rtol);
    if (!r.ok()) {
      ADD_FAILURE() << where << ": output '" << name << "' " << ShapeString(want.shape) << ": "
                    << r.ToString()
                    << (r.first_failure >= 0
                            ? absl::StrCat(" (first failure at ",
                                           IndexString(want.shape, r.first_failure), ")")
                            : std::string());
    }
  }
  return absl::OkStatus();
}

}  // namespace

const absl::StatusOr<Context>& SharedContext() {
  static const absl::StatusOr<Context>* const context =
      new absl::StatusOr<Context>(Context::Create());
  return *context;
}

DeviceFacts TestDeviceFacts() {
  const absl::StatusOr<Context>& context = SharedContext();
  return context.ok() ? DeviceFactsFromInfo(context->device_info()) : DeviceFacts{};
}

bool RejectedForLocalMemory(const absl::Status& status) {
  const DeviceFacts facts = TestDeviceFacts();
  return absl::IsInvalidArgument(status) && facts.local_mem_bytes > 0 &&
         absl::StrContains(status.message(), "bytes of local memory; the device allows") &&
         absl::StrContains(status.message(), absl::StrCat(facts.local_mem_bytes, " bytes"));
}

uint64_t NextSeed() {
  // Tests run one at a time; the counter restarts when the test changes.
  static std::string* last_test = new std::string();
  static uint64_t counter = 0;
  std::string test = CurrentTestName();
  if (test != *last_test) {
    *last_test = std::move(test);
    counter = 0;
  }
  return Mix(Fnv1a(*last_test) ^ Mix(counter++));
}

TensorRef OpGraphBuilder::Input(const std::string& name, std::vector<int64_t> shape, float lo,
                                float hi, DataType dtype) {
  inputs_.push_back({name, shape, lo, hi, dtype});
  return builder_.Input(name, std::move(shape), dtype);
}

TensorRef OpGraphBuilder::Constant(const std::string& name, std::vector<int64_t> shape, float lo,
                                   float hi) {
  HostTensor values = RandomTensor(shape, NextSeed(), lo, hi);
  return builder_.Constant(name, std::move(shape), std::move(values.data));
}

absl::StatusOr<OpGraph> OpGraphBuilder::Build(TensorRef output) && {
  builder_.Output(output, "y");
  absl::StatusOr<Graph> graph = std::move(builder_).Build();
  if (!graph.ok()) return Annotate(graph.status(), "building the test graph");
  return OpGraph{*std::move(graph), std::move(inputs_)};
}

VariantChooser ForceVariant(OpType op, const std::string& name, std::shared_ptr<int> forced) {
  return [op, name, forced](const Node& node, const LoweringContext&,
                            absl::Span<const size_t> fitting) -> size_t {
    if (node.op != op) return fitting[0];
    const OpDef* def = FindOp(node.op);
    for (size_t i : fitting) {
      if (def->variants[i].name == name) {
        ++*forced;
        return i;
      }
    }
    return fitting[0];
  };
}

CheckOptions Exact() {
  CheckOptions options;
  options.atol = 0.0f;
  options.rtol = 0.0f;
  options.fp16_exact = true;
  return options;
}

std::vector<VariantRun> VariantRunsOfThisProcess() {
  VariantRunLog& log = RunLog();
  std::lock_guard<std::mutex> lock(log.mu);
  return std::vector<VariantRun>(log.runs.begin(), log.runs.end());
}

std::string VariantCoverageFileName() {
  const char* index = std::getenv("GTEST_SHARD_INDEX");
  const char* total = std::getenv("GTEST_TOTAL_SHARDS");
  if (index == nullptr || total == nullptr) return "0of1.txt";
  return absl::StrCat(index, "of", total, ".txt");
}

const char* KernelTargetName(EngineOptions::KernelTarget target) {
  switch (target) {
    case EngineOptions::KernelTarget::kAuto:
      return "auto";
    case EngineOptions::KernelTarget::kCpu:
      return "cpu";
    case EngineOptions::KernelTarget::kGpu:
      return "gpu";
  }
  return "?";
}

absl::Status CheckAgainstReference(const OpGraph& op, const CheckOptions& options) {
  const absl::StatusOr<Context>& context = SharedContext();
  if (!context.ok()) return Annotate(context.status(), "Context::Create");
  for (EngineOptions::Precision precision : options.precisions) {
    const bool fp16 = precision == EngineOptions::Precision::kFp16Storage;
    for (EngineOptions::KernelTarget target : options.kernel_targets) {
      for (bool optimize : options.optimize) {
        if (fp16 && optimize != options.optimize.front()) continue;
        EngineOptions engine_options;
        engine_options.optimize = optimize;
        engine_options.kernel_target = target;
        engine_options.emulate_matrix_units = options.emulate_matrix_units;
        // The requested chooser (or the engine's default, the first variant
        // that fits), noting which variant lowers each node.
        auto lowered = std::make_shared<std::vector<VariantRun>>();
        if (options.choose_variant) {
          engine_options.choose_variant = [chooser = options.choose_variant, lowered](
                                              const Node& node, const LoweringContext& ctx,
                                              absl::Span<const size_t> fitting) {
            const size_t pick = chooser(node, ctx, fitting);
            NoteVariant(*lowered, node, ctx, pick);
            return pick;
          };
        } else {
          engine_options.choose_kernel = [chooser = options.choose_kernel, lowered](
                                             const Node& node, const LoweringContext& ctx,
                                             absl::Span<const size_t> fitting) {
            KernelChoice choice =
                chooser ? chooser(node, ctx, fitting) : KernelChoice{fitting[0], {}};
            NoteVariant(*lowered, node, ctx, choice.variant);
            return choice;
          };
        }
        engine_options.tuning = EngineOptions::Tuning::kOff;
        engine_options.precision = precision;
        const std::string compiled = absl::StrCat("kernels=", KernelTargetName(target),
                                                  ", optimize=", optimize ? "true" : "false",
                                                  ", precision=", PrecisionName(precision));
        absl::StatusOr<Engine> engine = Engine::Compile(*context, op.graph, engine_options);
        if (fp16 && absl::IsUnimplemented(engine.status())) {
          std::printf("note: fp16 storage not checked (%s)\n",
                      std::string(engine.status().message()).c_str());
          continue;
        }
        if (!engine.ok()) return Annotate(engine.status(), "Compile(" + compiled + ")");

        struct Path {
          Backend backend;
          int runs;
        };
        std::vector<Path> paths = {Path{Backend::kAuto, options.recorded_runs},
                                   Path{Backend::kUnrecorded, 1}};
        if (fp16) paths = {Path{Backend::kAuto, 1}};
        for (const Path& path : paths) {
          RecordOptions record_options;
          record_options.backend = path.backend;
          absl::StatusOr<Recording> recording = engine->Record(record_options);
          if (!recording.ok()) {
            return Annotate(recording.status(), absl::StrCat("Record(", BackendName(path.backend),
                                                             ", ", compiled, ")"));
          }
          for (int run = 0; run < path.runs; ++run) {
            const std::string label =
                absl::StrCat(path.backend == Backend::kUnrecorded ? "unrecorded" : "recorded", " (",
                             BackendName(recording->backend()), ", ", compiled, ") run ", run);
            if (absl::Status s = RunOnce(*context, *engine, *recording, op, options, fp16, label);
                !s.ok()) {
              return s;
            }
          }
        }
        VariantRunLog& log = RunLog();
        std::lock_guard<std::mutex> lock(log.mu);
        log.runs.insert(lowered->begin(), lowered->end());
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckAgainstReference(const absl::StatusOr<OpGraph>& op, const CheckOptions& options) {
  if (!op.ok()) return op.status();
  return CheckAgainstReference(*op, options);
}

}  // namespace recq::optest
