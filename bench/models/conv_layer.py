#!/usr/bin/env python3
"""Writes a one-layer ONNX model, a Conv followed by Clip(0, 6), with seeded
random weights: a single convolution to time on its own with
`recq bench --profile` or bench/ab_profile.py.

  python3 bench/models/conv_layer.py OUT.onnx --channels 16 --out-channels 96 \\
      --size 112 [--kernel 1] [--stride 1] [--groups 1]
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("--channels", type=int, required=True)
    p.add_argument("--out-channels", type=int, required=True)
    p.add_argument("--size", type=int, required=True, help="input height and width")
    p.add_argument("--kernel", type=int, default=1)
    p.add_argument("--stride", type=int, default=1)
    p.add_argument("--groups", type=int, default=1)
    a = p.parse_args()
    rng = np.random.default_rng(0)
    k, pad = a.kernel, a.kernel // 2
    w = rng.standard_normal((a.out_channels, a.channels // a.groups, k, k)).astype(np.float32)
    inits = [numpy_helper.from_array(w * 0.1, "w"),
             numpy_helper.from_array(rng.standard_normal(a.out_channels).astype(np.float32), "b"),
             numpy_helper.from_array(np.array(0, np.float32), "lo"),
             numpy_helper.from_array(np.array(6, np.float32), "hi")]
    conv = helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[k, k],
                            strides=[a.stride] * 2, pads=[pad] * 4, group=a.groups)
    clip = helper.make_node("Clip", ["c", "lo", "hi"], ["y"])
    out = (a.size + 2 * pad - k) // a.stride + 1
    graph = helper.make_graph(
        [conv, clip], "conv_layer",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, a.channels, a.size, a.size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, a.out_channels, out, out])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, a.out)


if __name__ == "__main__":
    main()
