#!/usr/bin/env python3
"""recq's Python API against the `recq run` CLI on one model: the latency of
engine.run (numpy in, numpy out: copies both ways), of a recording's run with
device tensors (recq.Tensor bound in and out: no host copies) and of the same
model through `recq run` (the C++ replay loop), medians of --runs runs each
after warm-up, all on one device in one process run (the CLI as a
subprocess). Prints the ratios to the CLI's median and writes JSON.

Usage: python3 bench/python_latency.py MODEL.onnx --recq build/tools/recq
           [--device SPEC] [--runs 200] [--json FILE]
"""
import argparse
import json
import re
import statistics
import subprocess
import sys
import time

import numpy as np
import recq


def median_ms(fn, runs, warmup=20):
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(samples)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("--recq", required=True, help="the recq CLI binary")
    p.add_argument("--device", default=None)
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--json")
    a = p.parse_args()
    engine = recq.Engine.load(a.model, device=a.device)
    inp = engine.inputs[0]
    x = np.random.default_rng(1).uniform(-1, 1, inp.shape).astype(np.float32)
    feeds = {inp.name: x}
    numpy_ms = median_ms(lambda: engine.run(feeds), a.runs)
    rec = engine.record()
    t_in = recq.Tensor.from_numpy(engine, x)
    t_out = engine.new_tensor(engine.outputs[0].name)
    bound = {inp.name: t_in, engine.outputs[0].name: t_out}
    tensor_ms = median_ms(lambda: rec.run(bound), a.runs)
    cmd = [a.recq, "run", a.model, f"--runs={a.runs}"]
    if a.device:
        cmd.append(f"--device={a.device}")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    m = re.search(r"median ([0-9.]+) ms", out)
    if not m:
        sys.exit(f"no median in recq run's output:\n{out}")
    cli_ms = float(m.group(1))
    result = {
        "model": a.model, "device": a.device, "runs": a.runs,
        "recq_run_cli_ms": cli_ms, "engine_run_numpy_ms": numpy_ms,
        "recording_run_tensors_ms": tensor_ms,
        "numpy_over_cli": numpy_ms / cli_ms, "tensors_over_cli": tensor_ms / cli_ms,
        "python": sys.version.split()[0], "date": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()),
    }
    print(f"recq run (CLI): {cli_ms:.3f} ms; engine.run numpy: {numpy_ms:.3f} ms "
          f"({numpy_ms / cli_ms:.2f}x); recording.run device tensors: {tensor_ms:.3f} ms "
          f"({tensor_ms / cli_ms:.2f}x)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
