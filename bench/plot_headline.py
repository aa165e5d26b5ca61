#!/usr/bin/env python3
"""Draws docs/headline.png, the README's one performance plot, from JSON kept in docs/.

  python3 bench/plot_headline.py [--docs docs] [--out docs/headline.png]

Left: recq (replay backend, PoCL 3.1 on a 2-core AMD EPYC VM) against
onnxruntime's CPU provider with 2 intra-op threads, from
docs/model_set_cpu_2026-11-24.json, with the three transformer rows taken
from docs/model_set_cpu_transformers_2026-11-24.json (the same command, run
again after one kernel was reverted; docs/performance.md says which).
Right: recq (replay backend, NVIDIA's OpenCL driver) against a PyTorch CUDA
graph with TF32 off on one H100, from docs/h100/model_set_h100_2026-11-24.json.
Each bar is recq's median latency over the other engine's, lower is better,
for the 18 models both files hold. Needs matplotlib.
"""
import argparse
import json
import math
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MODELS = [
    "resnet18", "resnet50", "resnext50_32x4d", "vgg11", "alexnet", "densenet121", "googlenet",
    "inception_v3", "squeezenet1_1", "mobilenet_v2", "mobilenet_v3_small", "mobilenet_v3_large",
    "efficientnet_b0", "efficientnet_v2_s", "regnet_y_400mf", "vit_b_16", "swin_t",
    "convnext_tiny",
]


def load(path):
    with open(path) as f:
        return json.load(f)


def cpu_ratios(docs):
    ratios = {}
    for name in ("model_set_cpu_2026-11-24.json", "model_set_cpu_transformers_2026-11-24.json"):
        for m in load(os.path.join(docs, name))["models"]:
            if m.get("matches") and m.get("recq", {}).get("median_ms"):
                ratios[m["model"]] = m["recq"]["median_ms"] / m["ort_ms"]
    return ratios


def gpu_ratios(docs):
    data = load(os.path.join(docs, "h100", "model_set_h100_2026-11-24.json"))
    ratios = {}
    for m in data["models"]:
        recq_ms = m.get("recq", {}).get("median_ms")
        graph_ms = m.get("torch_tf32_off", {}).get("cuda_graph_ms_median")
        if recq_ms and graph_ms:
            ratios[m["model"]] = recq_ms / graph_ms
    return ratios


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def panel(ax, ratios, title, peer):
    names = [n for n in MODELS if n in ratios]
    values = [ratios[n] for n in names]
    colors = ["#2a7ab9" if v <= 1.0 else "#d9822b" for v in values]
    # Bars grow from 1x: left of it recq is faster, right of it slower.
    ax.barh(range(len(names)), [v - 1.0 for v in values], left=1.0, color=colors)
    ax.set_xscale("log")
    ax.set_xlim(0.3, 4.0)
    ticks = [0.33, 0.5, 1, 2, 3]
    ax.set_xticks(ticks)
    ax.set_xticklabels([f"{t:g}x" for t in ticks])
    ax.minorticks_off()
    ax.axvline(1.0, color="black", linewidth=0.8)
    g = geomean(values)
    ax.axvline(g, color="gray", linestyle="--", linewidth=0.8)
    ax.text(g, len(names) - 0.2, f" geomean {g:.2f}x", color="gray", fontsize=8, va="top")
    for i, v in enumerate(values):
        if v >= 1.0:
            ax.text(v * 1.03, i, f"{v:.2f}x", va="center", ha="left", fontsize=7)
        else:
            ax.text(v / 1.03, i, f"{v:.2f}x", va="center", ha="right", fontsize=7)
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names, fontsize=8)
    ax.set_ylim(len(names) + 0.4, -0.6)  # first model on top, room for the geomean label
    ax.set_title(title, fontsize=9)
    ax.set_xlabel(f"recq latency / {peer} latency (lower is better)", fontsize=8)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", default="docs")
    parser.add_argument("--out", default=os.path.join("docs", "headline.png"))
    args = parser.parse_args()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 6.2), sharey=True)
    panel(left, cpu_ratios(args.docs),
          "CPU: recq on PoCL 3.1 vs onnxruntime 1.32 (2 threads)\n"
          "2-core AMD EPYC VM, batch 1, 2026-11-24", "onnxruntime")
    panel(right, gpu_ratios(args.docs),
          "GPU: recq on NVIDIA OpenCL vs PyTorch 2.11 CUDA graph (TF32 off)\n"
          "one NVIDIA H100, batch 1, 2026-11-24", "CUDA graph")
    fig.suptitle("recq median latency relative to the reference engine, same ONNX weights and input",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
