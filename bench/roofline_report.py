#!/usr/bin/env python3
"""Which convolution and matrix-product dispatches fall short of a roofline fraction.

Usage: python3 bench/roofline_report.py [--json OUT.json] PROFILE.txt ...

Reads the output of `recq run MODEL.onnx --profile` (one file per model,
named MODEL.txt or prof_MODEL.txt) and, for every dispatch whose kernel is a
convolution, Gemm or MatMul (conv2d_*, gemm_*, matmul_*, but not their
split-K reductions), decides from the printed GFLOP/s and GB/s whether it is
compute- or memory-bound on the printed roofline (its arithmetic intensity
against peak FLOP/s over peak bandwidth) and whether it reaches a fixed
fraction of that roof: 25 % of peak compute when compute-bound, 40 % of peak
bandwidth when memory-bound. Prints per model the number of such dispatches, how many miss,
and the share of the profiled time they take, then the same for dispatches of
at least --min-us microseconds (default 20): shorter ones sit at the launch
floor of a profiled dispatch, where no kernel reaches a roofline fraction.
The JSON lists every miss.
"""
import argparse
import json
import os
import re
import sys

DISPATCH = re.compile(
    r"^\s*([\d.]+) ms\s+([\d.]+) GFLOP/s\s+([\d.]+) GB/s\s+([\d.]+)% roof\s+(?:(?:\d+|-) wg\s+)?(\S+)$")
ROOF = re.compile(r"^roofline \(.*\): ([\d.]+) GFLOP/s, ([\d.]+) GB/s")
GEMM_KINDS = ("conv2d", "gemm", "matmul")


def parse(path):
    peak_gflops = peak_gbps = None
    rows = []
    in_list = False
    for line in open(path, encoding="utf-8", errors="replace"):
        m = ROOF.match(line)
        if m:
            peak_gflops, peak_gbps = float(m.group(1)), float(m.group(2))
            continue
        if line.startswith("dispatches in order"):
            in_list = True
            continue
        if in_list and line.startswith("profile ("):
            break
        m = DISPATCH.match(line) if in_list else None
        if m:
            ms, gflops, gbps, _, name = m.groups()
            rows.append({"ms": float(ms), "gflops": float(gflops), "gbps": float(gbps), "name": name})
    return peak_gflops, peak_gbps, rows


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("profiles", nargs="+")
    p.add_argument("--json")
    p.add_argument("--min-us", type=float, default=20.0)
    args = p.parse_args()
    report = []
    print(f"{'model':32} {'gemm-like':>9} {'miss':>5} {'time share':>10} "
          f"{'>=' + str(int(args.min_us)) + 'us':>8} {'miss':>5} {'time share':>10}  worst of those")
    for path in args.profiles:
        model = re.sub(r"^prof_", "", os.path.splitext(os.path.basename(path))[0])
        peak_gflops, peak_gbps, rows = parse(path)
        if not peak_gflops or not rows:
            print(f"{model:32} (no profile)")
            continue
        ridge = peak_gflops / peak_gbps
        total_ms = sum(r["ms"] for r in rows)
        gemm, misses = [], []
        for r in rows:
            kernel = r["name"].rsplit("/", 1)[-1]
            if not kernel.startswith(GEMM_KINDS) or "reduce" in kernel:
                continue
            gemm.append(r)
            intensity = r["gflops"] / r["gbps"] if r["gbps"] > 0 else float("inf")
            if intensity >= ridge:
                r.update(bound="compute", fraction=r["gflops"] / peak_gflops, target=0.25)
            else:
                r.update(bound="memory", fraction=r["gbps"] / peak_gbps, target=0.40)
            if r["fraction"] < r["target"]:
                misses.append(r)
        share = sum(r["ms"] for r in misses) / total_ms if total_ms else 0.0
        big = [r for r in gemm if r["ms"] * 1000 >= args.min_us]
        big_misses = [r for r in misses if r["ms"] * 1000 >= args.min_us]
        big_share = sum(r["ms"] for r in big_misses) / total_ms if total_ms else 0.0
        worst = min(big_misses, key=lambda r: r["fraction"]) if big_misses else None
        worst_text = (f"{worst['name'].rsplit('/', 1)[-1]} {100 * worst['fraction']:.1f}% of "
                      f"{worst['bound']}") if worst else ""
        print(f"{model:32} {len(gemm):9d} {len(misses):5d} {100 * share:9.1f}% {len(big):8d} "
              f"{len(big_misses):5d} {100 * big_share:9.1f}%  {worst_text}")
        report.append({"model": model, "peak_gflops": peak_gflops, "peak_gbps": peak_gbps,
                       "gemm_like": len(gemm), "misses": misses, "miss_time_share": share,
                       "min_us": args.min_us, "gemm_like_long": len(big),
                       "misses_long": len(big_misses), "miss_long_time_share": big_share})
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
