#!/usr/bin/env python3
"""Turns recq benchmark JSON (Google Benchmark --benchmark_format=json) into
markdown tables with side-by-side ratios against the unrecorded path.

  python3 bench/summarize.py build/bench/replay_overhead.json build/bench/mobilenet.json
"""
import json
import sys
from collections import defaultdict


def rows(path):
    with open(path) as f:
        data = json.load(f)
    for b in data["benchmarks"]:
        if b.get("error_occurred"):
            continue
        yield b


def per_run_us(b, key):
    scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[b["time_unit"]]
    return b[key] * scale


def overhead_table(path):
    # table[(kind, n)][backend] = microseconds per run
    table = defaultdict(dict)
    backends = []
    for b in rows(path):
        parts = b["name"].split("/")  # BM_Host/replay/32[/real_time]
        kind, backend, n = parts[0][3:], parts[1], int(parts[2])
        key = "cpu_time" if kind == "Host" else "real_time"
        table[(kind, n)][backend] = per_run_us(b, key)
        if backend not in backends:
            backends.append(backend)
    base = "unrecorded" if "unrecorded" in backends else "replay"
    out = ["| measure | dispatches | " + " | ".join(f"{x} (µs/run)" for x in backends) +
           " | " + " | ".join(f"{base} / {x}" for x in backends if x != base) + " |"]
    out.append("|" + "---|" * (2 + 2 * len(backends) - 1))
    for (kind, n) in sorted(table, key=lambda k: (k[0], k[1])):
        r = table[(kind, n)]
        label = "host CPU" if kind == "Host" else "wall"
        cells = [f"{r[x]:.1f}" if x in r else "–" for x in backends]
        base = "unrecorded" if "unrecorded" in backends else "replay"
        ratios = [f"{r[base] / r[x]:.2f}x" if x in r and base in r else "–"
                  for x in backends if x != base]
        out.append(f"| {label} | {n} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
    return "\n".join(out)


def model_table(path):
    out = ["| model | backend | ms/run (wall) | vs unrecorded | dispatches |", "|---|---|---|---|---|"]
    by_model = defaultdict(dict)
    meta = {}
    for b in rows(path):
        model, backend = b["name"].split("/")[0][3:], b["name"].split("/")[1]
        by_model[model][backend] = per_run_us(b, "real_time") / 1e3
        meta[model] = (int(b.get("dispatches", 0)), int(b.get("resolution", 0)))
    for model, r in by_model.items():
        for backend, ms in r.items():
            ratio = f"{r['unrecorded'] / ms:.2f}x" if "unrecorded" in r else "–"
            out.append(f"| {model} {meta[model][1]}x{meta[model][1]} | {backend} | {ms:.2f} | {ratio} | {meta[model][0]} |")
    return "\n".join(out)


def compile_table(path):
    out = ["| Engine::Compile, MobileNet V2 224 | ms | vs cold |", "|---|---|---|"]
    data = list(rows(path))
    cold = next((per_run_us(b, "real_time") for b in data if "Cold" in b["name"]), None)
    for b in data:
        ms = per_run_us(b, "real_time") / 1e3
        ratio = f"{ms * 1e3 / cold:.1%}" if cold else "–"
        out.append(f"| {b['name'][len('BM_Compile'):].lower()} | {ms:.0f} | {ratio} |")
    return "\n".join(out)


def main(paths):
    for p in paths:
        with open(p) as f:
            names = [b["name"] for b in json.load(f)["benchmarks"]]
        print(f"`{p.split('/')[-1]}`\n")
        if any("MobileNet" in n for n in names):
            print(model_table(p))
        elif any(n.startswith("BM_Compile") for n in names):
            print(compile_table(p))
        else:
            print(overhead_table(p))
        print()


if __name__ == "__main__":
    main(sys.argv[1:])
