"""Writes the tiny GPT-2-style decoder with past key/values and its golden data.

tiny_decoder.onnx (and tiny_decoder_dynamo.onnx, the same weights through
the dynamo exporter at opset 21): GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=256,
n_positions=128), weights drawn with torch.manual_seed(SEED), exported by
torch.onnx.export (TorchScript) with inputs input_ids [batch, seq],
attention_mask [batch, past + seq], position_ids [batch, seq],
past_key_values.{i}.key/value [batch, 4, past, 16] and outputs logits
[batch, seq, 256], present.{i}.key/value [batch, 4, past + seq, 16].

golden.txt: the prompt, transformers' greedy generate() ids, and for every
step the onnxruntime logits of running the same file token by token with
its growing past (as float32 little-endian in golden_logits.f32, one row of
256 per step: the prompt's tokens, then every generated one but the last).

Run: /path/to/venv/bin/python tests/models/decoder/make_tiny_decoder.py
"""

import os

import numpy as np
import onnxruntime as ort
import torch
from transformers import GPT2Config, GPT2LMHeadModel
from transformers.cache_utils import DynamicCache

SEED = 7
LAYERS = 2
HEADS = 4
HEAD_DIM = 16
VOCAB = 256
PROMPT = [17, 3, 200, 91, 45, 128, 7, 250]
NEW_TOKENS = 24
HERE = os.path.dirname(os.path.abspath(__file__))


class WithPast(torch.nn.Module):
    """Flat tensors in and out, as the ONNX file declares them."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, position_ids, *past):
        cache = DynamicCache()
        for i in range(LAYERS):
            cache.update(past[2 * i], past[2 * i + 1], i)
        out = self.model(input_ids=input_ids, attention_mask=attention_mask,
                         position_ids=position_ids, past_key_values=cache,
                         use_cache=True)
        flat = []
        for i in range(LAYERS):
            layer = out.past_key_values.layers[i]
            flat += [layer.keys, layer.values]
        return (out.logits, *flat)


def main():
    torch.manual_seed(SEED)
    config = GPT2Config(n_layer=LAYERS, n_embd=HEADS * HEAD_DIM, n_head=HEADS,
                        vocab_size=VOCAB, n_positions=128,
                        bos_token_id=None, eos_token_id=None, attn_implementation="eager")
    model = GPT2LMHeadModel(config).eval()
    # GPT-2's initialization leaves the logits nearly flat; widen them so
    # greedy choices are far from ties.
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(3.0)

    # transformers' greedy ids (before the export, which traces the model).
    with torch.no_grad():
        gen = model.generate(torch.tensor([PROMPT]), max_new_tokens=NEW_TOKENS,
                             do_sample=False, attention_mask=torch.ones(1, len(PROMPT),
                                                                         dtype=torch.int64),
                             pad_token_id=0)
    ids = gen[0].tolist()

    past_len = 3
    inputs = (torch.tensor([[5]]), torch.ones(1, past_len + 1, dtype=torch.int64),
              torch.tensor([[past_len]]))
    past = tuple(torch.randn(1, HEADS, past_len, HEAD_DIM) for _ in range(2 * LAYERS))
    in_names = ["input_ids", "attention_mask", "position_ids"]
    out_names = ["logits"]
    dyn = {"input_ids": {0: "batch", 1: "seq"},
           "attention_mask": {0: "batch", 1: "total"},
           "position_ids": {0: "batch", 1: "seq"},
           "logits": {0: "batch", 1: "seq"}}
    for i in range(LAYERS):
        for kv in ("key", "value"):
            in_names.append(f"past_key_values.{i}.{kv}")
            out_names.append(f"present.{i}.{kv}")
            dyn[in_names[-1]] = {0: "batch", 2: "past"}
            dyn[out_names[-1]] = {0: "batch", 2: "total"}
    path = os.path.join(HERE, "tiny_decoder.onnx")
    torch.onnx.export(WithPast(model).eval(), inputs + past, path, input_names=in_names,
                      output_names=out_names, dynamic_axes=dyn, opset_version=17,
                      dynamo=False)
    # The same weights through the dynamo exporter (torch.export), opset 21.
    # torch.export takes no related sizes (past + seq): every axis dynamic.
    dyn = torch.export.Dim.DYNAMIC
    shapes = ({0: dyn, 1: dyn}, {0: dyn, 1: dyn}, {0: dyn, 1: dyn},
              tuple({0: dyn, 2: dyn} for _ in range(2 * LAYERS)))
    torch.onnx.export(WithPast(model).eval(), inputs + past,
                      os.path.join(HERE, "tiny_decoder_dynamo.onnx"), input_names=in_names,
                      output_names=out_names, dynamic_shapes=shapes, opset_version=21,
                      dynamo=True, external_data=False)

    # onnxruntime token by token over the same sequence.
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    pasts = [np.zeros((1, HEADS, 0, HEAD_DIM), np.float32) for _ in range(2 * LAYERS)]
    rows = []
    min_gap = 1e9
    for pos in range(len(ids) - 1):
        feed = {"input_ids": np.array([[ids[pos]]], np.int64),
                "attention_mask": np.ones((1, pos + 1), np.int64),
                "position_ids": np.array([[pos]], np.int64)}
        for i in range(2 * LAYERS):
            feed[in_names[3 + i]] = pasts[i]
        outs = sess.run(None, feed)
        logits = outs[0][0, -1]
        rows.append(logits.astype(np.float32))
        pasts = outs[1:]
        if pos >= len(PROMPT) - 1:
            top = np.sort(logits)[-2:]
            min_gap = min(min_gap, float(top[1] - top[0]))
            assert int(np.argmax(logits)) == ids[pos + 1], (pos, np.argmax(logits), ids[pos + 1])
    np.stack(rows).astype("<f4").tofile(os.path.join(HERE, "golden_logits.f32"))
    with open(os.path.join(HERE, "golden.txt"), "w") as f:
        f.write("# tiny_decoder.onnx, written by make_tiny_decoder.py\n")
        f.write("prompt " + " ".join(map(str, PROMPT)) + "\n")
        f.write("greedy " + " ".join(map(str, ids[len(PROMPT):])) + "\n")
        f.write(f"logit_rows {len(rows)} vocab {VOCAB}\n")
        f.write(f"min_top2_gap {min_gap:.6f}\n")
    print("ids", ids, "min gap", min_gap, "size", os.path.getsize(path))


if __name__ == "__main__":
    main()
