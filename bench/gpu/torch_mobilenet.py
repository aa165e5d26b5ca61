#!/usr/bin/env python3
"""PyTorch peer numbers for recq's GPU comparison: torchvision MobileNet V2
(random weights), batch 1, 224x224, float32, eager and CUDA-graph replay.
Median wall time per inference over many runs after warm-up, each run
synchronized, like `recq run`'s per-run latency."""
import argparse
import json
import statistics
import time

import torch
import torchvision


def timed(fn, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), min(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--json")
    args = parser.parse_args()
    torch.backends.cudnn.benchmark = True
    model = torchvision.models.mobilenet_v2(weights=None).eval().cuda()
    x = torch.randn(1, 3, 224, 224, device="cuda")
    results = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__}
    with torch.no_grad():
        for _ in range(30):
            model(x)
        torch.cuda.synchronize()
        results["eager_ms_median"], results["eager_ms_min"] = timed(lambda: model(x), args.runs)
        static_x = x.clone()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(5):
                model(static_x)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_y = model(static_x)
        for _ in range(10):
            graph.replay()
        torch.cuda.synchronize()
        results["cuda_graph_ms_median"], results["cuda_graph_ms_min"] = timed(graph.replay, args.runs)
        del static_y
    for k, v in results.items():
        print(f"{k}: {v:.4f}" if isinstance(v, float) else f"{k}: {v}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
