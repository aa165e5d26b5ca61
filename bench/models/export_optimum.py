#!/usr/bin/env python3
"""Exports the decoders with past of the model set in the layout of the
optimum-onnx tooling (`text-generation-with-past`).

Usage: python3 bench/models/export_optimum.py [--models gpt2_past_tiny,gpt2_past]
           [--out DIR] [--force]

For each model (a WITH_PAST decoder of bench/models/families.py) it
  1. saves the seeded model of export_models.py's exports (same weights)
     with save_pretrained into OUT/NAME_optimum_checkpoint/;
  2. exports that checkpoint with optimum's main_export(task=
     "text-generation-with-past") into OUT/NAME_optimum.onnx: inputs
     input_ids, past_key_values.{i}.key/value, attention_mask, position_ids;
     outputs logits and present.{i}.key/value; symbolic batch_size,
     sequence_length and past_sequence_length;
  3. runs export_models.py's sample step (batch 2, 3 new tokens after 5
     cached) with onnxruntime and compares every output with PyTorch's,
     writing OUT/NAME_optimum.json (files, sizes, SHA-256, versions, op
     histogram, relative L2 errors).
Step 2 runs in a child process with BUILD/.venv-models/optimum-overlay first
on PYTHONPATH (made by `bash bench/models/setup_venv.sh --optimum`):
optimum-onnx 0.1.0, the newest, needs transformers < 4.58, the venv has 5.x.
The export needs no network: the checkpoint is local. On the GPU machine
(no network), carry the overlay's wheels (the device notes' `.whl` recipe:
transformers 4.57.6, huggingface_hub 0.36.2, tokenizers 0.22.2, optimum
2.1.0, optimum-onnx 0.1.0) and pass their folder as --overlay.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import export_models  # noqa: E402
import families  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default="gpt2_past_tiny",
                   help=f"comma-separated, of {', '.join(families.WITH_PAST)}")
    p.add_argument("--out", help="output folder (default BUILD/models)")
    p.add_argument("--overlay", help="the optimum overlay (default "
                   "BUILD/.venv-models/optimum-overlay)")
    p.add_argument("--force", action="store_true")
    p.add_argument("--no-venv", action="store_true",
                   help="use this Python as it is (fails when torch etc. are missing)")
    p.add_argument("--stage", choices=["all", "export"], default="all", help=argparse.SUPPRESS)
    p.add_argument("--checkpoint", help=argparse.SUPPRESS)
    p.add_argument("--onnx", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def optimum_export(checkpoint, onnx_path):
    """Step 2, inside the overlay: main_export into a scratch folder, then
    the ONNX file (and external data, if any) moved to ONNX_PATH."""
    from importlib import metadata

    import optimum.exporters.onnx
    import transformers
    with tempfile.TemporaryDirectory() as tmp:
        optimum.exporters.onnx.main_export(checkpoint, output=tmp,
                                           task="text-generation-with-past", device="cpu")
        names = sorted(os.listdir(tmp))
        if "model.onnx" not in names:
            sys.exit(f"optimum wrote {names}, no model.onnx")
        extra = [n for n in names if n.startswith("model.onnx_data")]
        if extra:
            sys.exit(f"optimum wrote external data ({extra}); expected one file")
        shutil.move(os.path.join(tmp, "model.onnx"), onnx_path)
    print(json.dumps({"transformers": transformers.__version__,
                      "optimum": metadata.version("optimum"),
                      "optimum-onnx": metadata.version("optimum-onnx")}))


def export_one(name, out, overlay, force):
    import numpy as np
    import onnx
    import onnxruntime
    import torch

    st = name + "_optimum"
    onnx_path = os.path.join(out, st + ".onnx")
    manifest_path = os.path.join(out, st + ".json")
    if not force and export_models.complete(out, st, {"seed": export_models.SEED}):
        print(f"{st}: up to date")
        return json.load(open(manifest_path))
    start = time.perf_counter()
    checkpoint = os.path.join(out, name + "_optimum_checkpoint")
    spec = families.make(name, export_models.SEED)  # the same seeded weights
    spec.model.lm.save_pretrained(checkpoint)
    env = dict(os.environ)
    env["PYTHONPATH"] = overlay + os.pathsep + env.get("PYTHONPATH", "")
    child = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--stage", "export", "--checkpoint",
         checkpoint, "--onnx", onnx_path], env=env, capture_output=True, text=True)
    if child.returncode != 0:
        tail = "\n".join((child.stderr or "").strip().splitlines()[-5:])
        raise RuntimeError(f"optimum's export failed:\n{tail}")
    versions_child = json.loads(child.stdout.strip().splitlines()[-1])
    export_s = time.perf_counter() - start

    onnx.checker.check_model(onnx_path)
    proto = onnx.load(onnx_path, load_external_data=False)
    sess = export_models.ort_session(onnx_path)
    feeds = {i.name: spec.inputs[i.name] for i in sess.get_inputs()}
    got = sess.run(None, feeds)
    args = tuple(torch.from_numpy(v) for v in spec.inputs.values())
    with torch.no_grad():
        expected = [t.numpy() for t in spec.model(*args)]
    by_name = dict(zip(spec.outputs, expected))
    outputs = []
    worst = 0.0
    for o, value in zip(sess.get_outputs(), got):
        err = export_models.rel_l2(value, by_name[o.name])
        worst = max(worst, err)
        outputs.append({"name": o.name, "shape": [d if isinstance(d, int) else str(d)
                                                  for d in o.shape],
                        "ort_vs_torch_rel_l2": err})
    manifest = {
        "model": name, "stem": st, "seed": export_models.SEED,
        "exporter": "optimum.exporters.onnx.main_export(task='text-generation-with-past')",
        "checkpoint": os.path.basename(checkpoint),
        "inputs": [{"name": i.name, "shape": [d if isinstance(d, int) else str(d)
                                              for d in i.shape], "type": i.type}
                   for i in sess.get_inputs()],
        "outputs": outputs, "ort_vs_torch_rel_l2": worst,
        "opset": int(next(o.version for o in proto.opset_import if o.domain in ("", "ai.onnx"))),
        "onnx_nodes": len(proto.graph.node), "onnx_ops": export_models.op_histogram(proto),
        "export_s": round(export_s, 2),
        "versions": {"export": versions_child, "torch": torch.__version__,
                     "onnx": onnx.__version__, "onnxruntime": onnxruntime.__version__,
                     "numpy": np.__version__},
        "files": {"onnx": export_models.file_entry(onnx_path)},
    }
    with open(manifest_path, "w") as f:
        f.write(json.dumps(manifest, indent=1) + "\n")
    print(f"{st}: {os.path.getsize(onnx_path) / 2**20:.1f} MiB, {len(proto.graph.node)} nodes, "
          f"opset {manifest['opset']}, ort vs torch rel L2 {worst:.1e}, {export_s:.1f} s "
          f"(transformers {versions_child['transformers']}, optimum "
          f"{versions_child['optimum']}, optimum-onnx {versions_child['optimum-onnx']})")
    return manifest


def main():
    args = parse_args()
    if args.stage == "export":
        optimum_export(args.checkpoint, args.onnx)
        return 0
    venv = os.path.join(export_models.build_dir(), export_models.VENV_DIR)
    python = os.path.join(venv, "bin", "python3")
    if (not args.no_venv and os.path.exists(python)
            and os.path.realpath(sys.prefix) != os.path.realpath(venv)):
        os.execv(python, [python, os.path.abspath(__file__)] + sys.argv[1:])
    overlay = args.overlay or os.path.join(venv, "optimum-overlay")
    if not os.path.isdir(overlay):
        sys.exit(f"{overlay} is missing: run `bash bench/models/setup_venv.sh --optimum` "
                 f"(or pass --overlay)")
    out = args.out or os.path.join(export_models.build_dir(), "models")
    os.makedirs(out, exist_ok=True)
    failed = []
    for name in [n.strip() for n in args.models.split(",") if n.strip()]:
        if name not in families.WITH_PAST:
            sys.exit(f"unknown model '{name}'; expected one of {', '.join(families.WITH_PAST)}")
        try:
            export_one(name, out, os.path.abspath(overlay), args.force)
        except Exception as e:  # one model's failure must not stop the others
            print(f"{name}_optimum: FAILED: {type(e).__name__}: {e}", flush=True)
            failed.append(name)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
