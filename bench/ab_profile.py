#!/usr/bin/env python3
"""Two recq builds side by side, by replay latency and by device time.

Each round runs, for each build in turn,
`recq bench MODEL --profile --iterations N --warmup W --json F` with
$RECQ_TUNING (default off: the heuristics' variants, the same in both builds
unless the change is in them) and reads from the report the replay's p50, the
device time of all dispatches (mean of the op-by-op profile runs), the sum
of each dispatch's fastest run (device_min_ms: what the host's neighbours
disturb least) and the device time of the dispatches whose label matches
--match. Then, per figure, the medians over rounds and the median of the
per-round after/before ratios, with their range. Device times move less
with the host's load than whole-run latencies, and the matched dispatches
show where a change acts.

  python3 bench/ab_profile.py build/models/resnet50.onnx /tmp/recq-before \\
      build/tools/recq --match 'layer[234].0/downsample' --rounds 5 --json out.json
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile


def run_once(recq, model, args, report):
    env = dict(os.environ)
    env.setdefault("RECQ_TUNING", "off")
    cmd = [recq, "bench", model, "--profile", f"--iterations={args.iterations}",
           f"--warmup={args.warmup}", f"--json={report}", f"--precision={args.precision}"]
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    with open(report) as f:
        d = json.load(f)
    profile = d["profile"][0]["dispatches"]
    matched = [x["mean_ms"] for x in profile if args.match and re.search(args.match, x["label"])]
    return {
        "p50_ms": d["latency_ms"]["p50"],
        "device_ms": sum(x["mean_ms"] for x in profile),
        "device_min_ms": sum(x["min_ms"] for x in profile),
        "matched_ms": sum(matched),
        "matched_dispatches": len(matched),
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("model")
    p.add_argument("before", help="recq binary A")
    p.add_argument("after", help="recq binary B")
    p.add_argument("--match", default="", help="regex over dispatch labels")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--warmup", type=float, default=0.5)
    p.add_argument("--json", help="write the rounds and the summary here")
    p.add_argument("--precision", default="fp32", help="recq --precision (default fp32)")
    args = p.parse_args()
    rounds = []
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "bench.json")
        for r in range(args.rounds):
            row = {name: run_once(b, args.model, args, report)
                   for name, b in (("before", args.before), ("after", args.after))}
            rounds.append(row)
            print(f"round {r + 1}: " + "  ".join(
                f"{n}: p50 {v['p50_ms']:.2f} ms, device {v['device_ms']:.2f} ms"
                + (f", matched {v['matched_ms']:.2f} ms ({v['matched_dispatches']})"
                   if args.match else "")
                for n, v in row.items()), flush=True)
    keys = ["p50_ms", "device_ms", "device_min_ms"] + (["matched_ms"] if args.match else [])
    summary = {}
    for k in keys:
        ratios = [r["after"][k] / r["before"][k] for r in rounds if r["before"][k] > 0]
        summary[k] = {
            "before": statistics.median(r["before"][k] for r in rounds),
            "after": statistics.median(r["after"][k] for r in rounds),
            "ratio_median": statistics.median(ratios) if ratios else None,
            "ratio_min": min(ratios) if ratios else None,
            "ratio_max": max(ratios) if ratios else None,
        }
        s = summary[k]
        if s["ratio_median"] is not None:
            print(f"{k}: before {s['before']:.2f}, after {s['after']:.2f}, after/before "
                  f"{s['ratio_median']:.3f}x ({s['ratio_min']:.3f}-{s['ratio_max']:.3f}) "
                  f"over {len(rounds)} rounds")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"model": args.model, "before": args.before, "after": args.after,
                       "match": args.match, "iterations": args.iterations,
                       "tuning": os.environ.get("RECQ_TUNING", "off"), "rounds": rounds,
                       "summary": summary}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
