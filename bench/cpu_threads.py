#!/usr/bin/env python3
"""How recq's runs use the CPU's cores: work-groups, idle time between dispatches, CPU time.

Usage: python3 bench/cpu_threads.py [--recq build/tools/recq] [--models DIR]
           [--duration S] [--json OUT.json] MODEL ...

For each MODEL (a name in --models, default build/models, or a path to an
.onnx file) runs `recq bench MODEL.onnx --profile --duration S --json` and
reports, from its JSON:
  - threads busy: the process's CPU time (user + system, PoCL's device
    threads included) over the timed runs' wall time, of the host's hardware
    threads; on PoCL this is how many cores the replays kept busy;
  - work-groups: the fraction of the device's compute units that the
    dispatches' work-groups keep busy, weighted by device time (equal-cost
    groups; a dispatch of 3 groups on 2 units keeps 75 % busy), and the
    dispatches with fewer groups than units;
  - idle between dispatches: over op-by-op profiled runs (mean of 10), the
    time from one dispatch's end to the next one's start, as a share of the
    time from the first start to the last end.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def model_path(models_dir, name):
    if name.endswith(".onnx") or os.path.sep in name:
        return name
    return os.path.join(models_dir, name + ".onnx")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+")
    ap.add_argument("--recq", default="build/tools/recq")
    ap.add_argument("--models", dest="models_dir", default="build/models")
    ap.add_argument("--duration", type=float, default=5.0)
    ap.add_argument("--json", help="write every model's figures here")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models:
            path = model_path(args.models_dir, name)
            out = os.path.join(tmp, "bench.json")
            cmd = [args.recq, "bench", path, "--profile", "--duration", str(args.duration),
                   "--json", out]
            run = subprocess.run(cmd, capture_output=True, text=True)
            if run.returncode != 0:
                sys.exit(f"{' '.join(cmd)} failed ({run.returncode}):\n{run.stderr}")
            with open(out) as f:
                report = json.load(f)
            prof = report["profile"][0]
            below = [d for d in prof["dispatches"]
                     if 0 < d["work_groups"] < prof["compute_units"]]
            rows.append({
                "model": os.path.basename(path)[:-len(".onnx")],
                "latency_ms_p50": report["latency_ms"]["p50"],
                "host_threads_busy": report["host_threads_busy"],
                "hardware_threads": report.get("host", {}).get("hardware_threads"),
                "compute_units": prof["compute_units"],
                "dispatches": len(prof["dispatches"]),
                "work_group_busy_fraction": prof["busy_fraction"],
                "dispatches_below_units": len(below),
                "below_units_ms": sum(d["mean_ms"] for d in below),
                "idle_between_dispatches_ms": prof["idle_between_dispatches_ms"],
                "profiled_span_ms": prof["span_ms"],
            })
            r = rows[-1]
            print(f"{r['model']:<22} p50 {r['latency_ms_p50']:8.2f} ms  threads busy "
                  f"{r['host_threads_busy']:.2f}  work-groups {100 * r['work_group_busy_fraction']:5.1f}%"
                  f"  {r['dispatches_below_units']:2d} dispatches below units "
                  f"({r['below_units_ms']:.3f} ms)  idle between {r['idle_between_dispatches_ms']:.3f}"
                  f" of {r['profiled_span_ms']:.2f} ms "
                  f"({100 * r['idle_between_dispatches_ms'] / max(r['profiled_span_ms'], 1e-9):.1f}%)"
                  f" over {r['dispatches']} dispatches", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"command": " ".join(sys.argv), "rows": rows}, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
