#!/usr/bin/env bash
# The recq CLI as a user sees it:
#   cli_test.sh RECQ_BINARY SOURCE_DIR BUILD_DIR
# --help names no build path; `recq devices` lists indices; `recq bench`
# writes a JSON report with every statistic; `recq demo` checks its replays;
# bad flags fail with a message.
set -euo pipefail
recq=$1 src=$2 build=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$recq" --help >"$tmp/help.txt" 2>&1 || true
grep -q "Flags from tools/recq_main.cc" "$tmp/help.txt" || fail "--help lacks 'Flags from tools/recq_main.cc'"
for flag in --devices --streams --warmup --duration --iterations --json --backend --profile; do
  grep -q -- "$flag " "$tmp/help.txt" || fail "--help lacks $flag"
done
"$recq" --helpfull >>"$tmp/help.txt" 2>&1 || true
if grep -F -e "$src" -e "$build" "$tmp/help.txt"; then fail "--help shows a build path"; fi
if grep -E '/(build|work|home|tmp)/' "$tmp/help.txt"; then fail "--help shows an absolute path"; fi

"$recq" devices >"$tmp/devices.txt"
grep -Eq '^  0:0 +(cpu|gpu|accelerator):0 ' "$tmp/devices.txt" || fail "recq devices: no 0:0 line"
grep -q 'recording: ' "$tmp/devices.txt" || fail "recq devices: no recording extensions line"
grep -Eq 'device: .+, vendor [a-z]+, (cpu|gpu) kernels, [0-9]+ KiB local memory' "$tmp/devices.txt" ||
  fail "recq devices: no parsed device facts line"

"$recq" export-mobilenet --model=v2 --resolution=32 "$tmp/m.onnx" >/dev/null
"$recq" bench "$tmp/m.onnx" --devices=0,0 --streams=2 --warmup=0.1 --iterations=16 \
  --json="$tmp/report.json" >"$tmp/bench.txt" 2>"$tmp/bench.err"
cat "$tmp/bench.txt"
# Not a terminal: no progress line on stderr.
if grep -q $'\r' "$tmp/bench.err"; then fail "progress written to a non-terminal"; fi
python3 - "$tmp/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
lat = r["latency_ms"]
assert r["inferences"] == 16 and lat["count"] == 16, r
assert 0 < lat["min"] <= lat["p50"] <= lat["p90"] <= lat["p95"] <= lat["p99"] <= lat["max"], lat
assert lat["min"] <= lat["mean"] <= lat["max"], lat
assert r["throughput_per_s"] > 0 and r["streams_total"] == 4, r
assert len(r["devices"]) == 2 and all(d["driver"] and d["backend"] for d in r["devices"]), r
assert sum(d["inferences"] for d in r["devices"]) == 16, r
assert r["options"]["streams"] == 2 and r["options"]["iterations"] == 16, r
print("report ok:", lat)
PY

# The demo checks every replay against an unrecorded run of the same input.
"$recq" demo --model=v2 --resolution=32 --runs=2 --timing_runs=2 >"$tmp/demo.txt"
grep -q "2/2 replays bit-identical to an unrecorded run" "$tmp/demo.txt" || fail "recq demo: $(cat "$tmp/demo.txt")"

grep -q "time to first result: " "$tmp/demo.txt" || fail "recq demo: no time to first result"

# Engine files: build, info, run (same outputs as from the ONNX file), and a
# damaged file is a clear error. Both compiles run the heuristics' kernels:
# bit-for-bit equal outputs need the same kernels, and a tuned build takes
# whatever the shared tuning cache holds (other tests write it meanwhile)
# or its own timings, which the ONNX run need not repeat.
"$recq" build "$tmp/m.onnx" -o "$tmp/m.recq" --tuning=off >"$tmp/build.txt" 2>"$tmp/build.err"
grep -q "built $tmp/m.recq" "$tmp/build.txt" || fail "recq build: $(cat "$tmp/build.txt")"
grep -q "not tuning" "$tmp/build.err" || fail "recq build --tuning=off: $(cat "$tmp/build.err")"
"$recq" info "$tmp/m.recq" >"$tmp/info.txt"
for want in "format version 2" "built for: " "driver " "options: optimize on" "inputs:" \
  "  input: 1x3x32x32 float32" "prob: 1x1000 float32" "/conv2d_"; do
  grep -qF -- "$want" "$tmp/info.txt" || fail "recq info (engine file) lacks '$want'"
done
python3 -c "import random, struct, sys; sys.stdout.buffer.write(struct.pack('3072f', *[random.uniform(-1, 1) for _ in range(3072)]))" >"$tmp/in.f32"
RECQ_TUNING=off "$recq" run "$tmp/m.onnx" --runs=2 --input=input="$tmp/in.f32" \
  --output=prob="$tmp/a.f32" >"$tmp/run_onnx.txt"
