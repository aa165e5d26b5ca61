#!/usr/bin/env python3
"""recq's replay vs onnxruntime and OpenVINO (CPU) on the same models: MobileNet
V1 and V2, or (--model-set) the torchvision model set of
bench/models/export_models.py.

Usage: python3 bench/compare_onnxruntime.py [--build build] [--resolution 224]
       python3 bench/compare_onnxruntime.py --model-set [--quick] [--models a,b]
       add --no-openvino to leave OpenVINO out

Creates a virtual environment under BUILD/.venv-ort (python3 -m venv; pip
installs onnxruntime, numpy and openvino from PyPI) on first use and re-runs
itself inside it. For each model it writes the ONNX file with
`BUILD/tools/recq export-mobilenet`, a seeded random input, runs onnxruntime
(CPU execution provider, intra_op_num_threads=2, median of --runs runs after
warm-up), OpenVINO's CPU plugin (OPENVINO_CONFIG below: latency hint, 2
inference threads, float32 inference precision unless --openvino-precision
says bf16 or f16 (OpenVINO's default on CPUs with AVX512-BF16 or AMX is bf16,
not a float32 comparison); a synchronous infer request, median of --runs runs
after warm-up) and `BUILD/tools/recq run MODEL --input input=IN --output
prob=OUT --runs N` (median parsed from its latency line), checks that recq's
and OpenVINO's outputs agree with onnxruntime's (relative L2 error below 1e-4)
and prints the medians and recq's ratios. Exits 1 when recq's output
disagrees. Where `import openvino` fails (a venv from before it was added),
one line says so and the OpenVINO columns are left out. A benchmark, not a
test: times depend on what else runs on the machine.

--model-set: runs inside BUILD/.venv-models (bench/models/setup_venv.sh: torch
for the exports) and exports what BUILD/models lacks. Per model: recq loads it
or not (the first line of `recq run`'s error, the stage it failed at and the
ops `recq info` calls unsupported), recq's output against onnxruntime's
(relative L2 below 1e-4), onnxruntime's median of max(--runs, 20) runs after 5
warm-ups, OpenVINO's (same settings as above) median of as many runs after 5
warm-ups and its output against onnxruntime's (relative L2 below 1e-4), and
recq's median after its warm-up: --runs runs, fewer (at least
--min-recq-runs) where one run is slow, to keep each model's timed runs near
--recq-budget-s (slow models on PoCL). --rounds N repeats the three timings
N times per model in turn (onnxruntime, OpenVINO, recq; sessions kept, one
`recq run` per round): each engine's figure is the median over rounds and
each ratio the median of the rounds' ratios (JSON: "rounds" per model).
After each `recq run` the script waits for the background `recq
store-binaries` it started (a hand-off file in recq's cache directory), so
that storing program binaries never shares the cores with a timed run. A
table on stdout (OV: OpenVINO), JSON in BUILD/bench/model_set.json (per
model openvino_ms, openvino_rel_l2, openvino_matches, ratio_openvino or
openvino_error; "summary": the geometric means), a plot in BUILD/bench/model_set.png, and the geometric means of
recq/onnxruntime and recq/OpenVINO over the models where all three ran and
agree. Models that fail are data, not an error: exits 0 unless the tools
themselves fail.
"""
import argparse
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV_DIR = ".venv-ort"
# The openvino pin is bench/models/setup_venv.sh's too.
OPENVINO_VERSION = "2026.4.1"
PACKAGES = ["onnxruntime", "numpy", f"openvino=={OPENVINO_VERSION}"]
MODELS_VENV_DIR = ".venv-models"
LATENCY_RE = re.compile(
    r"latency over (\d+) runs \(after [^)]*\): min ([\d.]+) ms, median ([\d.]+) ms, "
    r"p90 ([\d.]+) ms")
