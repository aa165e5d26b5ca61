#include "tools/generate_command.h"
#include "tools/binary_store.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "recq/generator.h"
#include "recq/recq.h"
#include "recq/shape_profile.h"
#include "recq/status_macros.h"
#include "tools/json_writer.h"
#include "tools/latency_stats.h"
#include "tools/write_file.h"

ABSL_FLAG(std::string, prompt_ids, "",
          "generate (also spelled --prompt-ids): the prompt's token ids, comma-separated "
          "(default: --prompt-len ids drawn with a fixed seed)");
ABSL_FLAG(int64_t, prompt_len, 16, "generate: prompt length when --prompt-ids is not given");
ABSL_FLAG(int64_t, max_new_tokens, 32, "generate (also --max-new-tokens): tokens to generate");
ABSL_FLAG(int64_t, max_length, 0,
          "generate (also --max-length): KV cache rows, the longest sequence (default: prompt + "
          "max_new_tokens)");
ABSL_FLAG(std::string, sampling, "greedy",
          "generate: greedy, or top_k=K[,temperature=T][,seed=S], or top_p=P[,...]");
ABSL_FLAG(int64_t, eos_id, -1, "generate (also --eos-id): end-of-sequence id (-1: none)");
ABSL_FLAG(int64_t, chunk, 16, "generate: decode steps enqueued between host reads");
ABSL_FLAG(bool, profile_step, false,
          "generate (also --profile-step): after the generations, time one step op by op and "
          "print the device time per kernel variant, most first");
ABSL_FLAG(std::string, prefill, "bucketed",
          "generate: how the prompt is processed: bucketed (prefill steps of several tokens, "
          "--prefill-buckets) or tokens (one decode step per token)");
ABSL_FLAG(std::string, prefill_buckets, "",
          "generate (also --prefill-buckets): the prefill steps' sizes, comma-separated, or a "
          "range in --shapes' syntax (2..64/pow2, 16..128/mul16) (default: powers of two from 2 "
          "up to the first one >= prompt - 1, at most 64)");
ABSL_FLAG(int, repeat, 3,
          "generate: timed generations after one warm-up; medians and percentiles over all");
ABSL_FLAG(std::string, logits, "",
          "generate, bench --generate: after the timed generations, generate once more reading "
          "the logits after every step, and write them to this file as raw little-endian "
          "float32 [rows, vocab]: one row per decode step, the first the prompt's last token's "
          "(with --prefill=tokens, one per prompt token from the first)");

namespace recq::tools {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return Percentile(v, 50);
}

// WriteLogits writes the rows of `logits` back to back as float32.
absl::Status WriteLogits(const std::string& path, const std::vector<std::vector<float>>& logits) {
  std::vector<float> all;
  for (const std::vector<float>& row : logits) all.insert(all.end(), row.begin(), row.end());
  return WriteFile(path, absl::string_view(reinterpret_cast<const char*>(all.data()),
                                           all.size() * sizeof(float)));
}

}  // namespace

