#!/usr/bin/env python3
"""recq's replay vs onnxruntime (CPU) on the same models: MobileNet V1 and V2,
or (--model-set) the torchvision model set of bench/models/export_models.py.

Usage: python3 bench/compare_onnxruntime.py [--build build] [--resolution 224]
       python3 bench/compare_onnxruntime.py --model-set [--quick] [--models a,b]

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

--model-set: runs inside BUILD/.venv-models (bench/models/setup_venv.sh: torch
for the exports) and exports what BUILD/models lacks. Per model: recq loads it
or not (the first line of `recq run`'s error, the stage it failed at and the
ops `recq info` calls unsupported), recq's output against onnxruntime's
(relative L2 below 1e-4), onnxruntime's median of max(--runs, 20) runs after 5
warm-ups and recq's median after its warm-up: --runs runs, fewer (at least
--min-recq-runs) where one run is slow, to keep each model's timed runs near
--recq-budget-s (slow models on PoCL). A table on stdout, JSON in
BUILD/bench/model_set.json, a plot in BUILD/bench/model_set.png. Models that
fail are data, not an error: exits 0 unless the tools themselves fail.
"""
import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV_DIR = ".venv-ort"
PACKAGES = ["onnxruntime", "numpy"]
MODELS_VENV_DIR = ".venv-models"
LATENCY_RE = re.compile(
    r"latency over (\d+) runs \(after [^)]*\): min ([\d.]+) ms, median ([\d.]+) ms, "
    r"p90 ([\d.]+) ms")
MAX_REL_L2 = 1e-4


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", default="build", help="recq build tree (default: build)")
    p.add_argument("--resolution", type=int, default=224, help="input height and width")
    p.add_argument("--runs", type=int, default=20, help="timed runs per engine (default: 20)")
    p.add_argument("--models",
                   help="MobileNet: comma-separated v1, v2 (default both); --model-set: names "
                        "from bench/models/export_models.py --list, 'quick' or 'all' (default)")
    p.add_argument("--json", help="also write the results here as JSON (--model-set: default "
                                  "BUILD/bench/model_set.json)")
    g = p.add_argument_group("model set")
    g.add_argument("--model-set", action="store_true",
                   help="the torchvision model set instead of MobileNet")
    g.add_argument("--quick", action="store_true",
                   help="the quick subset (like --models quick) with a 5 s recq budget")
    g.add_argument("--models-dir", help="exported models (default BUILD/models)")
    g.add_argument("--plot", help="PNG plot (default BUILD/bench/model_set.png)")
    g.add_argument("--recq-budget-s", type=float, default=15.0,
                   help="about how long recq's timed runs of one model may take (default 15)")
    g.add_argument("--min-recq-runs", type=int, default=5,
                   help="fewest timed recq runs however slow a run is (default 5)")
    g.add_argument("--timeout-s", type=int, default=900, help="limit per recq call (default 900)")
    g.add_argument("--backend", default="replay", help="recq --backend (default replay)")
    g.add_argument("--recq-tuning", choices=["off", "fast", "exhaustive"],
                   help="recq's auto-tuner for every compile ($RECQ_TUNING; default: recq's, fast)")
    g.add_argument("--from-json", metavar="JSON",
                   help="print the table and draw the plot of an earlier --model-set run")
    args = p.parse_args()
    if args.from_json:
        args.model_set = True
    if args.quick:
        args.model_set = True
        args.models = args.models or "quick"
        args.recq_budget_s = min(args.recq_budget_s, 5.0)
    if args.models is None:
        args.models = "all" if args.model_set else "v1,v2"
    return args