"$recq" run "$tmp/m.recq" --runs=2 --input=input="$tmp/in.f32" --output=prob="$tmp/b.f32" >"$tmp/run_file.txt"
grep -q "engine file: file: as stored" "$tmp/run_file.txt" || fail "recq run (engine file): $(cat "$tmp/run_file.txt")"
grep -q "time to first result: " "$tmp/run_file.txt" || fail "recq run: no time to first result"
cmp -s "$tmp/a.f32" "$tmp/b.f32" || fail "recq run: the engine file's output differs from the ONNX file's"
# A cold `recq run` exits after its result: on PoCL it hands its programs to
# a background `recq store-binaries`, which stores them and removes its
# hand-off file; the next run then compiles nothing. The wait is bounded
# only so that a broken store cannot hang the suite.
hand="$tmp/hand-cache"
RECQ_TUNING=off RECQ_CACHE_DIR="$hand" "$recq" run "$tmp/m.onnx" --runs=1 >/dev/null
for _ in $(seq 600); do
  compgen -G "$hand/handoff/*.pending" >/dev/null || break
  sleep 1
done
if compgen -G "$hand/handoff/*.pending" >/dev/null; then fail "recq store-binaries left its hand-off file"; fi
compgen -G "$hand/[0-9a-f]*" >/dev/null || fail "no program binaries stored after a cold recq run"
RECQ_TUNING=off RECQ_CACHE_DIR="$hand" "$recq" run "$tmp/m.onnx" --runs=1 >"$tmp/run_warm.txt"
grep -q " 0 programs compiled" "$tmp/run_warm.txt" || fail "warm recq run compiled programs: $(cat "$tmp/run_warm.txt")"
"$recq" store-binaries "$tmp/missing.pending" 2>"$tmp/err.txt" && fail "store-binaries of a missing file succeeded"
grep -q "not found" "$tmp/err.txt" || fail "store-binaries: $(cat "$tmp/err.txt")"
# Bit-for-bit reproducible across processes: two more builds, each in a
# fresh process with empty recq and PoCL caches (PoCL's cache at the same
# path: PoCL's binaries name it), give the same bytes. Tuning is off: with
# no tuning cache to share, the fast tuner's choices are timings, which may
# differ between processes (reproducibility holds for one tuning cache).
for i in 1 2; do
  rm -rf "$tmp/pocl-cache" && mkdir -p "$tmp/pocl-cache"
  RECQ_TUNING=off RECQ_CACHE_DIR=off POCL_CACHE_DIR="$tmp/pocl-cache" "$recq" build "$tmp/m.onnx" -o "$tmp/m$i.recq" >/dev/null
done
cmp "$tmp/m1.recq" "$tmp/m2.recq" || fail "two builds of one model in two processes differ"
head -c 5000 "$tmp/m.recq" >"$tmp/cut.recq"
if "$recq" run "$tmp/cut.recq" 2>"$tmp/err.txt"; then fail "a truncated engine file ran"; fi
grep -qE "INVALID_ARGUMENT|DATA_LOSS" "$tmp/err.txt" || fail "truncated engine file: $(cat "$tmp/err.txt")"