absl::Status GenerateCommand(const std::string& model_path, const std::string& device,
                             const std::string& backend, const std::string& json_path,
                             const GenerateTiming& timing) {
  std::vector<int64_t> prompt;
  const std::string ids_text = absl::GetFlag(FLAGS_prompt_ids);
  for (absl::string_view part : absl::StrSplit(ids_text, ',', absl::SkipEmpty())) {
    int64_t id = 0;
    if (!absl::SimpleAtoi(part, &id)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--prompt-ids: '", part, "' is not an integer id"));
    }
    prompt.push_back(id);
  }
  const int64_t max_new = absl::GetFlag(FLAGS_max_new_tokens);
  const int64_t prompt_len =
      prompt.empty() ? absl::GetFlag(FLAGS_prompt_len) : static_cast<int64_t>(prompt.size());
  int64_t max_length = absl::GetFlag(FLAGS_max_length);
  if (max_length == 0) max_length = prompt_len + max_new;
  RECQ_ASSIGN_OR_RETURN(SamplingOptions sampling, ParseSampling(absl::GetFlag(FLAGS_sampling)));
  const int repeat = std::max(1, absl::GetFlag(FLAGS_repeat));
  const std::string prefill_mode = absl::GetFlag(FLAGS_prefill);
  if (prefill_mode != "bucketed" && prefill_mode != "tokens") {
    return absl::InvalidArgumentError(
        absl::StrCat("--prefill: '", prefill_mode, "'; expected bucketed or tokens"));
  }
  std::vector<int64_t> buckets;
  if (prefill_mode == "bucketed") {
    const std::string text = absl::GetFlag(FLAGS_prefill_buckets);
    std::vector<std::string> parts = absl::StrSplit(text, ',', absl::SkipEmpty());
    if (absl::StrContains(text, "..")) {
      // A range: the shape profiles' rules (recq/shape_profile.h).
      absl::StatusOr<ShapeProfiles> p = ParseShapeProfiles(absl::StrCat("tokens:", text));
      if (!p.ok() || p->at("tokens").size() != 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--prefill-buckets: '", text, "' is not a list or a range such as 2..64/pow2",
            p.ok() ? "" : absl::StrCat(" (", p.status().message(), ")")));
      }
      parts.clear();
      for (int64_t b : p->at("tokens")[0].Buckets()) {
        if (b > 1) parts.push_back(absl::StrCat(b));  // 1 is the decode step
      }
    }
    for (absl::string_view part : parts) {
      int64_t b = 0;
      if (!absl::SimpleAtoi(part, &b) || b < 2 || b >= max_length) {
        return absl::InvalidArgumentError(
            absl::StrCat("--prefill-buckets: '", part, "'; expected sizes in 2..", max_length - 1));
      }
      buckets.push_back(b);
    }
    if (text.empty()) {
      for (int64_t b : PrefillBuckets(prompt_len - 1)) {
        if (b < max_length) buckets.push_back(b);
      }
    }
  }

  ContextOptions context_options;
  context_options.device = device;
  RECQ_ASSIGN_OR_RETURN(Context context, Context::Create(context_options));
  UseBuildHelpers(context, context_options.device);
  const Clock::time_point start = Clock::now();
  GeneratorOptions options;
  options.max_length = max_length;
  options.sampling = sampling;
  options.prefill_buckets = buckets;
  RECQ_ASSIGN_OR_RETURN(options.record.backend, ParseBackend(backend));
  RECQ_ASSIGN_OR_RETURN(Generator gen, Generator::Load(context, model_path, options));
  const double setup_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  if (prompt.empty()) {
    std::mt19937_64 rng(1234);
    for (int64_t i = 0; i < prompt_len; ++i) prompt.push_back(int64_t(rng() % gen.vocab()));
  }

  GenerateOptions g;
  g.max_new_tokens = max_new;
  g.eos_id = absl::GetFlag(FLAGS_eos_id);
  g.chunk = absl::GetFlag(FLAGS_chunk);
  g.prefill = prefill_mode == "tokens" ? GenerateOptions::Prefill::kTokens
                                       : GenerateOptions::Prefill::kBucketed;
  // Warm-up: one generation, or generations for timing.warmup_s seconds.
  const Clock::time_point warm_start = Clock::now();
  do {
    RECQ_RETURN_IF_ERROR(gen.Generate(prompt, g).status());
  } while (timing.bench && Seconds(Clock::now() - warm_start) < timing.warmup_s);
  std::vector<double> prefill_tps, decode_tps, token_ms;
  GenerateResult last;
  const Clock::time_point timed_start = Clock::now();
  int generations = 0;
  auto more = [&] {
    if (!timing.bench) return generations < repeat;
    if (timing.iterations > 0) return generations < timing.iterations;
    return generations == 0 || Seconds(Clock::now() - timed_start) < timing.duration_s;
  };
  for (; more(); ++generations) {
    RECQ_ASSIGN_OR_RETURN(last, gen.Generate(prompt, g));
    prefill_tps.push_back(double(last.prompt_tokens) / (last.prefill_ms / 1e3));
    const int64_t decoded = static_cast<int64_t>(last.tokens.size()) - 1;
    if (decoded > 0) decode_tps.push_back(double(decoded) / (last.decode_ms / 1e3));
    token_ms.insert(token_ms.end(), last.token_ms.begin(), last.token_ms.end());
  }
  const double timed_s = Seconds(Clock::now() - timed_start);
  const LatencyStats lat = Summarize(token_ms);
  GenerateResult with_logits;
  const std::string logits_path = absl::GetFlag(FLAGS_logits);
  if (!logits_path.empty()) {
    GenerateOptions keep = g;
    keep.keep_logits = true;
    RECQ_ASSIGN_OR_RETURN(with_logits, gen.Generate(prompt, keep));
    if (with_logits.tokens != last.tokens) {
      return absl::InternalError(
          absl::StrCat("--logits: the generation that kept its logits gave other ids (",
                       absl::StrJoin(with_logits.tokens, ","), ") than the timed ones (",
                       absl::StrJoin(last.tokens, ","), ")"));
    }
    RECQ_RETURN_IF_ERROR(WriteLogits(logits_path, with_logits.logits));
  }
  const DeviceInfo& info = context.device_info();
  const double prefill = Median(prefill_tps);
  const double decode = decode_tps.empty() ? 0 : Median(decode_tps);

  std::printf("model: %s (max_length %lld, vocab %lld)\n", model_path.c_str(),
              static_cast<long long>(max_length), static_cast<long long>(gen.vocab()));
  std::printf("device: %s; backend: %s (%s); %zu dispatches per step; setup %.0f ms\n",
              info.name.c_str(), BackendName(gen.recording().backend()),
              gen.recording().backend_reason().c_str(), gen.recording().dispatch_count(), setup_ms);
  std::printf("sampling: %s; chunk %lld\n", SamplingName(sampling).c_str(),
              static_cast<long long>(g.chunk));
  std::printf("prefill: %s\n",
              buckets.empty()
                  ? "token by token (one decode step per prompt token)"
                  : absl::StrCat("bucketed, steps of ", absl::StrJoin(buckets, ","), " tokens; ",
                                 last.prefill_replays, " replays for ", last.prefill_batched_tokens,
                                 " tokens, then the last prompt token's decode step")
                        .c_str());
  std::vector<std::string> step_sizes;
  for (int64_t b : gen.prefill_buckets()) {
    step_sizes.push_back(absl::StrCat(b, " tokens: ", gen.prefill_recording(b)->dispatch_count()));
  }
  if (!step_sizes.empty()) {
    std::printf("prefill dispatches per replay: %s\n", absl::StrJoin(step_sizes, "; ").c_str());
  }
  std::printf("prompt (%lld): %s\n", static_cast<long long>(prompt.size()),
              absl::StrJoin(prompt, ",").c_str());
  std::printf("ids (%zu): %s\n", last.tokens.size(), absl::StrJoin(last.tokens, ",").c_str());
  std::printf("stop: %s (%s)\n", StopReasonName(last.stop), last.stop_detail.c_str());
  std::printf("prefill: %.1f tokens/s; decode: %.1f tokens/s (medians of %d generations)\n",
              prefill, decode, generations);
  std::printf("per-token decode latency: p50 %.3f ms, p99 %.3f ms (chunk time / steps)\n", lat.p50,
              lat.p99);
  const double generated_per_s =
      double(generations) * double(last.tokens.size()) / std::max(timed_s, 1e-9);
  if (timing.bench) {
    std::printf(
        "measured: %d generations in %.2f s; end to end %.2f generations/s, %.1f "
        "generated tokens/s\n",
        generations, timed_s, generations / std::max(timed_s, 1e-9), generated_per_s);
  }
  if (!logits_path.empty()) {
    std::printf("logits: %zu rows x %lld written to %s\n", with_logits.logits.size(),
                static_cast<long long>(gen.vocab()), logits_path.c_str());
  }
  std::printf(
      "KV cache: %.2f MiB; intermediates %.2f MiB; weights %.2f MiB (all steps: %.2f MiB)\n",
      gen.kv_cache_bytes() / 1048576.0, gen.engine().stats().intermediate_bytes / 1048576.0,
      gen.engine().stats().weight_bytes / 1048576.0, gen.weight_bytes() / 1048576.0);

  if (absl::GetFlag(FLAGS_profile_step)) {
    RECQ_ASSIGN_OR_RETURN(std::vector<DispatchProfile> profile, gen.ProfileStep());
    // By variant: the label's part after the node name.
    std::map<std::string, std::pair<double, int>> by_variant;
    double total = 0;
    for (const DispatchProfile& d : profile) {
      const size_t slash = d.label.rfind('/');
      auto& e = by_variant[slash == std::string::npos ? d.label : d.label.substr(slash + 1)];
      e.first += d.device_ms;
      e.second += 1;
      total += d.device_ms;
    }
    std::vector<std::pair<double, std::string>> rows;
    for (const auto& [name, e] : by_variant) {
      rows.push_back({e.first, absl::StrCat(name, " x", e.second)});
    }
    std::sort(rows.rbegin(), rows.rend());
    std::printf("one step op by op: %zu dispatches, %.3f ms of device time\n", profile.size(),
                total);
    for (const auto& [ms, name] : rows) std::printf("  %9.3f ms  %s\n", ms, name.c_str());
  }

  if (!json_path.empty()) {
    JsonWriter j;
    j.BeginObject();
    j.Key("model");
    j.String(model_path);
    j.Key("device");
    j.String(info.name);
    j.Key("driver");
    j.String(info.driver_version);
    j.Key("backend");
    j.String(BackendName(gen.recording().backend()));
    j.Key("dispatches_per_step");
    j.Int(static_cast<int64_t>(gen.recording().dispatch_count()));
    j.Key("max_length");
    j.Int(max_length);
    j.Key("sampling");
    j.String(SamplingName(sampling));
    j.Key("chunk");
    j.Int(g.chunk);
    j.Key("prompt");
    j.BeginArray();
    for (int64_t id : prompt) j.Int(id);
    j.EndArray();
    j.Key("ids");
    j.BeginArray();
    for (int64_t id : last.tokens) j.Int(id);
    j.EndArray();
    j.Key("stop");
    j.String(StopReasonName(last.stop));
    j.Key("mode");
    j.String(timing.bench ? "bench" : "generate");
    j.Key("timed_s");
    j.Number(timed_s);
    j.Key("generated_tokens_per_s_end_to_end");
    j.Number(generated_per_s);
    if (!logits_path.empty()) {
      j.Key("logits_file");
      j.String(logits_path);
      j.Key("logits_rows");
      j.Int(static_cast<int64_t>(with_logits.logits.size()));
      j.Key("vocab");
      j.Int(gen.vocab());
    }
    j.Key("generations");
    j.Int(generations);
    j.Key("prefill");
    j.String(prefill_mode);
    j.Key("prefill_buckets");
    j.BeginArray();
    for (int64_t b : buckets) j.Int(b);
    j.EndArray();
    j.Key("prefill_dispatches");
    j.BeginArray();
    for (int64_t b : gen.prefill_buckets()) {
      j.Int(static_cast<int64_t>(gen.prefill_recording(b)->dispatch_count()));
    }
    j.EndArray();
    j.Key("prefill_replays");
    j.Int(last.prefill_replays);
    j.Key("prefill_tokens_per_s");
    j.Number(prefill);
    j.Key("decode_tokens_per_s");
    j.Number(decode);
    j.Key("token_ms_p50");
    j.Number(lat.p50);
    j.Key("token_ms_p99");
    j.Number(lat.p99);
    j.Key("kv_cache_bytes");
    j.Int(gen.kv_cache_bytes());
    j.Key("weight_bytes_all_steps");
    j.Int(gen.weight_bytes());
    j.Key("intermediate_bytes");
    j.Int(static_cast<int64_t>(gen.engine().stats().intermediate_bytes));
    j.EndObject();
    if (json_path == "-") {
      std::printf("%s\n", j.str().c_str());
    } else {
      RECQ_RETURN_IF_ERROR(WriteFile(json_path, absl::StrCat(j.str(), "\n")));
    }
  }
  return absl::OkStatus();
}

}  // namespace recq::tools
