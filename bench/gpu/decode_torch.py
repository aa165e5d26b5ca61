#!/usr/bin/env python3
"""PyTorch peer numbers for recq's decode loop: a GPT-2-small-sized decoder
(random weights from bench/models/families.py's gpt2_past config), batch 1,
greedy, a 16-token prompt, 128 new tokens, float32 with TF32 off.

Usage: python3 bench/gpu/decode_torch.py [--device cuda|cpu]
           [--model gpt2_past|gpt2_past_tiny] [--runs 20] [--prompt-length 16]
           [--new-tokens 128] [--modes eager_dynamic,eager_static,cuda_graph,generate]
           [--json FILE]

Modes, each timed over --runs runs (medians reported, every run starting
from an empty cache and synchronized at its end):
  eager_dynamic  one forward per token in a Python loop, transformers'
                 default DynamicCache (grows by one row per token)
  eager_static   the same loop over a StaticCache of prompt + new tokens
                 (rows written in place at a device-side position)
  cuda_graph     one StaticCache decode step (forward, argmax, the id
                 written to the next step's input and to an output buffer,
                 the position advanced) captured once as a CUDA graph and
                 replayed once per token: no host work per token but the
                 launch (with --device cpu the step runs uncaptured, to
                 check it)
  generate       transformers' generate(do_sample=False) with the default
                 cache, prefill included, for reference
For every mode: decode tokens/s (new tokens after the first, over the
decode time), the prefill time, per-token latency p50/p99 where the loop
times tokens one by one (eager modes), and whether its ids equal
eager_dynamic's. --device cpu is a smoke run (use --model gpt2_past_tiny
and few --runs). Nothing is downloaded: the GPU machine has torch and
transformers and no network.
"""
import argparse
import inspect
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "models"))

import export_models  # noqa: E402  (SEED; imports no torch itself)

SEED = export_models.SEED


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--model", default="gpt2_past", choices=["gpt2_past", "gpt2_past_tiny"])
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--prompt-length", type=int, default=16)
    p.add_argument("--new-tokens", type=int, default=128)
    p.add_argument("--modes", default="eager_dynamic,eager_static,cuda_graph,generate")
    p.add_argument("--json", help="write the results here (also printed)")
    return p.parse_args(argv)


def percentile(values, q):
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(q / 100.0 * (len(s) - 1)))))]


