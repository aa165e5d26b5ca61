// The recq command-line tool.
//
//   recq demo [--model=v1|v2] [--resolution=224] [--runs=5] [--backend=auto] [--device=...]
//   recq run MODEL.onnx|MODEL.recq [--runs=N] [--input=...] [--output=...] [--profile]
//            [--input-format=nv12:1280x720,...] [--output-format=NAME=f16:nhwc]
//   recq bench MODEL.onnx [--devices=0,1|all] [--streams=N] [--warmup=S]
//                         [--duration=S | --iterations=N] [--json=FILE] [--profile]
//                         [--input-format=...] [--output-format=...]
//   recq bench MODEL.onnx --generate [generate's flags] [--warmup=S]
//                         [--duration=S | --iterations=N]
//   recq devices
//   recq info MODEL.onnx|MODEL.recq [--input-format=...]
//   recq build MODEL.onnx -o MODEL.recq [--shapes=NAME:DxD...]
//   recq run|bench MODEL.onnx --shapes=NAME:1x1..512/pow2 [--pad=NAME:0,...] [--exact]
//   recq export-mobilenet OUT.onnx
//   recq tune MODEL.onnx [--exhaustive]
//   recq generate MODEL.onnx [--prompt-ids=1,2,3] [--max-new-tokens=N] [--max-length=L]
//                 [--sampling=greedy|top_k=K,...] [--chunk=K] [--logits=FILE] [--json=FILE|-]
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/flags/marshalling.h"

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/str_cat.h"
#include "recq/log.h"
#include "tools/bench_command.h"
#include "tools/binary_store.h"
#include "tools/commands.h"
#include "tools/generate_command.h"
#include "tools/models/mobilenet_onnx.h"
#include "tools/onnx_commands.h"
#include "tools/shaped_commands.h"
#include "tools/status_line.h"
#include "tools/write_file.h"

ABSL_FLAG(std::string, device, "",
          "OpenCL device, as `recq devices` lists them: gpu:N, cpu:N, P:D (platform:device), or "
          "a substring of the device or platform name (default: $RECQ_DEVICE, else the first "
          "GPU, else the first CPU)");
ABSL_FLAG(std::string, backend, "auto",
          "recording backend: auto, replay, khr_command_buffer, qcom");
ABSL_FLAG(std::string, model, "v1", "demo: MobileNet v1 or v2");
ABSL_FLAG(int64_t, resolution, 224, "demo: input height and width (a multiple of 32)");
ABSL_FLAG(
    int, runs, 0,
    "demo: replays, each with its own input buffer (default 5); run: timed runs (default 10)");
ABSL_FLAG(std::vector<std::string>, input, {},
          "run: NAME=FILE inputs, comma-separated: raw little-endian elements of the input's type, "
          "or a PNG / JPEG photo (decoded, then pre-processed: see --input-format); random if "
          "absent");
ABSL_FLAG(std::string, shapes, "",
          "run, info, bench, build: input shapes chosen at load for symbolic dimensions, like "
          "trtexec's --shapes: NAME:DxDx...[,NAME:...], e.g. input:4x3x224x224; run and bench "
          "also take ranges served by one engine in buckets: MIN..MAX (every size), "
          "MIN..MAX/pow2, MIN..MAX/mulN or {B1,B2,...}, e.g. input_ids:1x1..512/pow2 "
          "(docs/shapes.md); build with ranges stores every bucket in the engine file");
ABSL_FLAG(
    std::string, pad, "",
    "run, bench, build with a --shapes range: NAME:VALUE,... the inputs padded up to their bucket "
    "and the value of the padded positions, e.g. input_ids:0,attention_mask:0 (without it "
    "every size is compiled as its own bucket; docs/shapes.md)");
ABSL_FLAG(bool, exact, false,
          "bench with a --shapes range: also compile an engine for each bucket's shape alone and "
          "measure both in alternating rounds");