if "$recq" bench "$tmp/m.onnx" --streams=0 2>"$tmp/err.txt"; then fail "--streams=0 accepted"; fi
grep -q -- "--streams must be at least 1" "$tmp/err.txt" || fail "no --streams message"
# Camera frames in: an RGB u8 NHWC frame normalized inside the recording
# against the same frame normalized here, and an NV12 frame resized to the
# model's 32x32 (Y then UV in one file).
python3 - "$tmp" <<'PY'
import random, struct, sys
random.seed(3)
rgb = [random.randrange(256) for _ in range(32 * 32 * 3)]  # NHWC
open(sys.argv[1] + "/frame.rgb", "wb").write(bytes(rgb))
mean, scale = (120.0, 110.0, 100.0), (60.0, 50.0, 40.0)
x = [(rgb[(h * 32 + w) * 3 + c] - mean[c]) / scale[c] for c in range(3) for h in range(32) for w in range(32)]
open(sys.argv[1] + "/frame.f32", "wb").write(struct.pack("3072f", *x))
open(sys.argv[1] + "/frame.nv12", "wb").write(bytes(random.randrange(16, 236) for _ in range(64 * 48 * 3 // 2)))
PY
"$recq" run "$tmp/m.onnx" --runs=1 --input=input="$tmp/frame.f32" --output=prob="$tmp/host.f32" >/dev/null
"$recq" run "$tmp/m.onnx" --runs=1 --input=input="$tmp/frame.rgb" --output=prob="$tmp/fused.f32" \
  --input-format=rgb,mean=120/110/100,scale=60/50/40 >"$tmp/run_rgb.txt" || fail "recq run --input-format=rgb"
python3 - "$tmp/host.f32" "$tmp/fused.f32" <<'PY' || fail "recq run --input-format: output differs from host normalization"
import struct, sys
a, b = (struct.unpack("1000f", open(p, "rb").read()) for p in sys.argv[1:])
assert max(abs(x - y) for x, y in zip(a, b)) < 1e-4, max(abs(x - y) for x, y in zip(a, b))
PY
"$recq" run "$tmp/m.onnx" --runs=1 --input=input="$tmp/frame.nv12" --input-format=nv12:64x48 \
  --output-format=prob=f16 --output=prob="$tmp/nv12.f16" >"$tmp/run_nv12.txt" || fail "recq run --input-format=nv12"
grep -q "input 'input/uv' 1x24x32x2 uint8: from" "$tmp/run_nv12.txt" || fail "nv12: $(cat "$tmp/run_nv12.txt")"
[ "$(stat -c %s "$tmp/nv12.f16")" = 2000 ] || fail "--output-format=prob=f16 did not write 1000 halves"
if "$recq" run "$tmp/m.onnx" --input=input="$tmp/frame.rgb" --input-format=nv12:64x48 2>"$tmp/err.txt"; then
  fail "a frame file of the wrong size ran"
fi
grep -q "needs 4608 bytes" "$tmp/err.txt" || fail "wrong frame size: $(cat "$tmp/err.txt")"
if "$recq" run "$tmp/m.onnx" --input-format=yuv:64x48 2>"$tmp/err.txt"; then fail "yuv accepted"; fi
grep -q "unknown colour format 'yuv'" "$tmp/err.txt" || fail "no --input-format message"
# What the pre-processed inputs bind: recq info (ONNX, and an engine file
# built with the pre-processing), and recq bench with the same flags.
"$recq" info "$tmp/m.onnx" --input-format=nv12:64x48,kind=image >"$tmp/info_nv12.txt" || fail "recq info --input-format"
grep -qF "input input/uv: 1x24x32x2 uint8, NV12 UV plane, image2d" "$tmp/info_nv12.txt" ||
  fail "recq info --input-format: $(cat "$tmp/info_nv12.txt")"
"$recq" bench "$tmp/m.onnx" --input-format=nv12:64x48 --output-format=prob=f16 --warmup=0.05 \
  --iterations=4 >"$tmp/bench_nv12.txt" || fail "recq bench --input-format"
grep -q "latency" "$tmp/bench_nv12.txt" || fail "recq bench --input-format: $(cat "$tmp/bench_nv12.txt")"
if "$recq" bench "$tmp/m.onnx" --input-format=rgbx,kind=image --iterations=1 2>"$tmp/err.txt"; then
  fail "bench took an image input"
fi
grep -q "kind=image is for recq run" "$tmp/err.txt" || fail "bench kind=image: $(cat "$tmp/err.txt")"
# recq generate on the 2-layer decoder: transformers' greedy ids, JSON out,
# and a prompt too long for --max-length refused.
dec="$src/tests/models/decoder"
"$recq" generate "$dec/tiny_decoder.onnx" --prompt-ids=17,3,200,91,45,128,7,250 --max-new-tokens=24 \
  --max-length=40 --repeat=1 --json="$tmp/gen.json" >"$tmp/gen.txt" || fail "recq generate"
want=$(sed -n 's/^greedy //p' "$dec/golden.txt" | tr ' ' ',')
grep -qF "ids (24): $want" "$tmp/gen.txt" || fail "recq generate ids: $(cat "$tmp/gen.txt")"
python3 - "$tmp/gen.json" "$want" <<'PY' || fail "recq generate --json"
import json, sys
r = json.load(open(sys.argv[1]))
assert ",".join(map(str, r["ids"])) == sys.argv[2], r["ids"]
assert r["decode_tokens_per_s"] > 0 and r["kv_cache_bytes"] == 2 * 2 * 4 * 40 * 16 * 4, r
PY
# The default prefill is bucketed (steps of 2, 4 and 8 for 7 tokens: one
# replay); --prefill=tokens gives the same ids; a bad mode is refused.
python3 - "$tmp/gen.json" <<'PY' || fail "recq generate bucketed prefill: $(cat "$tmp/gen.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["prefill"] == "bucketed" and r["prefill_buckets"] == [2, 4, 8], r
assert r["prefill_replays"] == 1 and r["prefill_tokens_per_s"] > 0, r
PY
"$recq" generate "$dec/tiny_decoder.onnx" --prompt-ids=17,3,200,91,45,128,7,250 --max-new-tokens=24 \
  --max-length=40 --repeat=1 --prefill=tokens >"$tmp/gen_tokens.txt" || fail "recq generate --prefill=tokens"
grep -qF "ids (24): $want" "$tmp/gen_tokens.txt" || fail "--prefill=tokens ids: $(cat "$tmp/gen_tokens.txt")"
grep -q "prefill: token by token" "$tmp/gen_tokens.txt" || fail "--prefill=tokens: $(cat "$tmp/gen_tokens.txt")"
"$recq" generate "$dec/tiny_decoder.onnx" --prompt-ids=17,3,200,91,45,128,7,250 --max-new-tokens=24 \
  --max-length=40 --repeat=1 --prefill-buckets=1..4/pow2 >"$tmp/gen_range.txt" || fail "--prefill-buckets=1..4/pow2"
grep -qF "ids (24): $want" "$tmp/gen_range.txt" || fail "--prefill-buckets range ids: $(cat "$tmp/gen_range.txt")"
grep -q "steps of 2,4 tokens; 2 replays for 7 tokens" "$tmp/gen_range.txt" ||
  fail "--prefill-buckets range: $(cat "$tmp/gen_range.txt")"
# --logits: every step's logits of the exported GPT-2 layout against
# onnxruntime's (bench/models/decode_reference.py), relative L2 below 1e-4.
ref="$dec/gpt2_past_tiny.decode"
prompt=$(python3 -c "import json, sys; print(','.join(map(str, json.load(open(sys.argv[1]))['prompt_ids'])))" "$ref.json")
new=$(python3 -c "import json, sys; print(len(json.load(open(sys.argv[1]))['generated_ids']))" "$ref.json")
"$recq" generate "$dec/gpt2_past_tiny.onnx" --prompt-ids="$prompt" --max-new-tokens="$new" \
  --max-length=32 --repeat=1 --prefill=tokens --json="$tmp/gen_logits.json" \
  --logits="$tmp/logits.f32" >"$tmp/gen_logits.txt" || fail "recq generate --logits"
python3 - "$ref" "$tmp/gen_logits.json" "$tmp/logits.f32" <<'PY' || fail "recq generate --logits"
import array, json, math, sys
ref = json.load(open(sys.argv[1] + ".json"))
run = json.load(open(sys.argv[2]))
assert run["ids"] == ref["generated_ids"], (run["ids"], ref["generated_ids"])
want, got = array.array("f"), array.array("f")
want.frombytes(open(sys.argv[1] + ".step_logits.f32", "rb").read())
got.frombytes(open(sys.argv[3], "rb").read())
rows, vocab = ref["step_logits_shape"]
assert run["logits_rows"] == rows and run["vocab"] == vocab and len(got) == len(want), run
for r in range(rows):
    a, b = got[r * vocab:(r + 1) * vocab], want[r * vocab:(r + 1) * vocab]
    err = math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b))) / math.sqrt(sum(y * y for y in b))
    assert err < 1e-4, (r, err)
