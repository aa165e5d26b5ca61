#!/usr/bin/env bash
# Two or more recq builds side by side on this machine's CPU device (PoCL):
# for each model of the exported model set (BUILD/models, written by
# bench/models/export_models.py), a warm-up call of each build, then $ROUNDS
# rounds (default 5) in which each build in turn runs
# `recq run MODEL --runs=$RUNS` (default 20) with $RECQ_TUNING (default off:
# the heuristics alone) and prints its min/median. Before every call the
# script waits until no `recq store-binaries` or `recq build-helper` is
# running, so that a build's background work never overlaps a timed call.
# Then, per model and build, the median over rounds of the medians and its
# ratio to the first build's.
#   bash bench/ab_models.sh "mobilenet_v2 resnet50" /path/to/recq-before build/tools/recq
# Keep each build's binary out of the build tree (cp) before rebuilding.
set -euo pipefail
cd "$(dirname "$0")/.."
models=$1
shift
[ $# -ge 2 ] || { echo "usage: bench/ab_models.sh \"MODELS\" RECQ_A RECQ_B [RECQ_C...]" >&2; exit 2; }
dir=${RECQ_MODELS_DIR:-${RECQ_BUILD_DIR:-build}/models}
export RECQ_TUNING=${RECQ_TUNING:-off}
quiet() {
  while pgrep -f "recq store-binaries" >/dev/null || pgrep -f "recq build-helper" >/dev/null; do
    sleep 0.5
  done
}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for m in $models; do
  for b in "$@"; do
    quiet
    "$b" run "$dir/$m.onnx" --runs=2 >/dev/null 2>&1
  done
  for ((r = 1; r <= ${ROUNDS:-5}; r++)); do
    line="$m round $r"
    for b in "$@"; do
      quiet
      v=$("$b" run "$dir/$m.onnx" --runs="${RUNS:-20}" 2>&1 |
        sed -n 's/.*min \([0-9.]*\) ms, median \([0-9.]*\) ms.*/\1 \2/p')
      echo "$m $b $v" >>"$log"
      line="$line  $b: ${v% *}/${v#* } ms"
    done
    echo "$line (min/median)"
  done
done
python3 - "$log" "$@" <<'P'
import collections, statistics, sys
bins = sys.argv[2:]
med = collections.defaultdict(list)
for line in open(sys.argv[1]):
    m, b, _, median = line.split()
    med[(m, b)].append(float(median))
for m in dict.fromkeys(k[0] for k in med):
    base = statistics.median(med[(m, bins[0])])
    cells = [f"{b}: {statistics.median(med[(m, b)]):.2f} ms ({statistics.median(med[(m, b)]) / base:.2f}x)"
             for b in bins]
    print(f"{m}: " + ", ".join(cells))
P