ABSL_FLAG(std::string, input_format, "",
          "run, bench, info (also spelled --input-format): camera frames in, preprocessed "
          "inside the recording: [NAME=]COLOR[:WxH][,key=value"
          "...] (NAME may be left out for a model of one input; several inputs separated by ';'). "
          "COLOR: rgb, bgr, rgbx, bgrx, gray, nv12 (an --input file holds Y then UV, bound as "
          "NAME/y and NAME/uv), nv12_1plane. WxH: the frame's size, resized bilinearly to the "
          "model's (default: the model's). Keys: type=u8|f16|f32 (default u8), layout=nhwc|nchw "
          "(default nhwc), mean=a/b/c and scale=a/b/c ((v - mean) / scale per model channel, v "
          "on the 0..255 scale), model=rgb|bgr (the model's channel order, default rgb), "
          "uv_offset=BYTES (nv12_1plane). Example: "
          "--input=input=frame.nv12 --input-format=nv12:1280x720,mean=123.7/116.3/103.5,"
          "scale=58.4/57.1/57.4. A .png/.jpg/.jpeg --input is decoded to u8 RGB NHWC and goes "
          "through this pre-processing (rgb of the image's size unless given; bench: buffer "
          "kinds only)");
ABSL_FLAG(std::vector<std::string>, output_format, {},
          "run, bench (also spelled --output-format): NAME=TYPE[:LAYOUT] outputs converted inside "
          "the "
          "recording, comma-separated: TYPE "
          "f32 or f16, LAYOUT nchw or nhwc (4-D outputs), e.g. y=f16:nhwc");
ABSL_FLAG(
    std::string, precision, "",
    "run, bench, build: fp32 (the default for ONNX models), fp16 (weights and activations stored "
    "as half, float arithmetic; inputs and outputs keep their types), fp16-compute "
    "(needs cl_khr_fp16) or tf32 (products on matrix units take one tf32 product, as "
    "PyTorch's allow_tf32; on CPUs, 3x3 convolutions take Winograd F(4x4, 3x3)); for an "
    "engine file, the precision it was built with");
ABSL_FLAG(bool, profile, false,
          "run: print per-kernel device times of one op-by-op run; bench: per-dispatch device "
          "times (mean of 10 op-by-op runs) printed and in --json");
ABSL_FLAG(std::vector<std::string>, output, {},
          "run: NAME=FILE.f32 outputs to write after the last run, comma-separated");
ABSL_FLAG(int, timing_runs, 20, "demo: runs per path for the recorded vs unrecorded medians");
ABSL_FLAG(std::string, devices, "",
          "bench: devices to spread the streams over: 'all' (every GPU, else every CPU), indices "
          "of that type (0,1), or device specs (gpu:1,cpu:0, P:D); a device named twice counts "
          "as two (default: the one --device picks)");
ABSL_FLAG(int, streams, 1,
          "bench: recordings per device, each on its own in-order queue, run concurrently");
ABSL_FLAG(std::string, stream_mode, "threads",
          "bench: threads (one host thread per stream) or events (one host thread waits on each "
          "stream's completion event in turn)");
ABSL_FLAG(bool, generate, false,
          "bench: time generations of a decoder with past key/values (generate's flags: "
          "--prompt-ids, --max-new-tokens, --sampling...) for --duration seconds or "
          "--iterations generations, after --warmup seconds of them");
ABSL_FLAG(double, warmup, 1.0, "bench: seconds of untimed runs before measuring");
ABSL_FLAG(double, duration, 3.0, "bench: seconds to measure (ignored with --iterations)");
ABSL_FLAG(int64_t, iterations, 0,
          "bench: measure exactly this many inferences over all streams instead of --duration");
ABSL_FLAG(bool, exhaustive, false,
          "tune: time every candidate of every key instead of kFast's few (no time budget)");
ABSL_FLAG(bool, fusion, true,
          "run, bench, build, tune: merge chains of element-wise ops into one kernel each; "
          "--no-fusion (or $RECQ_FUSION=off) compiles without it");
ABSL_FLAG(std::string, o, "", "build: the engine file to write (MODEL.recq)");
ABSL_FLAG(std::string, tuning, "",
          "build: exhaustive (the default, as trtexec tunes every build), fast or off");