def ensure_venv(build, model_set=False):
    """Re-executes this script inside BUILD/.venv-ort (MobileNet) or
    BUILD/.venv-models (--model-set), creating it if needed."""
    venv = os.path.abspath(os.path.join(build, MODELS_VENV_DIR if model_set else VENV_DIR))
    python = os.path.join(venv, "bin", "python3")
    if os.path.realpath(sys.prefix) == os.path.realpath(venv):
        return
    if model_set:
        # setup_venv.sh returns at once when the venv is complete.
        env = dict(os.environ, RECQ_BUILD_DIR=os.path.abspath(build))
        subprocess.run(["bash", os.path.join(REPO, "bench", "models", "setup_venv.sh")],
                       check=True, env=env, stdout=subprocess.DEVNULL if os.path.exists(python)
                       else None)
    elif not os.path.exists(python):
        print(f"creating {venv} (onnxruntime, numpy from PyPI)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([python, "-m", "pip", "install", "--quiet", "--upgrade", "pip"], check=True)
        subprocess.run([python, "-m", "pip", "install", "--quiet"] + PACKAGES, check=True)
    os.execv(python, [python, os.path.abspath(__file__)] + sys.argv[1:])


def run_ort(model, x, runs, warmup=5, stats=False):
    import numpy as np
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 2
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    feeds = {sess.get_inputs()[0].name: x}
    for _ in range(warmup):
        out = sess.run(None, feeds)
    ms = []
    for _ in range(runs):
        start = time.perf_counter()
        out = sess.run(None, feeds)
        ms.append((time.perf_counter() - start) * 1e3)
    if stats:
        return float(np.median(ms)), out[0], {"ort_min_ms": float(np.min(ms)),
                                              "ort_p90_ms": float(np.percentile(ms, 90))}
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
    ensure_venv(args.build, args.model_set)
    if args.model_set:
        return model_set_main(args)
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



# ---------------------------------------------------------------- model set

def rel_l2(actual, expected):
    import numpy as np
    a = np.asarray(actual, dtype=np.float64).ravel()
    e = np.asarray(expected, dtype=np.float64).ravel()
    if a.shape != e.shape:
        return float("inf")
    return float(np.linalg.norm(a - e) / max(np.linalg.norm(e), 1e-30))


def first_line(text):
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def recq_run_model(recq, model, in_path, out_path, runs, backend, timeout, tuning=None):
    """One `recq run`: {'ok', 'stage', 'error', 'median_ms', ...}."""
    cmd = [recq, "run", model, f"--input=input={in_path}", f"--output=output={out_path}",
           f"--runs={runs}", f"--backend={backend}"]
    env = dict(os.environ)
    if tuning:
        env["RECQ_TUNING"] = tuning
    start = time.perf_counter()
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        stdout, stderr, rc = res.stdout, res.stderr, res.returncode
    except subprocess.TimeoutExpired as e:
        stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        stderr, rc = f"timed out after {timeout} s", -1
    r = {"wall_s": round(time.perf_counter() - start, 2), "rc": rc}
    m = re.search(r"^device: (.*)$", stdout, re.M)
    if m:
        r["device"] = m.group(1)
    m = re.search(r"^model: .*, (\d+) graph nodes; (\d+) dispatches(?: after passes)?, compile ([\d.]+) ms",
                  stdout, re.M)
    if m:
        r.update(graph_nodes=int(m.group(1)), dispatches=int(m.group(2)),
                 compile_ms=float(m.group(3)))
    m = re.search(r"^backend: (\S+)", stdout, re.M)
    if m:
        r["backend"] = m.group(1)
    m = re.search(r"^tuning: ([\d.]+) ms, (\d+) keys, (\d+) from the tuning cache, (\d+) measured, "
                  r"(\d+) over budget", stdout, re.M)
    if m:
        r.update(tuning_ms=float(m.group(1)), tuning_keys=int(m.group(2)),
                 tuning_cache_hits=int(m.group(3)), tuning_measured=int(m.group(4)),
                 tuning_over_budget=int(m.group(5)))
    m = LATENCY_RE.search(stdout)
    if rc == 0 and m:
        r.update(ok=True, runs=int(m.group(1)), min_ms=float(m.group(2)),
                 median_ms=float(m.group(3)), p90_ms=float(m.group(4)))
        return r
    # Where it stopped: LoadOnnx runs before the device line, Engine::Compile
    # before the model line, Record and the runs after it.
    r["ok"] = False
    r["stage"] = ("import" if "device" not in r else "compile" if "dispatches" not in r
                  else "record" if "backend" not in r else "run")
    err = first_line(stderr) or first_line(stdout[-2000:]) or f"exit code {rc}"
    r["error"] = re.sub(r"^recq run: ", "", err)
    return r


def recq_unsupported_ops(recq, model):
    try:
        res = subprocess.run([recq, "info", model], capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return None
    m = re.search(r"^unsupported ops: (.*)$", res.stdout, re.M)
    return [op.strip() for op in m.group(1).split(",")] if m else []


def machine_info():
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^model name\s*: (.*)$", f.read(), re.M)
            cpu = m.group(1) if m else cpu
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "host": platform.node(),
            "python": platform.python_version(),
            "loadavg_1_5_15": [round(v, 2) for v in os.getloadavg()]}


def short(text, width):
    return text if len(text) <= width else text[:width - 3] + "..."


def print_table(rows, runs_note):
    """ORT~torch: onnxruntime vs PyTorch eager on the same input (from the
    export): how far two mature float32 implementations already differ."""
    print(runs_note)
    hdr = (f"{'model':<29} {'loads':<6} {'matches':<9} {'rel L2':>8} {'recq ms':>9} {'ORT ms':>8} "
           f"{'recq/ORT':>8} {'of mins':>7} {'runs':>4} {'disp':>5} {'ORT~torch':>9}")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        if "export_error" in r:
            print(f"{r['model']:<29} export failed: {r['export_error']}")
            continue
        q = r["recq"]
        ort_ms = r.get("ort_ms")
        if not q.get("ok"):
            ops = r.get("unsupported_ops")
            print(f"{r['model']:<29} {'no':<6} {'-':<9} {'-':>8} {'-':>9} {ort_ms:>8.2f}  "
                  f"{failure_summary(r)}" + (f": {', '.join(ops)}" if len(ops) > 1 else ""))
            continue
        match = "yes" if r["matches"] else "NO"
        print(f"{r['model']:<29} {'yes':<6} {match:<9} {r['rel_l2']:>8.1e} {q['median_ms']:>9.2f} "
              f"{ort_ms:>8.2f} {r['ratio']:>7.2f}x {r.get('ratio_of_mins', float('nan')):>6.2f}x {q['runs']:>4} "
              f"{q.get('dispatches', 0):>5} "
              f"{r.get('ort_vs_torch_rel_l2') or 0:>9.1e}")


def failure_summary(r):
    """'does not load (import): LayerNormalization (+1 more unsupported op)'."""
    q = r["recq"]
    m = re.search(r"op type '([^']+)' is not supported", q["error"])
    ops = r.get("unsupported_ops") or []
    if m:
        more = len([o for o in ops if o != m.group(1)])
        return (f"does not load ({q['stage']}): {m.group(1)}"
                + (f" (+{more} more unsupported op{'s' if more > 1 else ''})" if more else ""))
    return f"fails ({q['stage']}): {short(q['error'], 60)}"


def plot_model_set(report, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in report["models"] if "ort_ms" in r]
    fig, ax = plt.subplots(figsize=(11, 0.42 * len(rows) + 1.6))
    ys = list(range(len(rows)))[::-1]
    for y, r in zip(ys, rows):
        ax.barh(y + 0.2, r["ort_ms"], height=0.38, color="C1")
        q = r["recq"]
        if q.get("ok"):
            color = "C0" if r["matches"] else "C3"
            ax.barh(y - 0.2, q["median_ms"], height=0.38, color=color)
            ax.text(max(q["median_ms"], r["ort_ms"]) * 1.08, y,
                    f"{r['ratio']:.2f}x" + ("" if r["matches"] else f"  mismatch {r['rel_l2']:.0e}"),
                    va="center", fontsize=8)
        else:
            ax.text(r["ort_ms"] * 1.08, y - 0.2, f"recq: {failure_summary(r)}",
                    va="center", fontsize=7, color="C3")
    from matplotlib.patches import Patch
    handles = [Patch(color="C1", label="onnxruntime CPU (2 intra-op threads)"),
               Patch(color="C0", label=f"recq {report['settings']['backend']}, PoCL (matches)"),
               Patch(color="C3", label="recq, PoCL (output mismatch)")]
    ax.set_yticks(ys)
    ax.set_yticklabels([r["model"] for r in rows], fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("median latency per inference, ms (log scale); label: recq / onnxruntime")
    ax.set_title(f"Model set, batch 1, float32, {report['machine']['cpu']} "
                 f"({report['machine']['cores']} cores), {report['date'][:10]}", fontsize=9)
    xmax = max([r["ort_ms"] for r in rows] + [r["recq"].get("median_ms", 0) for r in rows])
    ax.set_xlim(right=xmax * 60)
    ax.legend(handles=handles, loc="upper right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def table_note(report):
    st = report["settings"]
    return (f"Model set, batch 1, float32: onnxruntime {report['versions']['onnxruntime']} CPU "
            f"(2 intra-op threads, median of {st['ort_runs']} runs after 5 warm-ups) vs recq "
            f"{st['backend']} on {report.get('device', 'its device')} (median of up to "
            f"{st['recq_runs']} runs after 1 warm-up); matches: relative L2 < {st['max_rel_l2']:g}; "
            f"sweep {report.get('sweep_s', 0):.0f} s, load average "
            f"{report['machine'].get('loadavg_1_5_15', ['?'])[0]} at the start")


def report_out(report, json_path, plot_path):
    print_table(report["models"], table_note(report))
    try:
        plot_model_set(report, plot_path)
        print(f"\nJSON: {json_path}\nplot: {plot_path}")
    except ImportError as e:
        print(f"\nJSON: {json_path}\nno plot ({e})")
    loaded = [r for r in report["models"] if r.get("recq", {}).get("ok")]
    print(f"{len(loaded)} of {len(report['models'])} models load in recq, "
          f"{sum(1 for r in loaded if r['matches'])} match onnxruntime")


def model_set_main(args):
    if args.from_json:
        with open(args.from_json) as f:
            report = json.load(f)
        plot = args.plot or os.path.splitext(args.from_json)[0] + ".png"
        report_out(report, args.from_json, plot)
        return 0
    import numpy as np
    sys.path.insert(0, os.path.join(REPO, "bench", "models"))
    import export_models as em
    import onnxruntime

    recq = os.path.join(args.build, "tools", "recq")
    if not os.access(recq, os.X_OK):
        sys.exit(f"{recq} not found: build the recq_cli target first")
    names = em.parse_models(args.models)
    models_dir = args.models_dir or os.path.join(args.build, "models")
    bench_dir = os.path.join(args.build, "bench")
    os.makedirs(bench_dir, exist_ok=True)
    json_path = args.json or os.path.join(bench_dir, "model_set.json")
    plot_path = args.plot or os.path.join(bench_dir, "model_set.png")
    ort_runs = max(args.runs, 20)
    sweep_start = time.perf_counter()
    print(f"exporting what {models_dir} lacks", flush=True)
    manifests = em.export(names, models_dir, log=lambda s: print("  " + s, flush=True))
    report = {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "machine": machine_info(),
        "versions": {"onnxruntime": onnxruntime.__version__, "numpy": np.__version__},
        "settings": {"ort_threads": 2, "ort_runs": ort_runs, "ort_warmup": 5,
                     "recq_runs": args.runs, "min_recq_runs": args.min_recq_runs,
                     "recq_budget_s": args.recq_budget_s, "recq_warmup": 1,
                     "backend": args.backend, "max_rel_l2": MAX_REL_L2,
                     "recq_tuning": args.recq_tuning or os.environ.get("RECQ_TUNING", "default"),
                     "models_dir": os.path.abspath(models_dir)},
        "models": [],
    }
    with tempfile.TemporaryDirectory(prefix="recq-model-set-") as tmp:
        for name in names:
            man = manifests[name]
            row = {"model": name}
            report["models"].append(row)
            if "error" in man:
                row["export_error"] = man["error"]
                continue
            onnx_path = os.path.join(models_dir, man["files"]["onnx"]["file"])
            in_path = os.path.join(models_dir, man["files"]["input"]["file"])
            x = np.fromfile(in_path, dtype="<f4").reshape(man["input_shape"])
            stored = np.fromfile(os.path.join(models_dir, man["files"]["ort_output"]["file"]),
                                 dtype="<f4")
            row.update(ort_vs_torch_rel_l2=man.get("ort_vs_torch_rel_l2"))
            row.update(onnx_path=onnx_path, input_shape=man["input_shape"], output_shape=man["output_shape"],
                       params=man["params"], onnx_nodes=man["onnx_nodes"],
                       onnx_ops=man["onnx_ops"], onnx_mib=round(man["files"]["onnx"]["bytes"] / 2**20, 1))
            print(f"{name}: onnxruntime", end="", flush=True)
            row["ort_ms"], expected, ort_stats = run_ort(onnx_path, x, ort_runs, stats=True)
            row.update(ort_stats)
            row["ort_runs"] = ort_runs
            row["ort_vs_export_rel_l2"] = rel_l2(expected, stored)
            # A first call of one timed run: does it load, is the output
            # right, how long does a run take (it also warms recq's and
            # PoCL's program caches for the second).
            out_path = os.path.join(tmp, name + ".out.f32")
            print(f" {row['ort_ms']:.2f} ms; recq", end="", flush=True)
            probe = recq_run_model(recq, onnx_path, in_path, out_path, 1, args.backend,
                                   args.timeout_s, args.recq_tuning)
            if not probe.get("ok"):
                row["recq"] = probe
                row["unsupported_ops"] = recq_unsupported_ops(recq, onnx_path)
                print(f" fails ({probe['stage']}): {probe['error']}", flush=True)
                continue
            runs = int(min(args.runs, max(args.min_recq_runs,
                                          args.recq_budget_s * 1e3 / max(probe["median_ms"], 1e-3))))
            q = recq_run_model(recq, onnx_path, in_path, out_path, runs, args.backend, args.timeout_s,
                               args.recq_tuning)
            q["first_call"] = {k: probe[k] for k in ("wall_s", "compile_ms", "median_ms", "tuning_ms",
                                                     "tuning_keys", "tuning_cache_hits",
                                                     "tuning_measured", "tuning_over_budget")
                               if k in probe}
            row["recq"] = q
            if not q.get("ok"):
                print(f" fails on the second call ({q['stage']}): {q['error']}", flush=True)
                continue
            actual = np.fromfile(out_path, dtype="<f4")
            row["rel_l2"] = rel_l2(actual, expected)
            row["matches"] = row["rel_l2"] < MAX_REL_L2
            row["ratio"] = q["median_ms"] / row["ort_ms"]
            row["ratio_of_mins"] = q["min_ms"] / row["ort_min_ms"]
            print(f" {q['median_ms']:.2f} ms ({q['runs']} runs, compile {q.get('compile_ms', 0):.0f} ms"
                  f" first {probe.get('compile_ms', 0):.0f} ms), rel L2 {row['rel_l2']:.1e}", flush=True)
            report["device"] = q.get("device", report.get("device"))
    report["sweep_s"] = round(time.perf_counter() - sweep_start, 1)
    # Shared machines: the load during the sweep says how far to trust it.
    report["machine"]["loadavg_at_end"] = [round(v, 2) for v in os.getloadavg()]
    with open(json_path, "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    print()
    report_out(report, json_path, plot_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