MAX_REL_L2 = 1e-4
# recq's tolerance under --recq-precision tf32 or fp16, which relax float32.
RELAXED_MAX_REL_L2 = 1e-3
# OpenVINO's CPU plugin set up like onnxruntime's session: one stream, 2
# threads. Its default inference precision is bf16 on CPUs with AVX512-BF16 or
# AMX, so float32 is asked for (--openvino-precision); dynamic quantization of
# activations is off.
OPENVINO_CONFIG = {"PERFORMANCE_HINT": "LATENCY", "INFERENCE_NUM_THREADS": 2,
                   "INFERENCE_PRECISION_HINT": "f32", "DYNAMIC_QUANTIZATION_GROUP_SIZE": 0}


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
    p.add_argument("--no-openvino", action="store_true",
                   help="leave OpenVINO out (default: run it where `import openvino` works)")
    p.add_argument("--openvino-precision", choices=["f32", "bf16", "f16"], default="f32",
                   help="OpenVINO's INFERENCE_PRECISION_HINT (default f32, the comparison's)")
    g = p.add_argument_group("model set")
    g.add_argument("--model-set", action="store_true",
                   help="the torchvision model set instead of MobileNet")
    g.add_argument("--quick", action="store_true",
                   help="the quick subset (like --models quick) with a 5 s recq budget")
    g.add_argument("--models-dir", help="exported models (default BUILD/models)")
    g.add_argument("--plot", help="PNG plot (default BUILD/bench/model_set.png)")
    g.add_argument("--recq-budget-s", type=float, default=15.0,
                   help="about how long recq's timed runs of one model may take (default 15)")
    g.add_argument("--rounds", type=int, default=1,
                   help="time onnxruntime, OpenVINO and recq this many times per model, in turn; "
                        "each engine's figure is the median over rounds, each ratio the median of "
                        "the rounds' ratios (default 1)")
    g.add_argument("--min-recq-runs", type=int, default=5,
                   help="fewest timed recq runs however slow a run is (default 5)")
    g.add_argument("--timeout-s", type=int, default=900, help="limit per recq call (default 900)")
    g.add_argument("--backend", default="replay", help="recq --backend (default replay)")
    g.add_argument("--recq-precision", choices=["fp32", "tf32", "fp16"], default="fp32",
                   help="recq --precision (default fp32). tf32 and fp16 relax float32 (on PoCL, "
                        "tf32 lets 3x3 convolutions take Winograd F(4x4, 3x3)); recq's output "
                        f"then matches below relative L2 {RELAXED_MAX_REL_L2:g}")
    g.add_argument("--recq-tuning", choices=["off", "fast", "exhaustive"],
                   help="recq's auto-tuner for every compile ($RECQ_TUNING; default: recq's, fast)")
    g.add_argument("--from-json", metavar="JSON",
                   help="print the table and draw the plot of an earlier --model-set run")
    args = p.parse_args()
    OPENVINO_CONFIG["INFERENCE_PRECISION_HINT"] = args.openvino_precision
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


def ort_timer(model, x, warmup=5):
    """An onnxruntime CPU session on MODEL (2 intra-op threads) after WARMUP
    runs with input X: a function of RUNS giving (median ms, first output,
    {ort_min_ms, ort_p90_ms})."""
    import numpy as np
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 2
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    feeds = {sess.get_inputs()[0].name: x}
    for _ in range(warmup):
        sess.run(None, feeds)

    def timed(runs):
        ms = []
        for _ in range(runs):
            start = time.perf_counter()
            out = sess.run(None, feeds)
            ms.append((time.perf_counter() - start) * 1e3)
        return float(np.median(ms)), out[0], {"ort_min_ms": float(np.min(ms)),
                                              "ort_p90_ms": float(np.percentile(ms, 90))}
    return timed


def run_ort(model, x, runs, warmup=5):
    median, out, _ = ort_timer(model, x, warmup)(runs)
    return median, out


def import_openvino(skip):
    """The openvino module, or None (--no-openvino, or one line saying why)."""
    if skip:
        return None
    try:
        import openvino
        return openvino
    except ImportError as e:
        print(f"openvino is not importable in {sys.prefix} ({e}): no OpenVINO column "
              f"(pip install openvino=={OPENVINO_VERSION} adds it)", flush=True)
        return None


def run_openvino(ov, model, x, runs, warmup=5):
    """OpenVINO's CPU plugin on MODEL with input X (OPENVINO_CONFIG, one
    synchronous infer request): (median ms, first output, stats). Inputs and
    outputs are shared with numpy, not copied, in the timed calls."""
    timed, stats = openvino_timer(ov, model, x, warmup)
    median, out, st = timed(runs)
    stats.update(st)
    return median, out, stats


