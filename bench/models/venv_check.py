#!/usr/bin/env python3
"""Helpers of bench/models/setup_venv.sh, run with the venv's Python.

  venv_check.py torch-deps   torch's pure-Python requirements (its CUDA ones,
                             nvidia-*, cuda-* and triton, and extras left out)
  venv_check.py smoke-test   export a small net with the exporter the
                             benchmarks use, check it, run it with onnxruntime
                             and compare with PyTorch; exit 1 on any failure
"""
import sys


def torch_deps():
    import importlib.metadata as md
    import re
    for req in md.requires("torch") or []:
        spec, _, marker = req.partition(";")
        name = re.match(r"[A-Za-z0-9_.\-]+", spec.strip()).group(0).lower()
        if "extra ==" in marker or name.startswith(("nvidia-", "cuda-", "triton")):
            continue
        print(spec.strip().replace(" ", ""))


def smoke_test():
    import os
    import tempfile
    import warnings

    import numpy as np
    import onnx
    import onnxruntime as ort
    import torch
    import torchvision

    warnings.simplefilter("ignore")
    torch.manual_seed(0)
    m = torchvision.models.squeezenet1_1(weights=None).eval()
    x = torch.rand(1, 3, 64, 64)
    with tempfile.TemporaryDirectory() as d, torch.no_grad():
        p = os.path.join(d, "m.onnx")
        torch.onnx.export(m, (x,), p, dynamo=False, opset_version=17,
                          input_names=["input"], output_names=["output"])
        onnx.checker.check_model(p)
        sess = ort.InferenceSession(p, providers=["CPUExecutionProvider"])
        y = sess.run(None, {"input": x.numpy()})[0]
        e = m(x).numpy()
    err = float(np.linalg.norm(y - e) / np.linalg.norm(e))
    if not err < 1e-4:
        sys.exit(f"smoke test: onnxruntime and PyTorch disagree (relative L2 {err:.2e})")
    print(f"setup_venv: ok: torch {torch.__version__} (CUDA available: "
          f"{torch.cuda.is_available()}), torchvision {torchvision.__version__}, onnx "
          f"{onnx.__version__}, onnxruntime {ort.__version__}; squeezenet exported and agrees "
          f"({err:.1e})")


if __name__ == "__main__":
    {"torch-deps": torch_deps, "smoke-test": smoke_test}[sys.argv[1]]()
