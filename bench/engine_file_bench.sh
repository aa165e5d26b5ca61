#!/usr/bin/env bash
# Engine files against cold compiles, side by side in one run, as JSON.
#
#   bench/engine_file_bench.sh [--reps N] [--runs N] [--out FILE.json] [MODEL.onnx ...]
#
# Models default to MobileNet V2 224 (`recq export-mobilenet --model=v2`)
# and ResNet-50 (/work/wtmodels/build/models/resnet50.onnx when present).
# For each model, interleaved N times (default 3):
#   cold:   `recq run MODEL.onnx` with empty recq and PoCL caches
#           (RECQ_CACHE_DIR and POCL_CACHE_DIR fresh temporary directories);
#   engine: `recq run MODEL.recq` with empty recq and PoCL caches, the file
#           made once beforehand by `recq build`;
# each reporting its time to the first result (from before Context::Create
# to the first output, in-process), the first run and the steady median of
# --runs runs after it, and the whole process's wall time until it exits
# (process_exit_ms: it includes storing the binary cache after the first
# result). The file is built twice more with empty caches to
# check that the bytes are identical. Prints the JSON and writes it to
# --out (default ${RECQ_BUILD_DIR:-build}/bench/engine_file.json). Timings
# on a shared machine are noisy: the JSON holds every sample and medians.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${RECQ_BUILD_DIR:-build}
recq=${RECQ_BIN:-$build/tools/recq}
reps=3
runs=20
out="$build/bench/engine_file.json"
models=()
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) reps=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) models+=("$1"); shift ;;
  esac
done
[ -x "$recq" ] || { echo "engine_file_bench: build $recq first (scripts/build.sh)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ ${#models[@]} -eq 0 ]; then
  RECQ_CACHE_DIR=off "$recq" export-mobilenet --model=v2 "$tmp/mobilenet_v2.onnx" >/dev/null
  models=("$tmp/mobilenet_v2.onnx")
  [ -f /work/wtmodels/build/models/resnet50.onnx ] && models+=(/work/wtmodels/build/models/resnet50.onnx)
fi
mkdir -p "$(dirname "$out")"

# fresh_run DIR ARGS...: recq with empty caches under DIR; prints its output.
fresh_run() {
  local dir=$1
  shift
  rm -rf "$dir"
  mkdir -p "$dir/recq" "$dir/pocl"
  RECQ_CACHE_DIR="$dir/recq" POCL_CACHE_DIR="$dir/pocl" "$recq" "$@"
}

samples="$tmp/samples.txt"
: >"$samples"
for model in "${models[@]}"; do
  name=$(basename "$model" .onnx)
  engine="$tmp/$name.recq"
  fresh_run "$tmp/c" build "$model" -o "$engine" >/dev/null
  for i in 1 2; do
    fresh_run "$tmp/c" build "$model" -o "$tmp/$name.$i.recq" >/dev/null
  done
  identical=false
  cmp -s "$engine" "$tmp/$name.1.recq" && cmp -s "$engine" "$tmp/$name.2.recq" && identical=true
  echo "$name file_bytes $(stat -c %s "$engine")" >>"$samples"
  echo "$name identical $identical" >>"$samples"
  for ((r = 0; r < reps; r++)); do
    for kind in cold engine; do
      src=$model
      [ $kind = engine ] && src=$engine
      start_ns=$(date +%s%N)
      log=$(fresh_run "$tmp/c" run "$src" --runs="$runs")
      exit_ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
      ttfr=$(sed -n 's/^time to first result: \([0-9.]*\) ms.*first run \([0-9.]*\) ms.*/\1 \2/p' <<<"$log")
      median=$(sed -n 's/^latency over .* median \([0-9.]*\) ms.*/\1/p' <<<"$log")
      load=$(sed -n 's/^model: .*, \(compile\|load\) \([0-9.]*\) ms (warm-up \([0-9.]*\) ms.*/\2 \3/p' <<<"$log")
      echo "$name $kind $ttfr $median $load $exit_ms" >>"$samples"
      echo "engine_file_bench: $name $kind rep $((r + 1))/$reps: first result $ttfr, median $median" >&2
    done
  done
done

python3 - "$samples" "$out" "$reps" "$runs" <<'EOF'
import json, statistics, sys, platform
samples, out, reps, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
models = {}
for line in open(samples):
    f = line.split()
    m = models.setdefault(f[0], {"cold": [], "engine": []})
    if f[1] == "file_bytes":
        m["file_bytes"] = int(f[2])
    elif f[1] == "identical":
        m["bit_identical_rebuilds"] = f[2] == "true"
    else:
        m[f[1]].append({"first_result_ms": float(f[2]), "first_run_ms": float(f[3]),
                        "steady_median_ms": float(f[4]), "compile_or_load_ms": float(f[5]),
                        "warmup_ms": float(f[6]), "process_exit_ms": float(f[7])})
report = {"cpu": next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                       if l.startswith("model name")), platform.processor()),
          "reps": reps, "runs_per_sample": runs,
          "note": "cold: recq run MODEL.onnx with empty recq and PoCL caches; engine: recq run "
                  "MODEL.recq with empty caches; times in-process from before Context::Create "
                  "to the first output; shared, loaded machine: medians of few samples",
          "models": {}}
for name, m in models.items():
    med = lambda kind, key: statistics.median(s[key] for s in m[kind])
    r = {k: m[k] for k in ("file_bytes", "bit_identical_rebuilds") if k in m}
    for kind in ("cold", "engine"):
        r[kind] = {key: med(kind, key) for key in m[kind][0]}
        r[kind]["samples"] = m[kind]
    r["engine_vs_cold_first_result"] = r["engine"]["first_result_ms"] / r["cold"]["first_result_ms"]
    for kind in ("cold", "engine"):
        r[kind + "_first_run_vs_median"] = statistics.median(
            s["first_run_ms"] / s["steady_median_ms"] for s in m[kind])
    report["models"][name] = r
json.dump(report, open(out, "w"), indent=2)
print(json.dumps({n: {k: v for k, v in r.items() if k not in ("cold", "engine")} |
                  {"cold_first_result_ms": r["cold"]["first_result_ms"],
                   "engine_first_result_ms": r["engine"]["first_result_ms"]}
                  for n, r in report["models"].items()}, indent=2))
print("full report:", out)
EOF