class Decoder:
    """The model and what one mode's run needs."""

    def __init__(self, args):
        import torch
        import families
        self.torch = torch
        self.args = args
        self.device = torch.device(args.device)
        self.model = families.gpt2_past_lm(args.model, SEED).to(self.device)
        self.config = self.model.config
        # Exactly --new-tokens tokens: no EOS stop.
        self.model.generation_config.eos_token_id = None
        self.model.generation_config.pad_token_id = 0
        params = inspect.signature(self.model.forward).parameters
        # transformers 5.2x names the cache argument `cache`, earlier ones
        # `past_key_values`.
        self.cache_arg = "cache" if "cache" in params else "past_key_values"
        # bench/models/decode_reference.py's prompt, as bench/decode_ort.py's.
        import decode_reference
        self.prompt = torch.from_numpy(
            decode_reference.prompt_ids(self.config.vocab_size, args.prompt_length)).to(self.device)
        self.max_len = args.prompt_length + args.new_tokens

    def sync(self):
        if self.device.type == "cuda":
            self.torch.cuda.synchronize()

    def forward(self, ids, cache, positions):
        out = self.model(input_ids=ids, position_ids=positions, use_cache=True,
                         **{self.cache_arg: cache})
        return out.logits

    def dynamic_cache(self):
        from transformers import DynamicCache
        try:
            return DynamicCache(config=self.config)
        except TypeError:
            return DynamicCache()

    def static_cache(self):
        from transformers import StaticCache
        kwargs = dict(config=self.config, max_cache_len=self.max_len)
        try:
            return StaticCache(**kwargs)
        except TypeError:  # older signatures take the batch, device and dtype
            return StaticCache(max_batch_size=1, device=self.device, dtype=self.torch.float32,
                               **kwargs)

    def positions(self, start, length):
        return self.torch.arange(start, start + length, device=self.device)[None, :]

    def loop(self, cache):
        """Prefill, then one forward per token; returns (ids, prefill s,
        decode s, per-token s)."""
        torch = self.torch
        p = self.args.prompt_length
        t0 = time.perf_counter()
        logits = self.forward(self.prompt, cache, self.positions(0, p))
        nxt = logits[:, -1].argmax(-1, keepdim=True)
        self.sync()
        t1 = time.perf_counter()
        ids = [nxt]
        per_token = []
        for i in range(1, self.args.new_tokens):
            s = time.perf_counter()
            logits = self.forward(nxt, cache, self.positions(p + i - 1, 1))
            nxt = logits[:, -1].argmax(-1, keepdim=True)
            ids.append(nxt)
            self.sync()
            per_token.append(time.perf_counter() - s)
        t2 = time.perf_counter()
        return torch.cat(ids, 1)[0].tolist(), t1 - t0, t2 - t1, per_token

    def eager_dynamic(self):
        return self.loop(self.dynamic_cache())

    def eager_static(self):
        return self.loop(self.static_cache())

    def generate(self):
        torch = self.torch
        t0 = time.perf_counter()
        out = self.model.generate(self.prompt, attention_mask=torch.ones_like(self.prompt),
                                  do_sample=False, max_new_tokens=self.args.new_tokens,
                                  min_new_tokens=self.args.new_tokens, eos_token_id=None,
                                  pad_token_id=0, num_beams=1)
        self.sync()
        t1 = time.perf_counter()
        return out[0, self.args.prompt_length:].tolist(), 0.0, t1 - t0, []

    def cuda_graph_setup(self, capture=True):
        """Captures one decode step; returns run() for one generation.
        Without `capture` (the CPU smoke run) the same step runs eagerly,
        to check everything but the capture."""
        torch = self.torch
        p, n = self.args.prompt_length, self.args.new_tokens
        cache = self.static_cache()
        token = torch.zeros((1, 1), dtype=torch.long, device=self.device)
        position = torch.zeros((1, 1), dtype=torch.long, device=self.device)
        out = torch.zeros((1, n), dtype=torch.long, device=self.device)

        def step():
            logits = self.forward(token, cache, position)
            nxt = logits[:, -1].argmax(-1, keepdim=True)
            out.index_copy_(1, position[0] - (p - 1), nxt)
            token.copy_(nxt)
            position.add_(1)

        def reset():
            # The cache's rows are overwritten as positions advance: only its
            # length goes back (StaticCache.crop keeps the buffers' addresses).
            # transformers versions without StaticLayer.crop (5.17) zero the
            # buffers in place instead (StaticCache.reset).
            length = int(cache.get_seq_length())
            if length and all(hasattr(layer, "crop") for layer in getattr(cache, "layers", [])):
                cache.crop(-length)
            elif length:
                cache.reset()

        def prefill():
            reset()
            logits = self.forward(self.prompt, cache, self.positions(0, p))
            token.copy_(logits[:, -1].argmax(-1, keepdim=True))
            out[:, 0:1].copy_(token)
            position.fill_(p)

        if not capture:
            def run_eager():
                t0 = time.perf_counter()
                prefill()
                t1 = time.perf_counter()
                for _ in range(n - 1):
                    step()
                return out[0].tolist(), t1 - t0, time.perf_counter() - t1, []
            return run_eager

        # Warm-up on a side stream (allocations, lazy cache buffers), then
        # capture with the state a generation has after its prefill.
        prefill()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                step()
        torch.cuda.current_stream().wait_stream(side)
        prefill()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            step()

        def run():
            t0 = time.perf_counter()
            prefill()
            self.sync()
            t1 = time.perf_counter()
            for _ in range(n - 1):
                graph.replay()
            self.sync()
            t2 = time.perf_counter()
            return out[0].tolist(), t1 - t0, t2 - t1, []

        return run


