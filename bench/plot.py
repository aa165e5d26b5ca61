#!/usr/bin/env python3
"""Plots recq's benchmark JSON as PNGs under docs/ (matplotlib; bench/run.sh
runs it from the onnxruntime comparison's virtual environment).

  python3 bench/plot.py BENCH_DIR [GPU_DIR] --out docs
BENCH_DIR holds replay_overhead.json, replay_overhead_layer.json,
mobilenet.json, compile.json, onnxruntime.json (as bench/run.sh writes them);
GPU_DIR, if given, replay_overhead_h200.json, mobilenet_h200.json and
torch_h200.json (as bench/gpu/measure.sh writes them).
"""
import argparse
import json
import os
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SCALE = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}


def load(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def benchmarks(data):
    return [b for b in (data or {}).get("benchmarks", []) if not b.get("error_occurred")]


def overhead_series(data, kind):
    series = defaultdict(list)
    for b in benchmarks(data):
        parts = b["name"].split("/")
        if parts[0] != f"BM_{kind}":
            continue
        key = "cpu_time" if kind == "Host" else "real_time"
        series[parts[1]].append((int(parts[2]), b[key] * SCALE[b["time_unit"]]))
    return {k: sorted(v) for k, v in series.items()}


def plot_overhead(bench, gpu, out):
    panels = [("PoCL, host CPU per run", overhead_series(bench.get("overhead"), "Host"),
               overhead_series(bench.get("overhead_layer"), "Host")),
              ("PoCL, wall time per run", overhead_series(bench.get("overhead"), "Wall"),
               overhead_series(bench.get("overhead_layer"), "Wall"))]
    if gpu.get("overhead"):
        panels.append(("H200, host CPU per run", overhead_series(gpu["overhead"], "Host"), {}))
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4))
    for ax, (title, plain, layer) in zip(axes, panels):
        for name, pts in plain.items():
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name)
        for name, pts in layer.items():
            if name == "qcom":
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="s", ls="--",
                        label="qcom (emulation layer)")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("dispatches per run")
        ax.set_ylabel("µs per run")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "replay_overhead.png"), dpi=110)


def plot_mobilenet(bench, gpu, out):
    rows = []  # (label, ms)
    for b in benchmarks(bench.get("mobilenet")):
        model, backend = b["name"][3:].split("/")[:2]
        rows.append((f"{model}\n{backend}", b["real_time"] * SCALE[b["time_unit"]] / 1e3, "C0"))
    for r in bench.get("ort") or []:
        rows.append((f"MobileNet{r['model'].upper()}\nonnxruntime", r["onnxruntime_ms"], "C1"))
        rows.append((f"MobileNet{r['model'].upper()}\nrecq run", r["recq_ms"], "C0"))
    gpu_rows = []
    for b in benchmarks(gpu.get("mobilenet")):
        model, backend = b["name"][3:].split("/")[:2]
        gpu_rows.append((f"{model}\n{backend}", b["real_time"] * SCALE[b["time_unit"]] / 1e3, "C0"))
    torch = gpu.get("torch")
    if torch:
        gpu_rows.append(("MobileNetV2\ntorch eager", torch["eager_ms_median"], "C1"))
        gpu_rows.append(("MobileNetV2\ntorch CUDA graph", torch["cuda_graph_ms_median"], "C2"))
    panels = [("PoCL (2 cores), 224x224, batch 1", rows)]
    if gpu_rows:
        panels.append(("NVIDIA H200 (OpenCL), 224x224, batch 1", gpu_rows))
    fig, axes = plt.subplots(1, len(panels), figsize=(7 * len(panels), 4.5), squeeze=False)
    for ax, (title, data) in zip(axes[0], panels):
        ax.bar(range(len(data)), [d[1] for d in data], color=[d[2] for d in data])
        ax.set_xticks(range(len(data)))
        ax.set_xticklabels([d[0] for d in data], fontsize=7, rotation=60, ha="right")
        for i, d in enumerate(data):
            ax.text(i, d[1], f"{d[1]:.2f}", ha="center", va="bottom", fontsize=7)
        ax.set_ylabel("ms per inference (median)")
        ax.set_title(title)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "mobilenet_latency.png"), dpi=110)


def plot_compile(bench, out):
    data = benchmarks(bench.get("compile"))
    if not data:
        return
    fig, ax = plt.subplots(figsize=(4.5, 3.5))
    labels = [b["name"].replace("BM_Compile", "") for b in data]
    values = [b["real_time"] * SCALE[b["time_unit"]] / 1e3 for b in data]
    ax.bar(labels, values, color=["C3", "C2"][: len(values)])
    for i, v in enumerate(values):
        ax.text(i, v, f"{v:.0f} ms", ha="center", va="bottom")
    ax.set_ylabel("Engine::Compile, MobileNet V2 224 (ms)")
    ax.set_title("cold vs warm program-binary cache")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "compile_cold_warm.png"), dpi=110)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("bench_dir")
    p.add_argument("gpu_dir", nargs="?")
    p.add_argument("--out", default="docs")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    j = lambda d, n: load(os.path.join(d, n)) if d else None  # noqa: E731
    bench = {"overhead": j(a.bench_dir, "replay_overhead.json"),
             "overhead_layer": j(a.bench_dir, "replay_overhead_layer.json"),
             "mobilenet": j(a.bench_dir, "mobilenet.json"),
             "compile": j(a.bench_dir, "compile.json"),
             "ort": j(a.bench_dir, "onnxruntime.json")}
    gpu = {"overhead": j(a.gpu_dir, "replay_overhead_h200.json"),
           "mobilenet": j(a.gpu_dir, "mobilenet_h200.json"),
           "torch": j(a.gpu_dir, "torch_h200.json")}
    plot_overhead(bench, gpu, a.out)
    plot_mobilenet(bench, gpu, a.out)
    plot_compile(bench, a.out)
    print(f"plots written to {a.out}/")


if __name__ == "__main__":
    main()