ABSL_FLAG(std::string, json, "",
          "bench: write the full report (device, driver, options, every statistic) as JSON here");

namespace {

absl::Status ExportMobileNet(const std::string& model, int64_t resolution,
                             const std::string& path) {
  recq::models::MobileNetOptions options;
  options.resolution = resolution;
  absl::StatusOr<std::string> bytes = model == "v1" ? recq::models::MobileNetV1OnnxBytes(options)
                                      : model == "v2"
                                          ? recq::models::MobileNetV2OnnxBytes(options)
                                          : absl::InvalidArgumentError("--model must be v1 or v2");
  if (!bytes.ok()) return bytes.status();
  if (absl::Status s = recq::tools::WriteFile(path, *bytes); !s.ok()) return s;
  std::printf("wrote MobileNet %s (%lldx%lld) to %s, %zu bytes\n", model.c_str(),
              static_cast<long long>(resolution), static_cast<long long>(resolution), path.c_str(),
              bytes->size());
  return absl::OkStatus();
}

// FlagFile shows where a flag is defined without the build machine's paths:
// "tools/recq_main.cc", "absl/flags/parse.cc".
std::string FlagFile(absl::string_view path) {
  for (absl::string_view root : {"/absl/", "/tools/"}) {
    size_t at = path.rfind(root);
    if (at != absl::string_view::npos) return std::string(path.substr(at + 1));
  }
  size_t slash = path.rfind('/');
  return std::string(slash == absl::string_view::npos ? path : path.substr(slash + 1));
}

}  // namespace

