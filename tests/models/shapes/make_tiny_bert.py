#!/usr/bin/env python3
"""Exports the tiny BERT encoder that shaped_engine_test serves over 1..64.

Usage: BUILD/.venv-models/bin/python3 tests/models/shapes/make_tiny_bert.py [--out DIR]

A transformers BertModel (hidden 32, 2 layers, 2 heads, intermediate 64,
vocabulary 100, 64 positions, no pooler) with seeded random weights,
exported by the TorchScript exporter at opset 17 as
bench/models/export_models.py exports the text models, with inputs
input_ids and attention_mask (int64, [batch, sequence]) and the output
last_hidden_state ([batch, sequence, 32]); "batch" and "sequence" are
symbolic. Writes
tiny_bert.onnx (about 100 KB).
"""
import argparse
import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=HERE)
    args = p.parse_args()
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=64)
    bert = BertModel(cfg, add_pooling_layer=False).eval()

    class Wrapped(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = bert

        def forward(self, input_ids, attention_mask):
            return self.m(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    ids = torch.randint(0, 100, (1, 16))
    mask = torch.ones(1, 16, dtype=torch.int64)
    axes = {"input_ids": {0: "batch", 1: "sequence"},
            "attention_mask": {0: "batch", 1: "sequence"},
            "last_hidden_state": {0: "batch", 1: "sequence"}}
    path = os.path.join(args.out, "tiny_bert.onnx")
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(Wrapped().eval(), (ids, mask), path, opset_version=17, dynamo=False,
                          input_names=["input_ids", "attention_mask"],
                          output_names=["last_hidden_state"], dynamic_axes=axes,
                          do_constant_folding=True)
    print(f"{path}: {os.path.getsize(path)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