def openvino_timer(ov, model, x, warmup=5):
    """run_openvino's compiled model after WARMUP runs: (a function of RUNS
    giving (median ms, output, {openvino_min_ms, openvino_p90_ms}),
    {openvino_compile_ms, openvino_compiled})."""
    import numpy as np

    core = ov.Core()
    start = time.perf_counter()
    net = core.read_model(model)
    if net.is_dynamic():
        net.reshape({0: list(x.shape)})
    compiled = core.compile_model(net, "CPU", OPENVINO_CONFIG)
    compile_ms = (time.perf_counter() - start) * 1e3
    req = compiled.create_infer_request()
    feeds = {0: x}
    for _ in range(warmup):
        req.infer(feeds, share_inputs=True, share_outputs=True)

    def timed(runs):
        ms = []
        for _ in range(runs):
            start = time.perf_counter()
            req.infer(feeds, share_inputs=True, share_outputs=True)
            ms.append((time.perf_counter() - start) * 1e3)
        out = np.array(req.get_output_tensor(0).data, copy=True)
        return float(np.median(ms)), out, {"openvino_min_ms": float(np.min(ms)),
                                           "openvino_p90_ms": float(np.percentile(ms, 90))}
    stats = {"openvino_compile_ms": round(compile_ms, 1), "openvino_compiled": {}}
    # What the plugin made of OPENVINO_CONFIG (a precision prints as 'f32').
    for key in ("INFERENCE_PRECISION_HINT", "INFERENCE_NUM_THREADS", "NUM_STREAMS"):
        value = compiled.get_property(key)
        stats["openvino_compiled"][key] = (value.get_type_name() if hasattr(value, "get_type_name")
                                           else str(value))
    return timed, stats


def recq_cache_dir():
    """recq's cache directory as the engine resolves it: $RECQ_CACHE_DIR,
    else $XDG_CACHE_HOME/recq (absolute only), else ~/.cache/recq."""
    if os.environ.get("RECQ_CACHE_DIR"):
        return os.environ["RECQ_CACHE_DIR"]
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if xdg.startswith("/"):
        return os.path.join(xdg, "recq")
    return os.path.join(os.path.expanduser("~"), ".cache", "recq")


def wait_store(cache_dir, limit_s=600):
    """Waits until recq's background `recq store-binaries` has stored what a
    `recq run` handed it (no hand-off file left in CACHE_DIR/handoff), so that
    it does not share the cores with the next engine's timed runs."""
    deadline = time.monotonic() + limit_s
    handoff = os.path.join(cache_dir, "handoff")
    while time.monotonic() < deadline:
        try:
            if not any(f.endswith(".pending") for f in os.listdir(handoff)):
                return
        except FileNotFoundError:
            return
        time.sleep(0.1)


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
    ov = import_openvino(args.no_openvino)
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
            row = {"model": name, "onnxruntime_ms": ort_ms}
            if ov is not None:
                try:
                    row["openvino_ms"], ov_out, _ = run_openvino(ov, model, x, args.runs)
                    row["openvino_rel_l2"] = rel_l2(ov_out, expected)
                except Exception as e:  # reported, recq's comparison goes on
                    row["openvino_error"] = first_line(str(e)) or type(e).__name__
            out_path = os.path.join(tmp, f"prob_{name}.f32")
            row["recq_ms"] = run_recq(recq, model, in_path, out_path, args.runs)
            row["rel_l2"] = rel_l2(np.fromfile(out_path, dtype="<f4"), expected)
            ok &= row["rel_l2"] < MAX_REL_L2
            rows.append(row)
    print(f"MobileNet at {r}x{r}, batch 1, float32; median of {args.runs} runs each"
          + (f"; OpenVINO {ov.__version__.split('-')[0]}, {args.openvino_precision}" if ov else ""))
    ov_hdr = f" {'openvino ms':>12} {'recq/ov':>8} {'ov rel L2':>10}" if ov else ""
    print(f"{'model':<6} {'onnxruntime ms':>15} {'recq ms':>10} {'recq/ort':>9} {'rel L2 err':>11}"
          + ov_hdr)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    for row in rows:
        line = (f"{row['model']:<6} {row['onnxruntime_ms']:>15.3f} {row['recq_ms']:>10.3f} "
                f"{row['recq_ms'] / row['onnxruntime_ms']:>8.2f}x {row['rel_l2']:>11.2e}")
        if "openvino_ms" in row:
            line += (f" {row['openvino_ms']:>12.3f} {row['recq_ms'] / row['openvino_ms']:>7.2f}x "
                     f"{row['openvino_rel_l2']:>10.2e}")
        elif ov:
            line += f"  OpenVINO fails: {row['openvino_error']}"
        bad = [who for who, key in (("recq", "rel_l2"), ("OpenVINO", "openvino_rel_l2"))
               if row.get(key, 0) >= MAX_REL_L2]
        print(line + (f"  MISMATCH ({', '.join(bad)} >= {MAX_REL_L2:g})" if bad else ""))
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


