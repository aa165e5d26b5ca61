#!/usr/bin/env bash
# Cold starts, warm starts and engine files, side by side in one run, as JSON.
#
#   bench/engine_file_bench.sh [--reps N] [--runs N] [--out FILE.json]
#       [--bin NAME=PATH ...] [--no-identical] [MODEL.onnx ...]
#
# Models default to MobileNet V2 224 (`recq export-mobilenet --model=v2`)
# and ResNet-50 (/work/wtmodels/build/models/resnet50.onnx when present;
# bench/resnet50_onnx.py writes one without torch). --bin (repeatable) names
# recq binaries to compare, interleaved (default: recq=$RECQ_BIN, else
# build/tools/recq). For each model, N times (default 3), each binary in turn:
#   cold:   `recq run MODEL.onnx` with empty recq and PoCL caches
#           (RECQ_CACHE_DIR and POCL_CACHE_DIR fresh temporary directories);
#   warm:   the same again with the caches the cold run left (default fast
#           tuning, which measures keys earlier runs left over budget);
#   warm_notune: once more, with RECQ_TUNING=off;
#   engine: `recq run MODEL.recq` with empty recq and PoCL caches, the file
#           made once beforehand by `recq build` of the same binary;
# each reporting its time to the first result (in-process, from before
# Context::Create to the first output), the first run and the steady median
# of --runs runs after it, the process's wall time from start to exit
# (process_exit_ms, from outside: it includes whatever the process does after
# its result), its user and system CPU time (`/usr/bin/time`) and the 1-minute
# load average before it started. A cold `recq run` on PoCL leaves its
# program binaries to a background `recq store-binaries`: the script waits
# for it before the next sample and reports how long it ran on after the
# exit (store_after_exit_ms; 0 for a binary that stores before it exits).
# Unless --no-identical, the file is built
# twice more with empty caches to check that the bytes are identical. Prints
# a summary and writes the JSON to --out (default
# ${RECQ_BUILD_DIR:-build}/bench/engine_file.json). Timings on a shared
# machine are noisy: the JSON holds every sample and medians; CPU times vary
# less with the load than wall times do.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${RECQ_BUILD_DIR:-build}
recq=${RECQ_BIN:-$build/tools/recq}
reps=3
runs=20
out="$build/bench/engine_file.json"
models=()
bins=()
identical_check=true
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) reps=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --bin) bins+=("$2"); shift 2 ;;
    --no-identical) identical_check=false; shift ;;
    *) models+=("$1"); shift ;;
  esac
