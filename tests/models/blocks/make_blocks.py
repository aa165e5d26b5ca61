#!/usr/bin/env python3
"""Exports the small ONNX blocks that CI uses to guard exported patterns.

Usage: python3 tests/models/blocks/make_blocks.py [--out DIR]
       (run it with BUILD/.venv-models/bin/python3: torch, torchvision, onnx,
       onnxruntime; bench/models/setup_venv.sh makes that venv)

Each block is a piece of a torchvision model with random weights at a small
resolution, exported the way bench/models/export_models.py exports the whole
model set (TorchScript exporter, opset 17, the same seed, BatchNorm
statistics calibrated on seeded random images), next to a fixed input and
onnxruntime's output for it. blocks_test (tests/models/blocks_test.cc) loads
each in recq and compares (relative L2 < 1e-4). For every NAME it writes

  NAME.onnx       the block, input "input", output "output"
  NAME.input.f32  a random input, uniform [-1, 1), raw little-endian float32
  NAME.ort.f32    onnxruntime's (CPU) output for it, raw float32

The blocks:
  shufflenet_v2_units  two InvertedResidual units of ShuffleNetV2 (stride 2,
                       then stride 1): chunk into halves (Split or Slice),
                       concat, channel shuffle (Reshape, Transpose, Reshape)
  lraspp_head          LR-ASPP's head over a two-scale stem: sigmoid-gated
                       pooled branch, bilinear Resize of the high branch to
                       the low one, bilinear Resize to the input size
  deeplabv3_head       DeepLabV3's head with 16 channels (ASPP with dilated convolutions and
                       the image-pooling branch resized from 1x1) over a
                       stride-2 stem, bilinear Resize to the input size
  recurrent_layers     a sequence model's recurrent layers on a [2, 16, 12]
                       batch-first input: a two-layer bidirectional LSTM
                       (hidden 16), a GRU (hidden 8) and a Linear to 4; the
                       exporter's LSTM and GRU nodes with computed initial
                       states and transposes between layers
"""
import argparse
import json
import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(REPO, "bench", "models"))
import export_models as em  # noqa: E402  (SEED, OPSET, ort_session, rel_l2, ...)

RESOLUTION = 32


def shufflenet_v2_units():
    import torch
    from torchvision.models.shufflenetv2 import InvertedResidual
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 24, 3, 1, 1, bias=False), torch.nn.BatchNorm2d(24),
        torch.nn.ReLU(inplace=True),
        InvertedResidual(24, 48, 2), InvertedResidual(48, 48, 1))


def lraspp_head():
    import torch
    import torch.nn.functional as F
    from torchvision.models.segmentation.lraspp import LRASPPHead

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.low = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, 2, 1), torch.nn.ReLU())
            self.high = torch.nn.Sequential(torch.nn.Conv2d(8, 16, 3, 2, 1), torch.nn.Hardswish())
            self.head = LRASPPHead(8, 16, 5, 16)

        def forward(self, x):
            low = self.low(x)
            out = self.head({"low": low, "high": self.high(low)})
            return F.interpolate(out, size=x.shape[-2:], mode="bilinear", align_corners=False)

    return Block()


def deeplabv3_head():
    import torch
    import torch.nn.functional as F
    from torchvision.models.segmentation.deeplabv3 import ASPP

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, 2, 1), torch.nn.ReLU())
            # DeepLabHead's layers with 16 instead of 256 channels.
            self.head = torch.nn.Sequential(
                ASPP(16, [2, 3, 4], 16), torch.nn.Conv2d(16, 16, 3, padding=1, bias=False),
                torch.nn.BatchNorm2d(16), torch.nn.ReLU(), torch.nn.Conv2d(16, 5, 1))

        def forward(self, x):
            out = self.head(self.stem(x))
            return F.interpolate(out, size=x.shape[-2:], mode="bilinear", align_corners=False)

    return Block()


def recurrent_layers():
    import torch

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(12, 16, num_layers=2, bidirectional=True, batch_first=True)
            self.gru = torch.nn.GRU(32, 8, batch_first=True)
            self.fc = torch.nn.Linear(8, 4)

        def forward(self, x):
            y, _ = self.lstm(x)
            z, _ = self.gru(y)
            return self.fc(z)

    return Block()


BLOCKS = {"shufflenet_v2_units": shufflenet_v2_units, "lraspp_head": lraspp_head,
          "deeplabv3_head": deeplabv3_head, "recurrent_layers": recurrent_layers}
# Input shapes other than an image of RESOLUTION.
INPUT_SHAPES = {"recurrent_layers": (2, 16, 12)}


def export_block(name, out):
    import numpy as np
    import torch

    torch.manual_seed(em.SEED)
    model = BLOCKS[name]()
    # As the model set: BatchNorm statistics from seeded random images (a
    # batch of 4, which DeepLab's 1x1 pooled branch needs in train mode).
    em.calibrate_batchnorm(model, RESOLUTION, batch=4)
    model.eval()
    rng = np.random.default_rng(em.SEED)
    shape = INPUT_SHAPES.get(name, (1, 3, RESOLUTION, RESOLUTION))
    x = rng.uniform(-1.0, 1.0, size=shape).astype(np.float32)
    path = os.path.join(out, name + ".onnx")
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (torch.zeros(x.shape),), path, dynamo=False,
                          opset_version=em.OPSET, input_names=["input"],
                          output_names=["output"], do_constant_folding=True)
        expected_torch = model(torch.from_numpy(x)).numpy()
    y = em.ort_session(path).run(None, {"input": x})[0].astype(np.float32)
    x.astype("<f4").tofile(os.path.join(out, name + ".input.f32"))
    y.astype("<f4").tofile(os.path.join(out, name + ".ort.f32"))
    import onnx
    ops = em.op_histogram(onnx.load(path))
    print(f"{name}: {os.path.getsize(path)} bytes, output {list(y.shape)}, "
          f"ort vs torch rel L2 {em.rel_l2(y, expected_torch):.1e}, ops {json.dumps(ops)}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=HERE, help="output folder (default: this script's)")
    p.add_argument("names", nargs="*", help="blocks to write (default: all)")
    args = p.parse_args()
    for name in args.names or BLOCKS:
        export_block(name, args.out)


if __name__ == "__main__":
    main()
