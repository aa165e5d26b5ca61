#!/usr/bin/env python3
"""The model set on the GPU machine: recq replay (the bundle's `recq run` on
the NVIDIA OpenCL driver) vs PyTorch eager and CUDA-graph replay, TF32 off and
on, on the same ONNX files, weights and input. Run by bench/gpu/measure.sh.

Usage (repository root, after `source gpu-bundle/env.sh`):
  python3 bench/gpu/model_set_gpu.py [--models all|quick|a,b] [--runs 50]
      [--recq gpu-bundle/bin/recq] [--models-dir DIR] [--json OUT.json]
      [--precisions fp32,tf32]

The models come from bench/models/export_models.py, imported here: files in
--models-dir (default $RECQ_MODELS_DIR, else /tmp/recq-models) are reused when
complete and exported with this machine's torch otherwise (the run tool
carries at most 64 MiB of untracked files, less than VGG-11 alone, so the set
is normally exported here: about a minute or two). The PyTorch module is
rebuilt by the same code (export_models.make_model: same seed, same
BatchNorm calibration), so PyTorch and the ONNX file have the same weights.

Per model: recq's median of --runs runs after its warm-up (--backend=replay,
--device=nvidia), its output against onnxruntime's (the .ort.f32 the export
wrote); PyTorch eager and CUDA-graph medians for TF32 off and on (cuDNN
convolutions and matmuls), each run synchronized (like `recq run`), after
warm-up, cudnn.benchmark on, with their outputs' relative L2 error against
onnxruntime's; recq's outputs also against PyTorch's fp32 (TF32 off) eager
one. With --precisions fp32,tf32 recq runs each model at each precision
(`recq run --precision=P`; rows "recq" and "recq_tf32"), so recq's tf32
products sit beside PyTorch's TF32 in one sweep. Failures (recq cannot load
a model, a graph cannot be captured) are recorded with their first line and
the sweep goes on.
"""
import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import time
import warnings

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "bench", "models"))
import export_models as em  # noqa: E402

LATENCY_RE = re.compile(
    r"latency over (\d+) runs \(after [^)]*\): min ([\d.]+) ms, median ([\d.]+) ms, "
    r"p90 ([\d.]+) ms")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default="all", help="names, 'quick' or 'all' (default)")
    p.add_argument("--runs", type=int, default=50, help="timed runs per measurement (>= 20)")
    p.add_argument("--recq", default="gpu-bundle/bin/recq", help="the recq CLI (bundle)")
    p.add_argument("--device", default="nvidia", help="recq --device (default nvidia)")
    p.add_argument("--backend", default="replay", help="recq --backend (default replay)")
    p.add_argument("--models-dir", default=os.environ.get("RECQ_MODELS_DIR", "/tmp/recq-models"))
    p.add_argument("--json", default="gpu-results/model_set_gpu.json")
    p.add_argument("--timeout-s", type=int, default=300, help="limit per recq call")
    p.add_argument("--skip-recq", action="store_true")
    p.add_argument("--tune", choices=["none", "fast", "exhaustive"], default="none",
                   help="run `recq tune` (its fast budget, or --exhaustive) on each model before "
                        "measuring it; none: the run's own default fast tuning")
    p.add_argument("--skip-torch", action="store_true")
    p.add_argument("--precisions", default="fp32",
                   help="recq --precision values, comma-separated (default fp32)")
    return p.parse_args()


def rel_l2(actual, expected):
    import numpy as np
    a = np.asarray(actual, dtype=np.float64).ravel()
    e = np.asarray(expected, dtype=np.float64).ravel()
    if a.shape != e.shape:
        return float("inf")
    return float(np.linalg.norm(a - e) / max(np.linalg.norm(e), 1e-30))


def first_line(text):
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def run_recq(args, onnx_path, in_path, out_path, precision="fp32"):
    flags = [f"--device={args.device}", f"--precision={precision}"]
    if args.tune != "none":
        tune = [args.recq, "tune", onnx_path] + flags
        if args.tune == "exhaustive":
            tune.append("--exhaustive")
        subprocess.run(tune, capture_output=True, text=True, timeout=args.timeout_s)
    cmd = [args.recq, "run", onnx_path, f"--input=input={in_path}",
           f"--output=output={out_path}", f"--runs={args.runs}", f"--backend={args.backend}"] + flags
    start = time.perf_counter()
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout_s)
        out, err, rc = res.stdout, res.stderr, res.returncode
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err, rc = f"timed out after {args.timeout_s} s", -1
    r = {"wall_s": round(time.perf_counter() - start, 2)}
    m = re.search(r"^device: (.*)$", out, re.M)
    if m:
        r["device"] = m.group(1)
    m = re.search(r"(\d+) dispatches, compile ([\d.]+) ms", out)
    if m:
        r.update(dispatches=int(m.group(1)), compile_ms=float(m.group(2)))
    m = re.search(r"^backend: (\S+)", out, re.M)
    if m:
        r["backend"] = m.group(1)
    m = LATENCY_RE.search(out)
    if rc == 0 and m:
        r.update(ok=True, runs=int(m.group(1)), min_ms=float(m.group(2)),
                 median_ms=float(m.group(3)), p90_ms=float(m.group(4)))
    else:
        r.update(ok=False, error=re.sub(r"^recq run: ", "",
                                        first_line(err) or first_line(out[-2000:]) or f"rc {rc}"))
    return r