done
[ ${#bins[@]} -eq 0 ] && bins=("recq=$recq")
for b in "${bins[@]}"; do
  [ -x "${b#*=}" ] || { echo "engine_file_bench: build ${b#*=} first (scripts/build.sh)" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "engine_file_bench: needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ ${#models[@]} -eq 0 ]; then
  RECQ_CACHE_DIR=off "${bins[0]#*=}" export-mobilenet --model=v2 "$tmp/mobilenet_v2.onnx" >/dev/null
  models=("$tmp/mobilenet_v2.onnx")
  [ -f /work/wtmodels/build/models/resnet50.onnx ] && models+=(/work/wtmodels/build/models/resnet50.onnx)
fi
mkdir -p "$(dirname "$out")"

# run_in DIR BIN ARGS...: recq with the caches under DIR; prints its output,
# then "TIME wall user sys".
run_in() {
  local dir=$1 bin=$2
  shift 2
  RECQ_CACHE_DIR="$dir/recq" POCL_CACHE_DIR="$dir/pocl" /usr/bin/time -f 'TIME %e %U %S' \
    "$bin" "$@" 2>&1
}

# fresh_run DIR BIN ARGS...: run_in with empty caches.
fresh_run() {
  rm -rf "$1"
  mkdir -p "$1/recq" "$1/pocl"
  run_in "$@"
}

# wait_store DIR: waits (at most 600 s) until no hand-off file is left in the
# recq cache DIR; prints the milliseconds it waited.
wait_store() {
  local start=$(date +%s%N)
  for _ in $(seq 6000); do
    compgen -G "$1/handoff/*.pending" >/dev/null || break
    sleep 0.1
  done
  echo $((($(date +%s%N) - start) / 1000000))
}

samples="$tmp/samples.txt"
: >"$samples"
for model in "${models[@]}"; do
  name=$(basename "$model" .onnx)
  for b in "${bins[@]}"; do
    bname=${b%%=*}
    bin=${b#*=}
    engine="$tmp/$name.$bname.recq"
    fresh_run "$tmp/c" "$bin" build "$model" -o "$engine" --tuning=fast >/dev/null
    identical=skipped
    if $identical_check; then
      for i in 1 2; do
        fresh_run "$tmp/c" "$bin" build "$model" -o "$tmp/$name.$i.recq" --tuning=fast >/dev/null
      done
      identical=false
      cmp -s "$engine" "$tmp/$name.1.recq" && cmp -s "$engine" "$tmp/$name.2.recq" && identical=true
    fi
    echo "$name $bname file_bytes $(stat -c %s "$engine")" >>"$samples"
    echo "$name $bname identical $identical" >>"$samples"
  done
  for ((r = 0; r < reps; r++)); do
    for b in "${bins[@]}"; do
      bname=${b%%=*}
      bin=${b#*=}
      for kind in cold warm warm_notune engine; do
        src=$model
        [ $kind = engine ] && src="$tmp/$name.$bname.recq"
        loadavg=$(cut -d' ' -f1 /proc/loadavg)
        start_ns=$(date +%s%N)
        case $kind in
          cold | engine) log=$(fresh_run "$tmp/c" "$bin" run "$src" --runs="$runs") ;;
          warm) log=$(run_in "$tmp/c" "$bin" run "$src" --runs="$runs") ;;
          warm_notune) log=$(RECQ_TUNING=off run_in "$tmp/c" "$bin" run "$src" --runs="$runs") ;;
        esac
        exit_ms=$((($(date +%s%N) - start_ns) / 1000000))
        store_ms=0
        [ $kind = cold ] && store_ms=$(wait_store "$tmp/c/recq")
        ttfr=$(sed -n 's/^time to first result: \([0-9.]*\) ms.*first run \([0-9.]*\) ms.*/\1 \2/p' <<<"$log")
        median=$(sed -n 's/^latency over .* median \([0-9.]*\) ms.*/\1/p' <<<"$log")
        load=$(sed -n 's/^model: .*, \(compile\|load\) \([0-9.]*\) ms (warm-up \([0-9.]*\) ms.*/\2 \3/p' <<<"$log")
        cpu=$(sed -n 's/^TIME [0-9.]* \([0-9.]*\) \([0-9.]*\)$/\1 \2/p' <<<"$log")
        echo "$name $bname $kind $ttfr $median $load $exit_ms $cpu $loadavg $store_ms" >>"$samples"
        echo "engine_file_bench: $name $bname $kind rep $((r + 1))/$reps: first result $ttfr ms," \
          "median $median ms, exit $exit_ms ms, cpu $cpu s, load $loadavg, store $store_ms ms" >&2
      done
    done
  done
done

python3 - "$samples" "$out" "$reps" "$runs" <<'PY'
import json, platform, statistics, sys, time
samples, out, reps, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
kinds = ("cold", "warm", "warm_notune", "engine")
models = {}
for line in open(samples):
    f = line.split()
    m = models.setdefault(f[0], {}).setdefault(f[1], {k: [] for k in kinds})
    if f[2] == "file_bytes":
        m["file_bytes"] = int(f[3])
    elif f[2] == "identical":
        m["bit_identical_rebuilds"] = {"true": True, "false": False}.get(f[3], f[3])
    else:
        v = [float(x) for x in f[3:]]
        m[f[2]].append({"first_result_ms": v[0], "first_run_ms": v[1], "steady_median_ms": v[2],
                        "compile_or_load_ms": v[3], "warmup_ms": v[4], "process_exit_ms": v[5],
                        "user_s": v[6], "sys_s": v[7], "cpu_s": v[6] + v[7],
                        "loadavg_1min": v[8], "store_after_exit_ms": v[9]})
report = {"cpu": next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                       if l.startswith("model name")), platform.processor()),
          "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
          "reps": reps, "runs_per_sample": runs,
          "note": "cold: recq run MODEL.onnx with empty recq and PoCL caches; warm: again with "
                  "the caches it left (warm_notune: RECQ_TUNING=off); engine: recq run "
                  "MODEL.recq with empty caches; first_result_ms in-process from before "
                  "Context::Create to the first output; process_exit_ms from outside, start to "
                  "exit; cpu_s user+sys; medians of interleaved samples",
          "models": {}}
summary = {}
for name, per_bin in models.items():
    report["models"][name] = {}
    for bname, m in per_bin.items():
        r = {k: m[k] for k in ("file_bytes", "bit_identical_rebuilds") if k in m}
        for kind in kinds:
            if m[kind]:
                r[kind] = {key: statistics.median(s[key] for s in m[kind]) for key in m[kind][0]}
                r[kind]["samples"] = m[kind]
        report["models"][name][bname] = r
        summary[f"{name} {bname}"] = {
            kind: {key: round(r[kind][key], 3)
                   for key in ("first_result_ms", "process_exit_ms", "cpu_s",
                               "store_after_exit_ms", "loadavg_1min")}
            for kind in kinds if kind in r}
json.dump(report, open(out, "w"), indent=2)
print(json.dumps(summary, indent=2))
print("full report:", out)
PY
