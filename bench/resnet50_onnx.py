#!/usr/bin/env python3
"""Writes ResNet-50 (torchvision's v1.5 layout) as ONNX, without torch.

    python3 bench/resnet50_onnx.py OUT.onnx        (needs the `onnx` and `numpy` packages)

The graph is what torch.onnx exports for torchvision's resnet50 in eval mode
(batch norms folded into the convolutions): Conv (with bias), Relu, MaxPool,
Add, GlobalAveragePool, Flatten, Gemm, opset 17, input `input` 1x3x224x224,
output `output` 1x1000. The weights are random (seeded, scaled by fan-in so
activations stay finite): for timing compiles and loads, not for accuracy.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(out):
    rng = np.random.default_rng(50)
    nodes, inits = [], []
    count = [0]

    def name(prefix):
        count[0] += 1
        return f"{prefix}{count[0]}"

    def conv(x, cin, cout, k, stride=1, relu=True):
        w, b, y = name("w"), name("b"), name("conv")
        scale = np.sqrt(1.0 / (cin * k * k))
        inits.append(numpy_helper.from_array(
            (rng.standard_normal((cout, cin, k, k)) * scale).astype(np.float32), w))
        inits.append(numpy_helper.from_array(
            (rng.standard_normal(cout) * 0.01).astype(np.float32), b))
        nodes.append(helper.make_node("Conv", [x, w, b], [y], kernel_shape=[k, k],
                                      strides=[stride, stride], pads=[k // 2] * 4))
        if not relu:
            return y
        r = name("relu")
        nodes.append(helper.make_node("Relu", [y], [r]))
        return r

    x = conv("input", 3, 64, 7, stride=2)
    pool = name("pool")
    nodes.append(helper.make_node("MaxPool", [x], [pool], kernel_shape=[3, 3], strides=[2, 2],
                                  pads=[1, 1, 1, 1]))
    x, cin = pool, 64
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for i in range(blocks):
            s = stride if i == 0 else 1
            y = conv(x, cin, width, 1)
            y = conv(y, width, width, 3, stride=s)
            y = conv(y, width, width * 4, 1, relu=False)
            shortcut = conv(x, cin, width * 4, 1, stride=s, relu=False) if i == 0 else x
            added, r = name("add"), name("relu")
            nodes.append(helper.make_node("Add", [y, shortcut], [added]))
            nodes.append(helper.make_node("Relu", [added], [r]))
            x, cin = r, width * 4
    gap, flat = name("gap"), name("flat")
    nodes.append(helper.make_node("GlobalAveragePool", [x], [gap]))
    nodes.append(helper.make_node("Flatten", [gap], [flat], axis=1))
    inits.append(numpy_helper.from_array(
        (rng.standard_normal((1000, 2048)) * np.sqrt(1.0 / 2048)).astype(np.float32), "fc_w"))
    inits.append(numpy_helper.from_array(np.zeros(1000, np.float32), "fc_b"))
    nodes.append(helper.make_node("Gemm", [flat, "fc_w", "fc_b"], ["output"], transB=1))
    graph = helper.make_graph(
        nodes, "resnet50", [helper.make_tensor_value_info("input", TensorProto.FLOAT,
                                                          [1, 3, 224, 224])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 1000])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="recq bench/resnet50_onnx.py")
    onnx.checker.check_model(model)
    onnx.save(model, out)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: resnet50_onnx.py OUT.onnx")
    main(sys.argv[1])