int main(int argc, char** argv) {
  absl::FlagsUsageConfig usage_config;
  usage_config.normalize_filename = FlagFile;
  absl::SetFlagsUsageConfig(usage_config);
  absl::SetProgramUsageMessage(
      "record an ML graph's OpenCL dispatches once, replay them many times.\n"
      "  recq demo             MobileNet built with the C++ API: record once, replay with new "
      "inputs\n"
      "  recq run MODEL.onnx   load, record once, run N times, print latency statistics\n"
      "  recq bench MODEL.onnx throughput and latency percentiles over devices x streams "
      "(--devices, --streams, --warmup, --duration or --iterations, --json, --profile; "
      "--generate: generations of a decoder with past key/values)\n"
      "  recq devices          OpenCL platforms and devices, with the indices --device takes\n"
      "  recq info MODEL.onnx  inputs, outputs, shapes, op counts, unsupported ops (an engine "
      "file: bindings, device, options, dispatches)\n"
      "  recq build MODEL.onnx -o MODEL.recq  compile once and save an engine file that run, "
      "info and LoadEngine accept\n"
      "  recq tune MODEL.onnx  auto-tune the model's kernels into the tuning cache "
      "(--exhaustive); $RECQ_TUNING=off|fast|exhaustive sets every compile's tuning\n"
      "  recq export-mobilenet OUT.onnx  write the demo's MobileNet (--model, --resolution) as "
      "ONNX\n"
      "  recq generate MODEL.onnx  decode with a decoder exported with past key/values "
      "(--prompt-ids, --max-new-tokens, --max-length, --sampling, --chunk, --prefill, "
      "--prefill-buckets, --logits, --json)");
  // --input-format, --output-format and generate's --prompt-ids... (the
  // spelling the docs use) are the flags input_format, output_format,
  // prompt_ids...
  std::vector<std::string> spelled(argv, argv + argc);
  std::vector<char*> argv_fixed;
  for (std::string& a : spelled) {
    if (a == "--no-fusion") a = "--nofusion";
    for (const char* dashed :
         {"--input-format", "--output-format", "--prompt-ids", "--prompt-len", "--max-new-tokens",
          "--max-length", "--eos-id", "--profile-step", "--prefill-buckets"}) {
      const std::string d = dashed;
      if (a.compare(0, d.size(), d) == 0 && (a.size() == d.size() || a[d.size()] == '=')) {
        for (size_t i = d.find('-', 2); i != std::string::npos; i = d.find('-', i + 1)) a[i] = '_';
      }
    }
    argv_fixed.push_back(a.data());
  }
  std::vector<char*> args = absl::ParseCommandLine(argc, argv_fixed.data());
  recq::tools::EnableBuildHelpers();
  if (args.size() < 2) {
    std::fprintf(stderr, "%s\n", std::string(absl::ProgramUsageMessage()).c_str());
    return 2;
  }
  std::string command = args[1];
  // Every Compile of the process reads it (EngineOptions::fuse_elementwise).
  if (!absl::GetFlag(FLAGS_fusion)) setenv("RECQ_FUSION", "off", 1);
  // An engine file stores each program of the kernel library apart: `build`
  // compiles them apart from the start, instead of merging them (PoCL,
  // engine/program_merge.h) and compiling again to write the file.
  if (command == "build") setenv("RECQ_MERGE_PROGRAMS", "off", 1);
  // Progress (compiles, warm-up, measuring) on one rewritten line, only when
  // stderr is a terminal.
  recq::tools::StatusLine status_line(recq::tools::StderrIsTerminal());
  recq::tools::InstallStatusLineLogSink(&status_line);
  recq::tools::CommonOptions common{absl::GetFlag(FLAGS_device), absl::GetFlag(FLAGS_backend)};
  absl::Status status;
  if (command == "demo") {
    int runs = absl::GetFlag(FLAGS_runs);
    recq::tools::DemoOptions demo{absl::GetFlag(FLAGS_model), absl::GetFlag(FLAGS_resolution),
                                  runs > 0 ? runs : 5, absl::GetFlag(FLAGS_timing_runs)};
    status = recq::tools::RunDemo(common, demo);
  } else if (command == "devices") {
    status = recq::tools::DevicesCommand();
  } else if ((command == "run" || command == "bench" || command == "info" ||
              command == "export-mobilenet" || command == "build" || command == "tune" ||
              command == "generate") &&
             args.size() != 3) {
    status = absl::InvalidArgumentError(absl::StrCat("usage: recq ", command, " MODEL.onnx"));
  } else if (command == "run" && recq::tools::IsRangeProfile(absl::GetFlag(FLAGS_shapes))) {
    recq::tools::ShapedRunOptions run;
    run.model_path = args[2];
    run.shapes = absl::GetFlag(FLAGS_shapes);
    run.pad = absl::GetFlag(FLAGS_pad);
    run.inputs = absl::GetFlag(FLAGS_input);
    run.outputs = absl::GetFlag(FLAGS_output);
    int runs = absl::GetFlag(FLAGS_runs);
    run.runs = runs > 0 ? runs : 10;
    run.backend = common.backend;
    run.device = common.device;
    run.finish_binary_cache = [&common](const recq::Context& context) {
      recq::tools::StoreBinariesAfterExit(context, common.device);
    };
    status = recq::tools::ShapedRunCommand(run);
  } else if (command == "bench" && recq::tools::IsRangeProfile(absl::GetFlag(FLAGS_shapes))) {
    recq::tools::ShapedBenchOptions bench;
    bench.model_path = args[2];
    bench.shapes = absl::GetFlag(FLAGS_shapes);
    bench.pad = absl::GetFlag(FLAGS_pad);
    bench.backend = common.backend;
    bench.device = common.device;
    bench.warmup_s = absl::GetFlag(FLAGS_warmup);
    bench.duration_s = absl::GetFlag(FLAGS_duration);
    bench.iterations = absl::GetFlag(FLAGS_iterations);
    bench.exact = absl::GetFlag(FLAGS_exact);
    bench.json_path = absl::GetFlag(FLAGS_json);
    status = recq::tools::ShapedBenchCommand(bench);
  } else if (command == "run") {
    recq::tools::RunModelOptions run;
    run.model_path = args[2];
    run.inputs = absl::GetFlag(FLAGS_input);
    run.outputs = absl::GetFlag(FLAGS_output);
    int runs = absl::GetFlag(FLAGS_runs);
    run.runs = runs > 0 ? runs : 10;
    run.backend = common.backend;
    run.device = common.device;
    run.profile = absl::GetFlag(FLAGS_profile);
    run.shapes = absl::GetFlag(FLAGS_shapes);
    run.input_format = absl::GetFlag(FLAGS_input_format);
    run.output_format = absl::GetFlag(FLAGS_output_format);
    run.precision = absl::GetFlag(FLAGS_precision);
    run.finish_binary_cache = [&common](const recq::Context& context) {
      recq::tools::StoreBinariesAfterExit(context, common.device);
    };
    status = recq::tools::RunModelCommand(run);
  } else if (command == "bench" && absl::GetFlag(FLAGS_generate)) {
    recq::tools::GenerateTiming timing;
    timing.bench = true;
    timing.warmup_s = absl::GetFlag(FLAGS_warmup);
    timing.duration_s = absl::GetFlag(FLAGS_duration);
    timing.iterations = absl::GetFlag(FLAGS_iterations);
    status = recq::tools::GenerateCommand(args[2], common.device, common.backend,
                                          absl::GetFlag(FLAGS_json), timing);
  } else if (command == "bench") {
    recq::tools::BenchOptions bench;
    bench.model_path = args[2];
    bench.devices = absl::GetFlag(FLAGS_devices);
    bench.device = common.device;
    bench.backend = common.backend;
    bench.streams = absl::GetFlag(FLAGS_streams);
    bench.stream_mode = absl::GetFlag(FLAGS_stream_mode);
    bench.warmup_s = absl::GetFlag(FLAGS_warmup);
    bench.duration_s = absl::GetFlag(FLAGS_duration);
    bench.iterations = absl::GetFlag(FLAGS_iterations);
    bench.json_path = absl::GetFlag(FLAGS_json);
    bench.profile = absl::GetFlag(FLAGS_profile);
    bench.shapes = absl::GetFlag(FLAGS_shapes);
    bench.precision = absl::GetFlag(FLAGS_precision);
    bench.input_format = absl::GetFlag(FLAGS_input_format);
    bench.output_format = absl::GetFlag(FLAGS_output_format);
    bench.status_line = &status_line;
    status = recq::tools::BenchCommand(bench);
  } else if (command == "export-mobilenet") {
    status = ExportMobileNet(absl::GetFlag(FLAGS_model), absl::GetFlag(FLAGS_resolution), args[2]);
  } else if (command == "build" && recq::tools::IsRangeProfile(absl::GetFlag(FLAGS_shapes))) {
    status = recq::tools::ShapedBuildCommand(
        args[2], absl::GetFlag(FLAGS_o), absl::GetFlag(FLAGS_shapes), absl::GetFlag(FLAGS_pad),
        common.device, absl::GetFlag(FLAGS_precision), absl::GetFlag(FLAGS_tuning));
  } else if (command == "build") {
    status = recq::tools::BuildEngineCommand(
        args[2], absl::GetFlag(FLAGS_o), common.device, absl::GetFlag(FLAGS_precision),
        absl::GetFlag(FLAGS_shapes), absl::GetFlag(FLAGS_tuning));
  } else if (command == "tune") {
    status = recq::tools::TuneModelCommand(args[2], absl::GetFlag(FLAGS_exhaustive), common.device,
                                           absl::GetFlag(FLAGS_shapes));
  } else if (command == "generate") {
    status = recq::tools::GenerateCommand(args[2], common.device, common.backend,
                                          absl::GetFlag(FLAGS_json));
  } else if (command == "store-binaries" && args.size() == 3) {
    status = recq::tools::StoreBinariesCommand(args[2], common.device);
  } else if (command == "build-helper" && args.size() == 3) {
    status = recq::tools::BuildHelperCommand(args[2], common.device);
  } else if (command == "info") {
    status = recq::tools::InfoModelCommand(args[2], absl::GetFlag(FLAGS_shapes),
                                           absl::GetFlag(FLAGS_input_format));
  } else {
    status = absl::InvalidArgumentError(absl::StrCat("unknown command '", command, "'"));
  }
  recq::SetLogSink({});
  status_line.Clear();
  if (!status.ok()) {
    std::fprintf(stderr, "recq %s: %s\n", command.c_str(), status.ToString().c_str());
    return 1;
  }
  return 0;
}
