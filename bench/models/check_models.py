#!/usr/bin/env python3
"""Checks that recq loads each exported model and matches onnxruntime.

Usage: python3 bench/models/check_models.py [--models-dir DIR] [--build DIR]
           [--stems a,b] [--json FILE] [--markdown FILE] [--timeout S]

For every manifest with named inputs in --models-dir (default BUILD/models,
written by bench/models/export_models.py --models families or everything),
runs `BUILD/tools/recq run STEM.onnx --input=NAME=FILE,... --output=NAME=FILE`
on the manifest's inputs and compares each output with onnxruntime's
(relative L2 below 1e-4), and with PyTorch's own output where the export
wrote one (STEM.torch.NAME.bin: fp32 on the exporting machine's CPU). Per
model it records whether recq loaded it (else the first line of its error),
the worst relative L2 against each and the wall time of the run (import,
compile and one run). Writes a table to stdout, --json and
--markdown. Models that fail are data: exits 0 unless recq itself is missing.
Needs only numpy (this Python or BUILD/.venv-models).
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_models import rel_l2  # noqa: E402

MAX_REL_L2 = 1e-4


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", default=os.environ.get("RECQ_BUILD_DIR") or "build")
    p.add_argument("--models-dir", help="default: BUILD/models")
    p.add_argument("--stems", help="comma-separated stems (default: every family manifest)")
    p.add_argument("--json", help="write the results here")
    p.add_argument("--markdown", help="write the table here")
    p.add_argument("--timeout", type=float, default=900, help="seconds per model (900)")
    p.add_argument("--device", help="recq --device (default: recq's default)")
    return p.parse_args()


def check(recq, models_dir, manifest, timeout, device):
    import numpy as np
    st = manifest["stem"]
    onnx_path = os.path.join(models_dir, manifest["files"]["onnx"]["file"])
    result = {"stem": st, "model": manifest["model"], "family": manifest.get("family", ""),
              "exporter": manifest.get("exporter", ""), "opset": manifest.get("opset")}
    with tempfile.TemporaryDirectory() as tmp:
        ins = ",".join(f"{i['name']}={os.path.join(models_dir, i['file'])}"
                       for i in manifest["inputs"])
        outs = ",".join(f"{o['name']}={os.path.join(tmp, o['name'] + '.bin')}"
                        for o in manifest["outputs"])
        cmd = [recq, "run", onnx_path, f"--input={ins}", f"--output={outs}", "--runs=1"]
        if device:
            cmd.append(f"--device={device}")
        start = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            result.update(loads=False, error=f"timed out after {timeout:.0f} s")
            return result
        result["wall_s"] = round(time.perf_counter() - start, 2)
        if proc.returncode != 0:
            lines = [l for l in (proc.stderr + proc.stdout).splitlines() if l.strip()]
            err = next((l for l in lines if l.startswith("recq ")), lines[-1] if lines else "failed")
            err = err.replace(onnx_path + ": ", "")
            result.update(loads=False, error=err.strip()[:300])
            return result
        result["loads"] = True
        worst, worst_torch = 0.0, None
        for o in manifest["outputs"]:
            dtype = np.dtype(o["dtype"]).newbyteorder("<")
            expected = np.fromfile(os.path.join(models_dir, o["file"]), dtype=dtype)
            path = os.path.join(tmp, o["name"] + ".bin")
            got = np.fromfile(path, dtype=dtype) if os.path.exists(path) else np.zeros(0)
            worst = max(worst, rel_l2(got, expected))
            if o.get("torch_file"):
                want = np.fromfile(os.path.join(models_dir, o["torch_file"]), dtype=dtype)
                worst_torch = max(worst_torch or 0.0, rel_l2(got, want))
        result["rel_l2"] = worst
        result["matches"] = worst < MAX_REL_L2
        if worst_torch is not None:
            # Against PyTorch's fp32 output on the exporting machine's CPU.
            result["torch_rel_l2"] = worst_torch
            result["matches_torch"] = worst_torch < MAX_REL_L2
    return result


def main():
    args = parse_args()
    recq = os.path.join(args.build, "tools", "recq")
    if not os.path.exists(recq):
        sys.exit(f"{recq} is missing: build recq first (bash scripts/build.sh)")
    models_dir = args.models_dir or os.path.join(args.build, "models")
    manifests = []
    for f in sorted(os.listdir(models_dir)):
        if not f.endswith(".json") or f == "models.json":
            continue
        with open(os.path.join(models_dir, f)) as fh:
            m = json.load(fh)
        if "inputs" in m and "stem" in m:
            manifests.append(m)
    if args.stems:
        wanted = args.stems.split(",")
        manifests = [m for m in manifests if m["stem"] in wanted]
    results = []
    for m in manifests:
        r = check(recq, models_dir, m, args.timeout, args.device)
        results.append(r)
        status = ("matches" if r.get("matches") else
                  f"differs (rel L2 {r['rel_l2']:.1e})" if r.get("loads") else
                  f"does not load: {r.get('error')}")
        if "torch_rel_l2" in r:
            status += (f"; PyTorch {'matches' if r['matches_torch'] else 'differs'} "
                       f"(rel L2 {r['torch_rel_l2']:.1e})")
        print(f"{r['stem']:<40} {status}", flush=True)
    ok = sum(1 for r in results if r.get("matches"))
    print(f"{ok} of {len(results)} models load and match onnxruntime (rel L2 < {MAX_REL_L2:g})")
    with_torch = [r for r in results if "torch_rel_l2" in r]
    if with_torch:
        ok = sum(1 for r in with_torch if r["matches_torch"])
        print(f"{ok} of {len(with_torch)} with PyTorch outputs match PyTorch (rel L2 < "
              f"{MAX_REL_L2:g})")
    report = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "machine": platform.processor() or platform.machine(),
              "command": " ".join([os.path.relpath(sys.argv[0], REPO)] + sys.argv[1:]),
              "max_rel_l2": MAX_REL_L2, "results": results}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
            f.write("\n")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("| model | exporter | opset | loads | rel L2 vs onnxruntime "
                    "| rel L2 vs PyTorch | note |\n")
            f.write("|---|---|---|---|---|---|---|\n")
            for r in results:
                ex = "dynamo" if "True" in r["exporter"] else "TorchScript"
                vs_torch = f"{r['torch_rel_l2']:.1e}" if "torch_rel_l2" in r else "—"
                f.write(f"| {r['model']} | {ex} | {r['opset']} | {'yes' if r.get('loads') else 'no'}"
                        f" | {r['rel_l2']:.1e} | {vs_torch} |" if r.get("loads") else
                        f"| {r['model']} | {ex} | {r['opset']} | no | — | — |")
                ok = r.get("matches") and r.get("matches_torch", True)
                f.write(f" {'' if ok else r.get('error', 'differs')} |\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