def measure(fn, runs, warmup):
    for _ in range(warmup):
        fn()
    samples = [fn() for _ in range(runs)]
    return samples


def main():
    args = parse_args()
    import torch
    import transformers
    if args.runs < 1 or args.new_tokens < 2:
        sys.exit("--runs must be >= 1 and --new-tokens >= 2")
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("no CUDA device: use --device cpu for a smoke run")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    if args.device == "cpu":
        torch.set_num_threads(min(2, os.cpu_count() or 1))
    dec = Decoder(args)
    results = {
        "model": args.model, "device": args.device,
        "device_name": (torch.cuda.get_device_name(0) if args.device == "cuda" else "cpu"),
        "torch": torch.__version__, "transformers": transformers.__version__,
        "dtype": "float32", "tf32": False, "batch": 1, "prompt_length": args.prompt_length,
        "new_tokens": args.new_tokens, "runs": args.runs,
        "params": int(sum(p.numel() for p in dec.model.parameters())),
        "date": time.strftime("%Y-%m-%d", time.gmtime()), "modes": {},
    }
    reference_ids = None
    with torch.no_grad():
        for mode in [m.strip() for m in args.modes.split(",") if m.strip()]:
            entry = {}
            try:
                if mode == "cuda_graph":
                    # On the CPU the step runs uncaptured (a smoke run of
                    # the in-place step, not a measurement).
                    entry["captured"] = args.device == "cuda"
                    fn = dec.cuda_graph_setup(capture=args.device == "cuda")
                elif mode in ("eager_dynamic", "eager_static", "generate"):
                    fn = getattr(dec, mode)
                else:
                    sys.exit(f"unknown mode '{mode}'")
                samples = measure(fn, args.runs, args.warmup)
            except Exception as e:  # one mode's failure must not stop the others
                entry["error"] = f"{type(e).__name__}: {str(e).strip().splitlines()[0][:300]}"
                results["modes"][mode] = entry
                print(f"{mode}: FAILED: {entry['error']}", flush=True)
                continue
            ids = samples[-1][0]
            decode_s = [s[2] for s in samples]
            prefill_s = [s[1] for s in samples]
            per_token = [t for s in samples for t in s[3]]
            # generate's time holds the prefill and every token; the loops'
            # decode time holds the tokens after the first.
            tokens = args.new_tokens if mode == "generate" else args.new_tokens - 1
            entry.update({
                "decode_tokens_per_s_median": tokens / statistics.median(decode_s),
                "decode_tokens_per_s_min_max": [tokens / max(decode_s), tokens / min(decode_s)],
                "decode_ms_per_token_median": statistics.median(decode_s) * 1e3 / tokens,
                "prefill_ms_median": statistics.median(prefill_s) * 1e3,
                "includes_prefill": mode == "generate",
                "ids_first": ids[:8],
            })
            if per_token:
                entry["token_ms_p50"] = percentile(per_token, 50) * 1e3
                entry["token_ms_p99"] = percentile(per_token, 99) * 1e3
            if reference_ids is None:
                reference_ids = ids
                entry["ids"] = ids
            entry["ids_match_first_mode"] = ids == reference_ids
            results["modes"][mode] = entry
            print(f"{mode}: {entry['decode_tokens_per_s_median']:.1f} tokens/s "
                  f"({entry['decode_ms_per_token_median']:.3f} ms/token), prefill "
                  f"{entry['prefill_ms_median']:.2f} ms, ids match: "
                  f"{entry['ids_match_first_mode']}", flush=True)
    text = json.dumps(results, indent=1)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    print(text)
    failed = [m for m, e in results["modes"].items()
              if "error" in e or e.get("ids_match_first_mode") is False]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