PY
# recq bench --generate: exactly --iterations timed generations.
"$recq" bench "$dec/tiny_decoder.onnx" --generate --prompt-ids=17,3,200,91,45,128,7,250 \
  --max-new-tokens=24 --max-length=40 --warmup=0 --iterations=3 --json="$tmp/bench_gen.json" \
  >"$tmp/bench_gen.txt" || fail "recq bench --generate"
grep -qF "ids (24): $want" "$tmp/bench_gen.txt" || fail "bench --generate ids: $(cat "$tmp/bench_gen.txt")"
python3 - "$tmp/bench_gen.json" <<'PY' || fail "recq bench --generate --json: $(cat "$tmp/bench_gen.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["mode"] == "bench" and r["generations"] == 3, r
assert r["decode_tokens_per_s"] > 0 and r["generated_tokens_per_s_end_to_end"] > 0, r
PY
if "$recq" generate "$dec/tiny_decoder.onnx" --prompt-ids=1,2 --prefill=chunks 2>"$tmp/err.txt"; then
  fail "--prefill=chunks ran"
fi
grep -q "expected bucketed or tokens" "$tmp/err.txt" || fail "--prefill=chunks: $(cat "$tmp/err.txt")"
if "$recq" generate "$dec/tiny_decoder.onnx" --prompt-ids=1,2,3,4 --max-length=4 2>"$tmp/err.txt"; then
  fail "a prompt of max_length tokens ran"
fi
grep -q "leaves room for at most 3" "$tmp/err.txt" || fail "generate prompt length: $(cat "$tmp/err.txt")"
echo "cli ok"
