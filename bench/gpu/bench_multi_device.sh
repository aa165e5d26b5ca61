#!/usr/bin/env bash
# Multi-device and multi-stream throughput of `recq bench` on a machine with
# two GPUs, from the repository root, after `bash bench/gpu/prepare.sh`
# packed gpu-bundle/ on the build machine and it was copied along:
#
#   bash bench/gpu/bench_multi_device.sh
#
# MobileNet V2 224x224, batch 1: --devices=0 and --devices=all, each with
# --streams=1,2,4,8 (one host thread per stream), and the events mode (one
# host thread) on one GPU for comparison. Every run writes its recq bench
# JSON report; summary.json holds the throughputs and two ratios, each printed
# against a threshold (PASS / FAIL):
#   all devices / one device at the best stream count   (threshold 1.9)
#   one device: best stream count / one stream           (threshold 1.5)
# Results go to $OUT/multi_device (or ./gpu-results/multi_device).
# BENCH_WARMUP and BENCH_DURATION (seconds, default 2 and 5) set the run length.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-gpu-results}/multi_device
mkdir -p "$out"
source gpu-bundle/env.sh
recq=gpu-bundle/bin/recq
warmup=${BENCH_WARMUP:-2}
duration=${BENCH_DURATION:-5}
nvidia-smi -L || true
export RECQ_CACHE_DIR=${RECQ_CACHE_DIR:-/tmp/recq-cache}  # one compile, reused by every run
"$recq" devices | tee "$out/devices.txt"
model=/tmp/mobilenet_v2_224.onnx
"$recq" export-mobilenet --model=v2 --resolution=224 "$model"

run() {  # run NAME FLAGS...
  local name=$1
  shift
  echo "== recq bench $* ($name)"
  "$recq" bench "$model" --warmup="$warmup" --duration="$duration" --json="$out/$name.json" "$@" \
    2>&1 | tee "$out/$name.txt"
}
for devices in 0 all; do
  for streams in 1 2 4 8; do
    run "devices_${devices}_streams_${streams}" --devices="$devices" --streams="$streams"
  done
done
for streams in 2 4 8; do
  run "devices_0_streams_${streams}_events" --devices=0 --streams="$streams" --stream_mode=events
done
run "devices_0_streams_1_profile" --devices=0 --streams=1 --profile

python3 - "$out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
runs = {}
for path in sorted(glob.glob(os.path.join(out, "devices_*.json"))):
    r = json.load(open(path))
    name = os.path.basename(path)[:-5]
    runs[name] = {
        "devices": [d["name"] for d in r["devices"]],
        "streams_per_device": r["options"]["streams"],
        "stream_mode": r["options"]["stream_mode"],
        "backend": r["devices"][0]["backend"],
        "throughput_per_s": r["throughput_per_s"],
        "per_device_per_s": [d["throughput_per_s"] for d in r["devices"]],
        "latency_ms": r["latency_ms"],
    }
def tput(name):
    return runs[name]["throughput_per_s"] if name in runs else 0.0
one = {s: tput(f"devices_0_streams_{s}") for s in (1, 2, 4, 8)}
both = {s: tput(f"devices_all_streams_{s}") for s in (1, 2, 4, 8)}
best_one = max(one, key=one.get)
best_both = max(both, key=both.get)
summary = {
    "runs": runs,
    "one_device_best_streams": best_one,
    "all_devices_best_streams": best_both,
    "streams_ratio_one_device": one[best_one] / one[1] if one[1] else None,
    "devices_ratio": both[best_both] / one[best_one] if one[best_one] else None,
    "thresholds": {"devices_ratio": 1.9, "streams_ratio_one_device": 1.5},
}
json.dump(summary, open(os.path.join(out, "summary.json"), "w"), indent=1)
print("throughput (inferences/s), threads mode:")
for s in (1, 2, 4, 8):
    print(f"  streams {s}: one device {one[s]:9.1f}   all devices {both[s]:9.1f}   "
          f"ratio {both[s] / one[s] if one[s] else 0:.2f}x")
for s in (2, 4, 8):
    print(f"  events mode, one device, streams {s}: {tput(f'devices_0_streams_{s}_events'):9.1f}")
for key, threshold in summary["thresholds"].items():
    v = summary[key]
    print(f"{key}: {v:.2f}x (threshold {threshold}x): {'PASS' if v and v >= threshold else 'FAIL'}")
PY
echo "results in $out"
