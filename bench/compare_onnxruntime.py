#!/usr/bin/env python3
"""MobileNet V1 and V2: recq's replay vs onnxruntime (CPU) on the same model.

Usage: python3 bench/compare_onnxruntime.py [--build build] [--resolution 224]

Creates a virtual environment under BUILD/.venv-ort (python3 -m venv; pip
installs onnxruntime and numpy from PyPI) on first use and re-runs itself
inside it. For each model it writes the ONNX file with
`BUILD/tools/recq export-mobilenet`, a seeded random input, runs onnxruntime
(CPU execution provider, intra_op_num_threads=2, median of --runs runs after
warm-up) and `BUILD/tools/recq run MODEL --input input=IN --output prob=OUT
--runs N` (median parsed from its latency line), checks that the outputs agree
(relative L2 error below 1e-4) and prints both medians and their ratio.
Exits 1 when an output disagrees. A benchmark, not a test: times depend on
what else runs on the machine.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

VENV_DIR = ".venv-ort"
PACKAGES = ["onnxruntime", "numpy"]
LATENCY_RE = re.compile(
    r"latency over (\d+) runs \(after 1 warm-up\): min ([\d.]+) ms, median ([\d.]+) ms, "
    r"p90 ([\d.]+) ms")
MAX_REL_L2 = 1e-4


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", default="build", help="recq build tree (default: build)")
    p.add_argument("--resolution", type=int, default=224, help="input height and width")
    p.add_argument("--runs", type=int, default=20, help="timed runs per engine (default: 20)")
    p.add_argument("--models", default="v1,v2", help="comma-separated: v1, v2")
    p.add_argument("--json", help="also write the results here as JSON")
    return p.parse_args()


def ensure_venv(build):
    """Re-executes this script inside BUILD/.venv-ort, creating it if needed."""
    venv = os.path.abspath(os.path.join(build, VENV_DIR))
    python = os.path.join(venv, "bin", "python3")
    if os.path.realpath(sys.prefix) == os.path.realpath(venv):
        return
    if not os.path.exists(python):
        print(f"creating {venv} (onnxruntime, numpy from PyPI)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([python, "-m", "pip", "install", "--quiet", "--upgrade", "pip"], check=True)
        subprocess.run([python, "-m", "pip", "install", "--quiet"] + PACKAGES, check=True)
    os.execv(python, [python, os.path.abspath(__file__)] + sys.argv[1:])


def run_ort(model, x, runs):
    import numpy as np
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 2
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    feeds = {sess.get_inputs()[0].name: x}
    for _ in range(5):
        out = sess.run(None, feeds)
    ms = []
    for _ in range(runs):
        start = time.perf_counter()
        out = sess.run(None, feeds)
        ms.append((time.perf_counter() - start) * 1e3)
    return float(np.median(ms)), out[0]


def run_recq(recq, model, in_path, out_path, runs):
    cmd = [recq, "run", model, f"--input=input={in_path}", f"--output=prob={out_path}",
           f"--runs={runs}"]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({res.returncode}):\n{res.stdout}{res.stderr}")
    m = LATENCY_RE.search(res.stdout)
    if m is None:
        sys.exit(f"no latency line in the output of {' '.join(cmd)}:\n{res.stdout}")
    return float(m.group(3))


def main():
    args = parse_args()
    ensure_venv(args.build)
    import numpy as np

    recq = os.path.join(args.build, "tools", "recq")
    if not os.access(recq, os.X_OK):
        sys.exit(f"{recq} not found: build the recq_cli target first")
    r = args.resolution
    ok = True
    rows = []
    with tempfile.TemporaryDirectory(prefix="recq-ort-") as tmp:
        rng = np.random.default_rng(20261121)
        x = rng.uniform(-1.0, 1.0, size=(1, 3, r, r)).astype(np.float32)
        in_path = os.path.join(tmp, "input.f32")
        x.astype("<f4").tofile(in_path)
        for name in args.models.split(","):
            model = os.path.join(tmp, f"mobilenet_{name}_{r}.onnx")
            subprocess.run([recq, "export-mobilenet", f"--model={name}", f"--resolution={r}", model],
                           check=True, stdout=subprocess.DEVNULL)
            ort_ms, expected = run_ort(model, x, args.runs)
            out_path = os.path.join(tmp, f"prob_{name}.f32")
            recq_ms = run_recq(recq, model, in_path, out_path, args.runs)
            actual = np.fromfile(out_path, dtype="<f4").reshape(expected.shape)
            expected = expected.astype(np.float64)
            rel = float(np.linalg.norm(actual - expected) / max(np.linalg.norm(expected), 1e-30))
            agree = rel < MAX_REL_L2
            ok &= agree
            rows.append((name, ort_ms, recq_ms, rel, agree))
    print(f"MobileNet at {r}x{r}, batch 1, float32; median of {args.runs} runs each")
    print(f"{'model':<6} {'onnxruntime ms':>15} {'recq ms':>10} {'recq/ort':>9} {'rel L2 err':>11}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([{"model": n, "onnxruntime_ms": o, "recq_ms": q, "rel_l2": e}
                       for n, o, q, e, _ in rows], f, indent=1)
    for name, ort_ms, recq_ms, rel, agree in rows:
        print(f"{name:<6} {ort_ms:>15.3f} {recq_ms:>10.3f} {recq_ms / ort_ms:>8.2f}x {rel:>11.2e}"
              f"{'' if agree else '  MISMATCH (>= %g)' % MAX_REL_L2}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
