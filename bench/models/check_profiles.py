#!/usr/bin/env python3
"""Checks a shape-profiled BERT against onnxruntime at random lengths.

Usage: BUILD/.venv-models/bin/python3 bench/models/check_profiles.py
           [--recq BUILD/tools/recq] [--out BUILD/models] [--count 20] [--max 512]
           [--seed N] [--device SPEC] [--model bert]

Exports the text model with a symbolic sequence dimension
(export_models.py --dynamic-seq: stem NAME_seq, batch 2), then for --count
random lengths in 1..--max runs

  recq run NAME_seq.onnx --shapes=input_ids:2x1..MAX/pow2,attention_mask:2x1..MAX/pow2
           --pad=input_ids:0,attention_mask:0 --input=... --output=...

(the length padded to its power-of-two bucket, docs/shapes.md) and
onnxruntime (CPU) on the model at that exact length, with the same random
token ids and a mask whose second row is padded at random, and compares the
output at the unpadded positions (the first LENGTH of the bucket's):
relative L2 error below 1e-4 passes. Prints one line per length and exits
non-zero if any fails. Each length is one `recq run` process (its own
context and engine); shaped_engine_test checks one engine over many.
"""
import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import export_models as em  # noqa: E402

VOCAB = {"bert": 30522, "gpt2": 50257, "t5_encoder": 32128}
OUTPUT = {"bert": "last_hidden_state", "gpt2": "logits", "t5_encoder": "last_hidden_state"}
BATCH = 2
TOLERANCE = 1e-4


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--recq", default=os.path.join(em.build_dir(), "tools", "recq"))
    p.add_argument("--out", default=os.path.join(em.build_dir(), "models"))
    p.add_argument("--model", default="bert", choices=sorted(VOCAB))
    p.add_argument("--count", type=int, default=20)
    p.add_argument("--max", type=int, default=512)
    p.add_argument("--seed", type=int, default=None, help="default: a fresh one (printed)")
    p.add_argument("--device", default="")
    args = p.parse_args()
    import numpy as np
    import onnxruntime

    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    print(f"seed {seed}", flush=True)
    rng = np.random.default_rng(seed)
    results = em.export([args.model], args.out, exporter="torchscript", dynamic_seq=True,
                        log=lambda s: print(s, flush=True))
    manifest = next(iter(results.values()))
    if "error" in manifest:
        sys.exit(f"export failed: {manifest['error']}")
    model = os.path.join(args.out, manifest["stem"] + ".onnx")
    sess = em.ort_session(model)
    out_name = OUTPUT[args.model]
    profile = ",".join(f"{n}:{BATCH}x1..{args.max}/pow2" for n in ("input_ids", "attention_mask"))
    lengths = sorted(int(v) for v in rng.integers(1, args.max + 1, size=args.count))
    worst = 0.0
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        for length in lengths:
            ids = rng.integers(0, VOCAB[args.model], size=(BATCH, length), dtype=np.int64)
            mask = np.ones((BATCH, length), dtype=np.int64)
            mask[1, int(rng.integers(1, length + 1)):] = 0
            ids_path = os.path.join(tmp, "ids.bin")
            mask_path = os.path.join(tmp, "mask.bin")
            out_path = os.path.join(tmp, "out.bin")
            ids.tofile(ids_path)
            mask.tofile(mask_path)
            cmd = [args.recq, "run", model, f"--shapes={profile}",
                   "--pad=input_ids:0,attention_mask:0", "--runs=1",
                   f"--input=input_ids={ids_path},attention_mask={mask_path}",
                   f"--output={out_name}={out_path}"]
            if args.device:
                cmd.append(f"--device={args.device}")
            run = subprocess.run(cmd, capture_output=True, text=True)
            if run.returncode != 0:
                print(f"length {length}: recq run failed:\n{run.stderr}", flush=True)
                failed.append(length)
                continue
            want = sess.run(None, {"input_ids": ids, "attention_mask": mask})[0]
            got = np.fromfile(out_path, dtype=np.float32)
            row = int(np.prod(want.shape[2:]))
            bucket = got.size // (BATCH * row)
            got = got.reshape((BATCH, bucket) + want.shape[2:])[:, :length]
            err = float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30))
            worst = max(worst, err)
            ok = err < TOLERANCE
            if not ok:
                failed.append(length)
            print(f"length {length:4d} -> bucket {bucket:4d}: rel L2 {err:.2e} "
                  f"{'ok' if ok else 'FAIL'}", flush=True)
    print(f"{len(lengths) - len(failed)} of {len(lengths)} lengths within {TOLERANCE:g} "
          f"(worst {worst:.2e}); {args.model} {manifest['stem']}, profile {profile}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
