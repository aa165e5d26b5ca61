#!/usr/bin/env python3
"""Checks a `recq generate --logits` run against the greedy references of
bench/models/decode_reference.py.

Usage: python3 bench/models/check_decode.py --ref DIR/STEM.decode.npz
           --recq RECQ.json [--json FILE]

RECQ.json is `recq generate ... --json=RECQ.json --logits=FILE` on the
reference's prompt (its ids, prompt and logits_file are read). Checks:
  - the prompt is the reference's;
  - recq's ids equal transformers' generate(do_sample=False) ids;
  - every logits row recq wrote is within relative L2 1e-4 of onnxruntime's
    logits for the same step, when the with-past ONNX runs one token per
    `run` (the reference's step_logits); also reported against PyTorch's
    (torch_step_logits).
recq's rows start at the prompt's last token with bucketed prefill, at its
first with --prefill=tokens. Prints a summary, writes --json, exits 1 when a
check fails. Needs numpy only.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_models import MAX_REL_L2  # noqa: E402
from export_models import rel_l2  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ref", required=True, help="STEM.decode.npz of decode_reference.py")
    p.add_argument("--recq", required=True, help="recq generate's --json report")
    p.add_argument("--json", help="write the result here")
    args = p.parse_args()
    import numpy as np

    ref = np.load(args.ref)
    with open(args.recq) as f:
        run = json.load(f)
    prompt = ref["prompt_ids"][0].tolist()
    want = ref["generated_ids"][0].tolist()
    ort_rows, torch_rows = ref["step_logits"], ref["torch_step_logits"]
    vocab = ort_rows.shape[1]
    problems = []
    if run["prompt"] != prompt:
        problems.append("recq's prompt is not the reference's")
    n = min(len(run["ids"]), len(want))
    ids_equal = run["ids"] == want
    if not ids_equal:
        first = next((i for i in range(n) if run["ids"][i] != want[i]), n)
        problems.append(f"ids differ from transformers' from position {first} "
                        f"({len(run['ids'])} against {len(want)} ids)")
    logits = np.fromfile(run["logits_file"], dtype="<f4")
    if logits.size % vocab:
        sys.exit(f"{run['logits_file']}: {logits.size} floats is not rows of {vocab}")
    logits = logits.reshape(-1, vocab)
    rows = logits.shape[0]
    first = 0 if rows == ort_rows.shape[0] else len(prompt) - 1
    if first + rows > ort_rows.shape[0]:
        sys.exit(f"{rows} recq rows from step {first} overrun the reference's "
                 f"{ort_rows.shape[0]} steps")
    vs_ort = [rel_l2(logits[i], ort_rows[first + i]) for i in range(rows)]
    vs_torch = [rel_l2(logits[i], torch_rows[first + i]) for i in range(rows)]
    worst = int(np.argmax(vs_ort))
    if vs_ort[worst] >= MAX_REL_L2:
        problems.append(f"step {first + worst}: logits relative L2 {vs_ort[worst]:.2e} "
                        f"against onnxruntime (limit {MAX_REL_L2:g})")
    result = {
        "ref": args.ref, "recq": args.recq, "device": run.get("device"),
        "backend": run.get("backend"), "prefill": run.get("prefill"),
        "prompt_tokens": len(prompt), "new_tokens": len(run["ids"]),
        "ids_equal_transformers": ids_equal, "logits_rows": rows, "first_step": first,
        "max_rel_l2_vs_onnxruntime": max(vs_ort), "median_rel_l2_vs_onnxruntime":
        float(np.median(vs_ort)), "max_rel_l2_vs_torch": max(vs_torch),
        "limit": MAX_REL_L2, "ok": not problems, "problems": problems,
    }
    print(f"{run.get('device')}: {len(run['ids'])} ids "
          f"{'equal' if ids_equal else 'NOT equal'} to transformers'; logits of steps "
          f"{first}..{first + rows - 1}: relative L2 against onnxruntime max {max(vs_ort):.2e} "
          f"(median {np.median(vs_ort):.2e}), against PyTorch max {max(vs_torch):.2e}")
    for line in problems:
        print("  FAIL:", line)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
