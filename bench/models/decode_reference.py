#!/usr/bin/env python3
"""Greedy-generation references for the decoders with past of the model set.

Usage: python3 bench/models/decode_reference.py [--model gpt2_past_tiny]
           [--onnx FILE] [--out DIR] [--prompt-length 8] [--new-tokens 16]

For --model (a WITH_PAST decoder of bench/models/families.py, the same seeded
weights as bench/models/export_models.py's export) it writes into --out
(default BUILD/models):

  STEM.decode.json  the prompt, transformers' greedy ids
                    (generate(do_sample=False)), onnxruntime's greedy ids,
                    the largest difference between the two runs' logits,
                    shapes, versions and the SHA-256 of the ONNX file used
  STEM.decode.npz   prompt_ids int64 [1, P]; generated_ids int64 [1, N]
                    (transformers); ort_ids int64 [1, N]; step_logits
                    float32 [P + N - 1, V]: onnxruntime's logits of every
                    step when the with-past ONNX runs one token per `run`
                    (step t feeds token t, past length t, and its row
                    predicts token t + 1); prefill_logits float32 [P, V]:
                    the prompt in one run (past length 0);
                    torch_step_logits float32 [P + N - 1, V]: PyTorch's
                    logits for the same steps

  STEM.decode.prompt.i64, STEM.decode.ids.i64, STEM.decode.step_logits.f32
                    prompt_ids, generated_ids and step_logits again as raw
                    little-endian int64 / float32 (for C++ tests)

STEM is the ONNX file's stem (--onnx; default OUT/MODEL.onnx, which
export_models.py --models MODEL writes). The prompt is fixed: numpy
default_rng(SEED + 3) ids in [0, vocab). Generation runs for exactly N new
tokens (no EOS stop). Exits 1 when onnxruntime's greedy ids differ from
transformers'.
"""
import argparse
import hashlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import export_models  # noqa: E402  (SEED, build_dir, ort_session)
import families  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="gpt2_past_tiny", choices=sorted(families.WITH_PAST))
    p.add_argument("--onnx", help="the with-past ONNX file (default OUT/MODEL.onnx)")
    p.add_argument("--out", help="output folder (default BUILD/models)")
    p.add_argument("--prompt-length", type=int, default=8)
    p.add_argument("--new-tokens", type=int, default=16)
    p.add_argument("--no-venv", action="store_true",
                   help="use this Python as it is (fails when torch etc. are missing)")
    return p.parse_args(argv)


def prompt_ids(vocab, length):
    import numpy as np
    rng = np.random.default_rng(export_models.SEED + 3)
    return rng.integers(0, vocab, size=(1, length), dtype=np.int64)


def ort_feeds(step_ids, past, past_length, names):
    """One step's onnxruntime feeds: STEP_IDS [1, S], PAST the flat list of
    [1, H, past_length, D] arrays."""
    import numpy as np
    s = step_ids.shape[1]
    feeds = {"input_ids": step_ids,
             "attention_mask": np.ones((1, past_length + s), dtype=np.int64),
             "position_ids": np.arange(past_length, past_length + s, dtype=np.int64)[None, :]}
    feeds.update(zip(names, past))
    return feeds


def run_ort(onnx_path, prompt, new_tokens, cfg):
    """Greedy decoding with onnxruntime, one token per run; returns (ids
    [1, N], step logits [P + N - 1, V], prefill logits [P, V])."""
    import numpy as np
    sess = export_models.ort_session(onnx_path)
    past_in, _ = families.past_names(cfg.n_layer)
    head_dim = cfg.n_embd // cfg.n_head
    empty = [np.zeros((1, cfg.n_head, 0, head_dim), np.float32) for _ in past_in]
    prefill = sess.run(None, ort_feeds(prompt, empty, 0, past_in))[0][0]

    past, rows, ids = empty, [], []
    tokens = list(prompt[0])
    t = 0
    while len(ids) < new_tokens:
        out = sess.run(None, ort_feeds(np.array([[tokens[t]]], np.int64), past, t, past_in))
        logits, past = out[0][0, -1], out[1:]
        t += 1
        if t < len(tokens):  # still feeding the prompt
            rows.append(logits)
            continue
        rows.append(logits)
        nxt = int(np.argmax(logits))
        ids.append(nxt)
        tokens.append(nxt)
    # The last generated token is never fed: P + N - 1 steps.
    return (np.array([ids], np.int64), np.stack(rows).astype(np.float32),
            prefill.astype(np.float32))


