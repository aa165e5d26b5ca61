#!/usr/bin/env python3
"""recq's Python API against the `recq run` CLI on one model: the latency of
engine.run (numpy in, numpy out: copies both ways), of a recording's run with
device tensors (recq.Tensor bound in and out: no host copies) and of the same
model through `recq run` (the C++ replay loop), medians of --runs runs each
after warm-up, all on one device in one process run (the CLI as a
subprocess); engine.run again through a recording without pinned input
staging (pinned_uploads=False). --rounds repeats the four, interleaved.
Prints the ratios of the medians to the CLI's and writes JSON.

Usage: python3 bench/python_latency.py MODEL.onnx --recq build/tools/recq
           [--device SPEC] [--runs 200] [--rounds 1] [--json FILE]
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
    p.add_argument("--rounds", type=int, default=1,
                   help="repeat the three measurements this many times, interleaved; the "
                        "ratios are of the medians over rounds (default 1)")
    a = p.parse_args()
    engine = recq.Engine.load(a.model, device=a.device)
    inp = engine.inputs[0]
    x = np.random.default_rng(1).uniform(-1, 1, inp.shape).astype(np.float32)
    feeds = {inp.name: x}
    # engine.run's recording stages numpy inputs through pinned host buffers
    # where the device does not share host memory; a recording without them
    # is the A/B.
    pageable = engine.record(pinned_uploads=False)
    rec = engine.record()
    t_in = recq.Tensor.from_numpy(engine, x)
    t_out = engine.new_tensor(engine.outputs[0].name)
    bound = {inp.name: t_in, engine.outputs[0].name: t_out}
    cmd = [a.recq, "run", a.model, f"--runs={a.runs}"]
    if a.device:
        cmd.append(f"--device={a.device}")
    rounds = []
    for _ in range(a.rounds):
        r = {"engine_run_numpy_ms": median_ms(lambda: engine.run(feeds), a.runs),
             "numpy_pageable_ms": median_ms(lambda: pageable.run(feeds), a.runs),
             "recording_run_tensors_ms": median_ms(lambda: rec.run(bound), a.runs)}
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        m = re.search(r"median ([0-9.]+) ms", out)
        if not m:
            sys.exit(f"no median in recq run's output:\n{out}")
        r["recq_run_cli_ms"] = float(m.group(1))
        rounds.append(r)
        print(f"recq run (CLI): {r['recq_run_cli_ms']:.3f} ms; engine.run numpy: "
              f"{r['engine_run_numpy_ms']:.3f} ms (pageable {r['numpy_pageable_ms']:.3f}); "
              f"recording.run device tensors: {r['recording_run_tensors_ms']:.3f} ms", flush=True)
    med = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
    cli_ms = med["recq_run_cli_ms"]
    result = {
        "model": a.model, "device": a.device, "runs": a.runs, "rounds": a.rounds,
        "pinned_uploads": rec.pinned_uploads, **med,
        "numpy_over_cli": med["engine_run_numpy_ms"] / cli_ms,
        "numpy_pageable_over_cli": med["numpy_pageable_ms"] / cli_ms,
        "tensors_over_cli": med["recording_run_tensors_ms"] / cli_ms,
        "per_round": rounds,
        "python": sys.version.split()[0], "date": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()),
    }
    print(f"medians of {a.rounds} round(s): recq run (CLI) {cli_ms:.3f} ms; engine.run numpy "
          f"{med['engine_run_numpy_ms']:.3f} ms ({result['numpy_over_cli']:.2f}x; pinned uploads "
          f"{'on' if rec.pinned_uploads else 'off'}); pageable numpy "
          f"{med['numpy_pageable_ms']:.3f} ms ({result['numpy_pageable_over_cli']:.2f}x); "
          f"device tensors {med['recording_run_tensors_ms']:.3f} ms "
          f"({result['tensors_over_cli']:.2f}x)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