def set_tf32(torch, on):
    """TF32 for cuDNN convolutions and for matmuls (the flags that exist in
    every torch 2.x; newer ones map them onto fp32_precision)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.backends.cuda.matmul.allow_tf32 = on
        torch.backends.cudnn.allow_tf32 = on
        return {"matmul_allow_tf32": bool(torch.backends.cuda.matmul.allow_tf32),
                "cudnn_allow_tf32": bool(torch.backends.cudnn.allow_tf32)}


def timed(torch, fn, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), min(times)


def torch_measure(torch, model, x, expected, runs):
    """Eager and CUDA-graph medians of MODEL on X; outputs vs EXPECTED."""
    r = {}
    with torch.no_grad():
        for _ in range(10):
            y = model(x)
        torch.cuda.synchronize()
        r["eager_ms_median"], r["eager_ms_min"] = timed(torch, lambda: model(x), runs)
        r["eager_output"] = model(x).float().cpu().numpy()
        r["eager_rel_l2"] = rel_l2(r["eager_output"], expected)
        try:
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
            r["cuda_graph_ms_median"], r["cuda_graph_ms_min"] = timed(torch, graph.replay, runs)
            r["cuda_graph_rel_l2"] = rel_l2(static_y.float().cpu().numpy(), expected)
            del graph, static_y
        except Exception as e:  # noqa: BLE001: a model that cannot be captured is data
            r["cuda_graph_error"] = f"{type(e).__name__}: {first_line(str(e))}"
    del y
    return r


def main():
    args = parse_args()
    args.runs = max(args.runs, 20)
    import numpy as np
    names = em.parse_models(args.models)
    sweep = time.perf_counter()
    print(f"== exporting what {args.models_dir} lacks (torch here)", flush=True)
    # Files exported by another torch than this one may have other weights
    # than make_model() builds here: those are exported again.
    stale = []
    if not args.skip_torch:
        import torch
        for name in names:
            path = os.path.join(args.models_dir, em.stem(name) + ".json")
            try:
                with open(path) as f:
                    if json.load(f)["versions"]["torch"] != torch.__version__:
                        stale.append(name)
            except (OSError, ValueError, KeyError):
                pass
    manifests = em.export([n for n in names if n not in stale], args.models_dir,
                          log=lambda s: print("  " + s, flush=True))
    if stale:
        manifests.update(em.export(stale, args.models_dir, force=True,
                                   log=lambda s: print("  " + s + " (re-exported)", flush=True)))
    report = {"date": datetime.datetime.now().isoformat(timespec="seconds"),
              "settings": {"runs": args.runs, "recq_backend": args.backend, "recq_tune": args.tune,
                           "recq_device": args.device, "timing": "median wall ms per inference, "
                           "each run synchronized, after warm-up"},
              "models": []}
    torch = None
    if not args.skip_torch:
        import torch
        import torchvision
        torch.backends.cudnn.benchmark = True
        report["torch"] = {"version": torch.__version__, "torchvision": torchvision.__version__,
                           "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
                           "device": torch.cuda.get_device_name(0)}
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    for name in names:
        man = manifests[name]
        row = {"model": name}
        report["models"].append(row)
        if "error" in man:
            row["export_error"] = man["error"]
            print(f"== {name}: export failed: {man['error']}", flush=True)
            continue
        d = args.models_dir
        onnx_path = os.path.join(d, man["files"]["onnx"]["file"])
        in_path = os.path.join(d, man["files"]["input"]["file"])
        x_np = np.fromfile(in_path, dtype="<f4").reshape(man["input_shape"])
        expected = np.fromfile(os.path.join(d, man["files"]["ort_output"]["file"]), dtype="<f4")
        row.update(input_shape=man["input_shape"], export_versions=man["versions"])
        print(f"== {name}", flush=True)
        for precision in ([] if args.skip_recq else args.precisions.split(",")):
            key = "recq" if precision == "fp32" else f"recq_{precision}"
            out_path = os.path.join(d, f"{man['stem']}.{key}_gpu.f32")
            q = run_recq(args, onnx_path, in_path, out_path, precision)
            q["output"] = out_path
            if q["ok"]:
                q["rel_l2_vs_ort"] = rel_l2(np.fromfile(out_path, dtype="<f4"), expected)
                print(f"  {key} {q['backend']}: {q['median_ms']:.3f} ms median, "
                      f"{q.get('dispatches')} dispatches, rel L2 vs ORT {q['rel_l2_vs_ort']:.1e}",
                      flush=True)
            else:
                print(f"  {key}: fails: {q['error']}", flush=True)
            row[key] = q
            if q.get("device"):
                report["recq_device"] = q["device"]
        if torch is not None:
            try:
                model = em.make_model(name).cuda()
                x = torch.from_numpy(x_np).cuda()
                for tf32 in (False, True):
                    key = "tf32_on" if tf32 else "tf32_off"
                    flags = set_tf32(torch, tf32)
                    row[f"torch_{key}"] = dict(torch_measure(torch, model, x, expected, args.runs),
                                               flags=flags)
                    t = row[f"torch_{key}"]
                    # recq's outputs against PyTorch's fp32 (TF32 off) eager one too.
                    eager = t.pop("eager_output")
                    for q in (v for k, v in row.items() if k.startswith("recq") and not tf32):
                        if q.get("ok") and os.path.exists(q.get("output", "")):
                            q["rel_l2_vs_torch_fp32"] = rel_l2(
                                np.fromfile(q["output"], dtype="<f4"), eager)
                    print(f"  torch {key}: eager {t['eager_ms_median']:.3f} ms, CUDA graph "
                          + (f"{t['cuda_graph_ms_median']:.3f} ms" if "cuda_graph_ms_median" in t
                             else t.get("cuda_graph_error", "?")), flush=True)
                del model, x
            except Exception as e:  # noqa: BLE001
                row["torch_error"] = f"{type(e).__name__}: {first_line(str(e))}"
                print(f"  torch: fails: {row['torch_error']}", flush=True)
            finally:
                set_tf32(torch, False)
                torch.cuda.empty_cache()
        with open(args.json, "w") as f:  # after every model: a cut-off sweep keeps its rows
            json.dump(report, f, indent=1)
    report["sweep_s"] = round(time.perf_counter() - sweep, 1)
    with open(args.json, "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    print_table(report)
    print(f"JSON: {args.json}")
    return 0


def print_table(report):
    def ms(v):
        return f"{v:.3f}" if isinstance(v, float) else "-"
    print(f"\nmodel set on {report.get('recq_device') or report.get('torch', {}).get('device')}: "
          f"median ms per inference over {report['settings']['runs']} runs; sweep "
          f"{report.get('sweep_s', 0):.0f} s")
    print(f"{'model':<29} {'recq':>8} {'eager':>8} {'graph':>8} {'eager32':>8} {'graph32':>8} "
          f"{'recq/graph':>10} {'recq/graph32':>12}  recq rel L2 (ORT, PyTorch fp32)")
    for r in report["models"]:
        q = r.get("recq", {})
        off, on = r.get("torch_tf32_off", {}), r.get("torch_tf32_on", {})
        g, g32 = off.get("cuda_graph_ms_median"), on.get("cuda_graph_ms_median")
        rq = q.get("median_ms")
        print(f"{r['model']:<29} {ms(rq):>8} {ms(off.get('eager_ms_median')):>8} {ms(g):>8} "
              f"{ms(on.get('eager_ms_median')):>8} {ms(g32):>8} "
              f"{(f'{rq / g:.2f}x' if rq and g else '-'):>10} "
              f"{(f'{rq / g32:.2f}x' if rq and g32 else '-'):>12}  "
              + (f"{q['rel_l2_vs_ort']:.1e}, {q.get('rel_l2_vs_torch_fp32', float('nan')):.1e}"
                 if q.get("ok") else f"fails: {q.get('error', r.get('export_error', '-'))[:80]}"))
    if not any("recq_tf32" in r for r in report["models"]):
        return

    def l2(v):
        return f"{v:.1e}" if isinstance(v, float) else "-"
    print("\nrecq --precision=tf32 beside PyTorch's TF32 CUDA graph "
          "(relative L2 against onnxruntime's output)")
    print(f"{'model':<29} {'recq tf32':>9} {'graph32':>8} {'ratio':>7} {'recq L2':>8} "
          f"{'torch L2':>8}")
    for r in report["models"]:
        q, on = r.get("recq_tf32", {}), r.get("torch_tf32_on", {})
        rq, g32 = q.get("median_ms"), on.get("cuda_graph_ms_median")
        print(f"{r['model']:<29} {ms(rq):>9} {ms(g32):>8} "
              f"{(f'{rq / g32:.2f}x' if rq and g32 else '-'):>7} "
              f"{l2(q.get('rel_l2_vs_ort')):>8} {l2(on.get('cuda_graph_rel_l2')):>8}")


if __name__ == "__main__":
    sys.exit(main())