def recq_run_model(recq, model, in_path, out_path, runs, backend, timeout, tuning=None,
                   precision="fp32"):
    """One `recq run`: {'ok', 'stage', 'error', 'median_ms', ...}."""
    cmd = [recq, "run", model, f"--input=input={in_path}", f"--output=output={out_path}",
           f"--runs={runs}", f"--backend={backend}", f"--precision={precision}"]
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
    m = re.search(r"^model: .*, (\d+) graph nodes(?:, precision \w+)?; (\d+) dispatches(?: after passes)?, "
                  r"compile ([\d.]+) ms", stdout, re.M)
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


def ov_cells(r):
    """The OpenVINO columns of a row: ms, recq/OV, OV's rel L2 vs onnxruntime."""
    if "openvino_ms" not in r:
        return f" {'-':>8} {'-':>7} {'-':>8}"
    ratio = f"{r['ratio_openvino']:>6.2f}x" if "ratio_openvino" in r else f"{'-':>7}"
    return (f" {r['openvino_ms']:>8.2f} {ratio} {r['openvino_rel_l2']:>8.1e}"
            + ("" if r["openvino_matches"] else "!"))


def print_table(rows, runs_note, with_ov=False):
    """ORT~torch: onnxruntime vs PyTorch eager on the same input (from the
    export): how far two mature float32 implementations already differ. OV
    L2: OpenVINO's output against onnxruntime's ('!': not below the bound)."""
    print(runs_note)
    ov_hdr = f" {'OV ms':>8} {'recq/OV':>7} {'OV L2':>8}" if with_ov else ""
    hdr = (f"{'model':<29} {'loads':<6} {'matches':<9} {'rel L2':>8} {'recq ms':>9} {'ORT ms':>8} "
           f"{'recq/ORT':>8}{ov_hdr} {'of mins':>7} {'runs':>4} {'disp':>5} {'ORT~torch':>9}")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        if "export_error" in r:
            print(f"{r['model']:<29} export failed: {r['export_error']}")
            continue
        q = r["recq"]
        ort_ms = r.get("ort_ms")
        ov = ov_cells(r) if with_ov else ""
        if not q.get("ok"):
            ops = r.get("unsupported_ops")
            print(f"{r['model']:<29} {'no':<6} {'-':<9} {'-':>8} {'-':>9} {ort_ms:>8.2f} {'-':>8}{ov}  "
                  f"{failure_summary(r)}" + (f": {', '.join(ops)}" if len(ops) > 1 else ""))
            continue
        match = "yes" if r["matches"] else "NO"
        print(f"{r['model']:<29} {'yes':<6} {match:<9} {r['rel_l2']:>8.1e} {q['median_ms']:>9.2f} "
              f"{ort_ms:>8.2f} {r['ratio']:>7.2f}x{ov} {r.get('ratio_of_mins', float('nan')):>6.2f}x "
              f"{q['runs']:>4} {q.get('dispatches', 0):>5} "
              f"{r.get('ort_vs_torch_rel_l2') or 0:>9.1e}")
    for r in rows:
        if with_ov and "openvino_error" in r:
            print(f"{r['model']}: OpenVINO fails: {r['openvino_error']}")