def run_torch(model, step, prompt, new_tokens, cfg):
    """transformers' greedy generate, and PyTorch's logits for the steps
    that run_ort runs (one token per step through the same wrapper)."""
    import numpy as np
    import torch
    x = torch.from_numpy(prompt)
    with torch.no_grad():
        gen = model.generate(x, attention_mask=torch.ones_like(x), do_sample=False,
                             max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                             eos_token_id=None, pad_token_id=0, num_beams=1)
        generated = gen[:, prompt.shape[1]:].numpy()
        tokens = gen[0].tolist()
        head_dim = cfg.n_embd // cfg.n_head
        past = [torch.zeros(1, cfg.n_head, 0, head_dim) for _ in range(2 * cfg.n_layer)]
        rows = []
        for t in range(len(tokens) - 1):
            out = step(torch.tensor([[tokens[t]]]), torch.ones(1, t + 1, dtype=torch.int64),
                       torch.tensor([[t]]), *past)
            rows.append(out[0][0, -1].numpy())
            past = list(out[1:])
    return generated.astype(np.int64), np.stack(rows).astype(np.float32)


def main():
    args = parse_args()
    venv = os.path.join(export_models.build_dir(), export_models.VENV_DIR)
    python = os.path.join(venv, "bin", "python3")
    if (not args.no_venv and os.path.exists(python)
            and os.path.realpath(sys.prefix) != os.path.realpath(venv)):
        os.execv(python, [python, os.path.abspath(__file__)] + sys.argv[1:])
    import numpy as np
    import onnxruntime
    import torch
    import transformers

    out = args.out or os.path.join(export_models.build_dir(), "models")
    onnx_path = args.onnx or os.path.join(out, args.model + ".onnx")
    if not os.path.exists(onnx_path):
        sys.exit(f"{onnx_path} is missing: run bench/models/export_models.py --models "
                 f"{args.model} first (or pass --onnx)")
    st = os.path.basename(onnx_path)[:-len(".onnx")]
    torch.manual_seed(export_models.SEED)
    model = families.gpt2_past_lm(args.model, export_models.SEED)
    cfg = model.config
    step = families.with_past_step(model)
    if args.prompt_length + args.new_tokens > cfg.n_positions:
        sys.exit(f"prompt + new tokens = {args.prompt_length + args.new_tokens} exceeds the "
                 f"model's {cfg.n_positions} positions")
    prompt = prompt_ids(cfg.vocab_size, args.prompt_length)
    generated, torch_rows = run_torch(model, step, prompt, args.new_tokens, cfg)
    ort_ids, rows, prefill = run_ort(onnx_path, prompt, args.new_tokens, cfg)
    scale = float(np.abs(torch_rows).max())
    diff = float(np.abs(rows - torch_rows).max())
    with open(onnx_path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    os.makedirs(out, exist_ok=True)
    np.savez(os.path.join(out, st + ".decode.npz"), prompt_ids=prompt, generated_ids=generated,
             ort_ids=ort_ids, step_logits=rows, prefill_logits=prefill,
             torch_step_logits=torch_rows)
    for suffix, array, dtype in (("prompt.i64", prompt, "<i8"), ("ids.i64", generated, "<i8"),
                                 ("step_logits.f32", rows, "<f4")):
        array.astype(dtype).tofile(os.path.join(out, f"{st}.decode.{suffix}"))
    report = {
        "model": args.model, "stem": st, "seed": export_models.SEED,
        "onnx": os.path.basename(onnx_path), "onnx_sha256": digest,
        "prompt_ids": prompt[0].tolist(), "generated_ids": generated[0].tolist(),
        "ort_ids": ort_ids[0].tolist(), "match": bool((ort_ids == generated).all()),
        "step_logits_shape": list(rows.shape), "prefill_logits_shape": list(prefill.shape),
        "ort_vs_torch_step_logits_max_abs": diff, "step_logits_abs_max": scale,
        # The smallest gap between the two largest logits of a generation
        # step: an engine's logits must be closer than this to give the same ids.
        "min_top2_margin": float(np.diff(np.sort(rows[prompt.shape[1] - 1:], axis=1)[:, -2:],
                                         axis=1).min()),
        "prefill_vs_steps_max_abs": float(np.abs(prefill - rows[:prefill.shape[0]]).max()),
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                     "onnxruntime": onnxruntime.__version__, "numpy": np.__version__},
    }
    with open(os.path.join(out, st + ".decode.json"), "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    print(f"{st}: prompt {report['prompt_ids']}\n  transformers {report['generated_ids']}\n"
          f"  onnxruntime  {report['ort_ids']}\n  step logits {rows.shape}, ort vs torch max "
          f"|diff| {diff:.2e} (|logits| up to {scale:.2f})")
    if not report["match"]:
        print("onnxruntime's greedy ids differ from transformers'", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
