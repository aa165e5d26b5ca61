#!/usr/bin/env python3
"""onnxruntime's decode speed on the CPU, the peer of recq's decode loop on
PoCL: a with-past decoder ONNX (bench/models/export_models.py --models
gpt2_past), batch 1, greedy, one `run` per token.

Usage: python3 bench/decode_ort.py MODEL.onnx [--threads 2] [--runs 5]
           [--prompt-length 16] [--new-tokens 128] [--json FILE]

Each run feeds the prompt in one `run` (past length 0: the prefill), then
one `run` per new token with the previous run's present.* as past and the
argmax of its last logits row as the next input id, as onnxruntime's users
write the loop (numpy feeds, no I/O binding). The prompt is
bench/models/decode_reference.py's (seeded ids). Reports the median decode
tokens/s over --runs runs (the tokens after the first, over their time),
the prefill time, per-token latency p50/p99 over every run's tokens, and
the ids (identical in every run, or the script fails). onnxruntime:
intra-op --threads, inter-op 1, all graph optimizations.
"""
import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "models"))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model", help="a with-past decoder ONNX file")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--prompt-length", type=int, default=16)
    p.add_argument("--new-tokens", type=int, default=128)
    p.add_argument("--json", help="write the results here (also printed)")
    return p.parse_args(argv)


def percentile(values, q):
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(q / 100.0 * (len(s) - 1)))))]


class OrtDecoder:
    def __init__(self, path, threads):
        import numpy as np
        import onnxruntime as ort
        self.np = np
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        inputs = {i.name: i for i in self.sess.get_inputs()}
        self.past_names = [n for n in inputs if n.startswith("past_key_values.")]
        if "input_ids" not in inputs or not self.past_names:
            sys.exit(f"{path}: expected input_ids and past_key_values.* inputs (a with-past "
                     f"decoder); it has {', '.join(inputs)}")
        self.has_mask = "attention_mask" in inputs
        self.has_positions = "position_ids" in inputs
        shape = inputs[self.past_names[0]].shape  # [batch, heads, past, head_dim]
        if not all(isinstance(d, int) for d in (shape[1], shape[3])):
            sys.exit(f"{path}: past_key_values heads and head_dim must be fixed; got {shape}")
        self.heads, self.head_dim = shape[1], shape[3]
        self.output_names = [o.name for o in self.sess.get_outputs()]
        self.vocab = self.sess.get_outputs()[0].shape[-1]

    def feeds(self, ids, past, past_length):
        np = self.np
        s = ids.shape[1]
        f = {"input_ids": ids}
        if self.has_mask:
            f["attention_mask"] = np.ones((1, past_length + s), dtype=np.int64)
        if self.has_positions:
            f["position_ids"] = np.arange(past_length, past_length + s, dtype=np.int64)[None, :]
        f.update(zip(self.past_names, past))
        return f

    def generate(self, prompt, new_tokens):
        """Returns (ids, prefill s, decode s, per-token s)."""
        np = self.np
        empty = [np.zeros((1, self.heads, 0, self.head_dim), np.float32) for _ in self.past_names]
        t0 = time.perf_counter()
        out = self.sess.run(self.output_names, self.feeds(prompt, empty, 0))
        nxt = int(np.argmax(out[0][0, -1]))
        t1 = time.perf_counter()
        ids, per_token = [nxt], []
        past, length = out[1:], prompt.shape[1]
        for _ in range(new_tokens - 1):
            s = time.perf_counter()
            out = self.sess.run(self.output_names,
                                self.feeds(np.array([[nxt]], np.int64), past, length))
            nxt = int(np.argmax(out[0][0, -1]))
            past, length = out[1:], length + 1
            ids.append(nxt)
            per_token.append(time.perf_counter() - s)
        return ids, t1 - t0, time.perf_counter() - t1, per_token


def main():
    args = parse_args()
    import numpy as np
    import onnxruntime
    import decode_reference

    if args.runs < 1 or args.new_tokens < 2:
        sys.exit("--runs must be >= 1 and --new-tokens >= 2")
    dec = OrtDecoder(args.model, args.threads)
    prompt = decode_reference.prompt_ids(dec.vocab, args.prompt_length)
    for _ in range(args.warmup):
        dec.generate(prompt, args.new_tokens)
    samples = [dec.generate(prompt, args.new_tokens) for _ in range(args.runs)]
    ids = samples[0][0]
    if any(s[0] != ids for s in samples):
        sys.exit("onnxruntime's ids differ between runs")
    decode_s = [s[2] for s in samples]
    per_token = [t for s in samples for t in s[3]]
    tokens = args.new_tokens - 1
    results = {
        "model": os.path.basename(args.model), "runtime": "onnxruntime",
        "onnxruntime": onnxruntime.__version__, "numpy": np.__version__,
        "threads": args.threads, "batch": 1, "prompt_length": args.prompt_length,
        "new_tokens": args.new_tokens, "runs": args.runs,
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "decode_tokens_per_s_median": tokens / statistics.median(decode_s),
        "decode_tokens_per_s_min_max": [tokens / max(decode_s), tokens / min(decode_s)],
        "decode_ms_per_token_median": statistics.median(decode_s) * 1e3 / tokens,
        "token_ms_p50": percentile(per_token, 50) * 1e3,
        "token_ms_p99": percentile(per_token, 99) * 1e3,
        "prefill_ms_median": statistics.median(s[1] for s in samples) * 1e3,
        "prompt_ids": prompt[0].tolist(), "ids": ids,
    }
    text = json.dumps(results, indent=1)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    print(f"{results['model']}: {results['decode_tokens_per_s_median']:.1f} tokens/s decode "
          f"(p50 {results['token_ms_p50']:.2f} ms, p99 {results['token_ms_p99']:.2f} ms per "
          f"token), prefill {results['prefill_ms_median']:.2f} ms, {args.threads} threads",
          file=sys.stderr)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