def geomean_ratios(rows):
    """{'models', 'recq_over_ort', 'recq_over_openvino'}: geometric means over
    the rows where recq and OpenVINO both ran and match onnxruntime (without
    OpenVINO in the report: recq/onnxruntime over recq's matching rows)."""
    import math

    def geomean(key):
        return math.exp(sum(math.log(r[key]) for r in ok) / len(ok))

    has_ov = any("openvino_ms" in r or "openvino_error" in r for r in rows)
    ok = [r for r in rows if r.get("recq", {}).get("ok") and r.get("matches")
          and (r.get("openvino_matches") or not has_ov)]
    out = {"models": [r["model"] for r in ok]}
    if ok:
        out["recq_over_ort"] = geomean("ratio")
        if has_ov:
            out["recq_over_openvino"] = geomean("ratio_openvino")
    return out


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
    with_ov = "openvino" in report["versions"]
    fig, ax = plt.subplots(figsize=(11, (0.55 if with_ov else 0.42) * len(rows) + 1.6))
    ys = list(range(len(rows)))[::-1]
    # Bars from the top: onnxruntime, OpenVINO (when measured), recq.
    h, ort_y, recq_y = (0.26, 0.28, -0.28) if with_ov else (0.38, 0.2, -0.2)
    for y, r in zip(ys, rows):
        ax.barh(y + ort_y, r["ort_ms"], height=h, color="C1")
        right = r["ort_ms"]
        if "openvino_ms" in r:
            ax.barh(y, r["openvino_ms"], height=h, color="C2" if r["openvino_matches"] else "C4")
            right = max(right, r["openvino_ms"])
        q = r["recq"]
        if q.get("ok"):
            color = "C0" if r["matches"] else "C3"
            ax.barh(y + recq_y, q["median_ms"], height=h, color=color)
            label = f"{r['ratio']:.2f}x"
            if "ratio_openvino" in r:
                label += f", {r['ratio_openvino']:.2f}x OV"
            ax.text(max(q["median_ms"], right) * 1.08, y,
                    label + ("" if r["matches"] else f"  mismatch {r['rel_l2']:.0e}"),
                    va="center", fontsize=8)
        else:
            ax.text(right * 1.08, y + recq_y, f"recq: {failure_summary(r)}",
                    va="center", fontsize=7, color="C3")
    from matplotlib.patches import Patch
    handles = [Patch(color="C1", label="onnxruntime CPU (2 intra-op threads)")]
    if with_ov:
        config = report["settings"].get("openvino_config", {})
        precision = config.get("INFERENCE_PRECISION_HINT", "f32")
        handles += [Patch(color="C2", label=f"OpenVINO CPU (2 threads, {precision}; matches onnxruntime)"),
                    Patch(color="C4", label="OpenVINO CPU (output mismatch)")]
    handles += [Patch(color="C0", label=f"recq {report['settings']['backend']}, PoCL (matches)"),
                Patch(color="C3", label="recq, PoCL (output mismatch)")]
    ax.set_yticks(ys)
    ax.set_yticklabels([r["model"] for r in rows], fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("median latency per inference, ms (log scale); label: recq / onnxruntime"
                  + (", recq / OpenVINO" if with_ov else ""))
    ax.set_title(f"Model set, batch 1, float32, {report['machine']['cpu']} "
                 f"({report['machine']['cores']} cores), {report['date'][:10]}", fontsize=9)
    xmax = max([r["ort_ms"] for r in rows] + [r["recq"].get("median_ms", 0) for r in rows]
               + [r.get("openvino_ms", 0) for r in rows])
    ax.set_xlim(right=xmax * 60)
    ax.legend(handles=handles, loc="upper right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def table_note(report):
    st = report["settings"]
    ov = report["versions"].get("openvino")
    precision = st.get("openvino_config", {}).get("INFERENCE_PRECISION_HINT", "f32")
    ov_note = (f", OpenVINO {ov.split('-')[0]} CPU (2 threads, {precision}, latency hint, median of "
               f"{st['openvino_runs']} runs after {st['openvino_warmup']} warm-ups)" if ov else "")
    return (f"Model set, batch 1, float32: onnxruntime {report['versions']['onnxruntime']} CPU "
            f"(2 intra-op threads, median of {st['ort_runs']} runs after 5 warm-ups){ov_note} vs recq "
            f"{st['backend']} on {report.get('device', 'its device')} (median of up to "
            f"{st['recq_runs']} runs after 1 warm-up)"
            + (f", {st['rounds']} rounds in turn (medians over rounds)" if st.get("rounds", 1) > 1 else "")
            + f"; matches: relative L2 < {st['max_rel_l2']:g}; "
            f"sweep {report.get('sweep_s', 0):.0f} s, load average "
            f"{report['machine'].get('loadavg_1_5_15', ['?'])[0]} at the start")


def report_out(report, json_path, plot_path):
    with_ov = "openvino" in report["versions"]
    print_table(report["models"], table_note(report), with_ov)
    try:
        plot_model_set(report, plot_path)
        print(f"\nJSON: {json_path}\nplot: {plot_path}")
    except ImportError as e:
        print(f"\nJSON: {json_path}\nno plot ({e})")
    loaded = [r for r in report["models"] if r.get("recq", {}).get("ok")]
    print(f"{len(loaded)} of {len(report['models'])} models load in recq, "
          f"{sum(1 for r in loaded if r['matches'])} match onnxruntime")
    if with_ov:
        ran = [r for r in report["models"] if "openvino_ms" in r]
        print(f"{len(ran)} of {len(report['models'])} models run in OpenVINO, "
              f"{sum(1 for r in ran if r['openvino_matches'])} match onnxruntime")
    g = geomean_ratios(report["models"])
    if "recq_over_ort" in g:
        print(f"geometric mean over the {len(g['models'])} models where recq"
              + (" and OpenVINO" if with_ov else "") + " ran and match onnxruntime: "
              f"recq/onnxruntime {g['recq_over_ort']:.2f}x"
              + (f", recq/OpenVINO {g['recq_over_openvino']:.2f}x" if with_ov else ""))


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
    ov = import_openvino(args.no_openvino)

    recq = os.path.join(args.build, "tools", "recq")
    if not os.access(recq, os.X_OK):
        sys.exit(f"{recq} not found: build the recq_cli target first")
    names = em.parse_models(args.models)
    models_dir = args.models_dir or os.path.join(args.build, "models")
    bench_dir = os.path.join(args.build, "bench")
    json_path = args.json or os.path.join(bench_dir, "model_set.json")
    plot_path = args.plot or os.path.join(bench_dir, "model_set.png")
    for path in (json_path, plot_path):
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    ort_runs = max(args.runs, 20)
    cache_dir = recq_cache_dir()
    sweep_start = time.perf_counter()
    recq_max_rel_l2 = MAX_REL_L2 if args.recq_precision == "fp32" else RELAXED_MAX_REL_L2
    print(f"exporting what {models_dir} lacks", flush=True)
    manifests = em.export(names, models_dir, log=lambda s: print("  " + s, flush=True))
    report = {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "machine": machine_info(),
        "versions": {"onnxruntime": onnxruntime.__version__, "numpy": np.__version__},
        "settings": {"ort_threads": 2, "ort_runs": ort_runs, "ort_warmup": 5,
                     "recq_runs": args.runs, "min_recq_runs": args.min_recq_runs,
                     "rounds": args.rounds,
                     "recq_budget_s": args.recq_budget_s, "recq_warmup": 1,
                     "backend": args.backend, "max_rel_l2": recq_max_rel_l2,
                     "recq_precision": args.recq_precision,
                     "recq_tuning": args.recq_tuning or os.environ.get("RECQ_TUNING", "default"),
                     "models_dir": os.path.abspath(models_dir)},
        "models": [],
    }
    if ov is not None:
        report["versions"]["openvino"] = ov.__version__
        report["settings"].update(openvino_config=OPENVINO_CONFIG, openvino_runs=ort_runs,
                                  openvino_warmup=5)
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
            ort_timed = ort_timer(onnx_path, x)
            ov_timed = None
            if ov is not None:
                try:
                    ov_timed, ov_stats = openvino_timer(ov, onnx_path, x)
                except Exception as e:  # OpenVINO's errors are data, like recq's.
                    row["openvino_error"] = short(first_line(str(e)) or type(e).__name__, 200)
                else:
                    report["settings"].setdefault("openvino_compiled",
                                                  ov_stats.pop("openvino_compiled"))
                    row.update(ov_stats)
            # A first call of one timed run: does it load, is the output
            # right, how long does a run take (it also warms recq's and
            # PoCL's program caches for the later calls).
            out_path = os.path.join(tmp, name + ".out.f32")
            probe = recq_run_model(recq, onnx_path, in_path, out_path, 1, args.backend,
                                   args.timeout_s, args.recq_tuning, args.recq_precision)
            wait_store(cache_dir)
            runs = 0
            if probe.get("ok"):
                runs = int(min(args.runs, max(args.min_recq_runs,
                                              args.recq_budget_s * 1e3 /
                                              max(probe["median_ms"], 1e-3))))
            # Rounds: each engine's timed runs in turn, so that a noisy
            # stretch of the machine falls on all three.
            rounds = []
            q = probe
            for _ in range(args.rounds):
                rd = {}
                rd["ort_ms"], expected, ort_stats = ort_timed(ort_runs)
                if ov_timed is not None:
                    rd["openvino_ms"], ov_out, ov_round_stats = ov_timed(ort_runs)
                rd.update(ort_stats)
                rounds.append(rd)
                if runs:
                    q = recq_run_model(recq, onnx_path, in_path, out_path, runs, args.backend,
                                       args.timeout_s, args.recq_tuning, args.recq_precision)
                    wait_store(cache_dir)
                    if not q.get("ok"):
                        break
                    rd["recq_ms"] = q["median_ms"]
                    rd["recq_min_ms"] = q["min_ms"]
            med = lambda key: statistics.median(rd[key] for rd in rounds)
            row["ort_ms"] = med("ort_ms")
            row["ort_min_ms"] = min(rd["ort_min_ms"] for rd in rounds)
            row["ort_p90_ms"] = med("ort_p90_ms")
            row["ort_runs"] = ort_runs
            row["rounds"] = rounds
            row["ort_vs_export_rel_l2"] = rel_l2(expected, stored)
            print(f" {row['ort_ms']:.2f} ms", end="", flush=True)
            if "openvino_error" in row:
                print(f"; OpenVINO fails: {row['openvino_error']}", end="", flush=True)
            elif ov_timed is not None:
                row["openvino_ms"] = med("openvino_ms")
                row.update(ov_round_stats)
                row["openvino_runs"] = ort_runs
                row["openvino_rel_l2"] = rel_l2(ov_out, expected)
                row["openvino_matches"] = row["openvino_rel_l2"] < MAX_REL_L2
                print(f"; OpenVINO {row['openvino_ms']:.2f} ms (rel L2 {row['openvino_rel_l2']:.1e})",
                      end="", flush=True)
            print("; recq", end="", flush=True)
            if not probe.get("ok"):
                row["recq"] = probe
                row["unsupported_ops"] = recq_unsupported_ops(recq, onnx_path)
                print(f" fails ({probe['stage']}): {probe['error']}", flush=True)
                continue
            q["first_call"] = {k: probe[k] for k in ("wall_s", "compile_ms", "median_ms", "tuning_ms",
                                                     "tuning_keys", "tuning_cache_hits",
                                                     "tuning_measured", "tuning_over_budget")
                               if k in probe}
            row["recq"] = q
            if not q.get("ok"):
                print(f" fails on a later call ({q['stage']}): {q['error']}", flush=True)
                continue
            q["median_ms"] = med("recq_ms")
            q["min_ms"] = min(rd["recq_min_ms"] for rd in rounds)
            actual = np.fromfile(out_path, dtype="<f4")
            row["rel_l2"] = rel_l2(actual, expected)
            row["matches"] = row["rel_l2"] < recq_max_rel_l2
            # The medians over rounds of each round's ratio.
            row["ratio"] = statistics.median(rd["recq_ms"] / rd["ort_ms"] for rd in rounds)
            row["ratio_of_mins"] = q["min_ms"] / row["ort_min_ms"]
            if "openvino_ms" in row:
                row["ratio_openvino"] = statistics.median(rd["recq_ms"] / rd["openvino_ms"]
                                                          for rd in rounds)
            print(f" {q['median_ms']:.2f} ms ({q['runs']} runs x {len(rounds)} rounds, compile "
                  f"{q.get('compile_ms', 0):.0f} ms first {probe.get('compile_ms', 0):.0f} ms), "
                  f"rel L2 {row['rel_l2']:.1e}", flush=True)
            report["device"] = q.get("device", report.get("device"))
    report["sweep_s"] = round(time.perf_counter() - sweep_start, 1)
    # Shared machines: the load during the sweep says how far to trust it.
    report["machine"]["loadavg_at_end"] = [round(v, 2) for v in os.getloadavg()]
    report["summary"] = geomean_ratios(report["models"])
    with open(json_path, "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    print()
    report_out(report, json_path, plot_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
