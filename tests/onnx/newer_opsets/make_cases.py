#!/usr/bin/env python3
"""Writes ONNX node-test-style cases for ops of opsets newer than Debian's
libonnx-testdata (1.12, opset 17) covers: Gelu (20), GroupNormalization (18
per-group, 21 per-channel), Mish (18) and the Reduce* ops of opset 18 (axes
as an input), LayerNormalization without a bias. The expected outputs come
from onnxruntime.

Each case is a folder beside this script, laid out as ONNX's node tests are:
NAME/model.onnx and NAME/test_data_set_0/{input_0,output_0}.pb, a few
hundred bytes each. tests/onnx/onnx_conformance_test.cc runs every folder.

Usage (onnx and onnxruntime come from the model-export venv):
  /work/wtmodels/build/.venv-models/bin/python tests/onnx/newer_opsets/make_cases.py
"""
import os
import shutil

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(20261123)


def rand(*shape, lo=-3.0, hi=3.0):
    return RNG.uniform(lo, hi, size=shape).astype(np.float32)


def write_case(name, opset, node, x, y_shape, initializers=()):
    """One single-node model with float input X and output Y."""
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, y_shape)],
        initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="recq make_cases.py")
    model.ir_version = 9
    # onnx >= 1.16's checker refuses GroupNormalization-18 as deprecated;
    # onnxruntime still runs it with its per-group semantics.
    if node.op_type != "GroupNormalization" or opset >= 21:
        onnx.checker.check_model(model, full_check=True)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (y,) = sess.run(None, {"X": x})
    out = os.path.join(HERE, name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.join(out, "test_data_set_0"))
    onnx.save(model, os.path.join(out, "model.onnx"))
    for fname, arr, tname in (("input_0.pb", x, "X"), ("output_0.pb", y, "Y")):
        with open(os.path.join(out, "test_data_set_0", fname), "wb") as f:
            f.write(numpy_helper.from_array(np.asarray(y if tname == "Y" else arr), tname)
                    .SerializeToString())
    print(f"{name}: opset {opset}, X {list(x.shape)} -> Y {list(y.shape)}")


def const(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def main():
    # Gelu, opset 20.
    for approximate in ("none", "tanh"):
        x = rand(2, 3, 7, lo=-5, hi=5)
        write_case(f"test_gelu_{approximate}_opset20", 20,
                   helper.make_node("Gelu", ["X"], ["Y"], approximate=approximate),
                   x, list(x.shape))
    # Mish, opset 18.
    x = rand(3, 11, lo=-8, hi=8)
    write_case("test_mish_opset18", 18, helper.make_node("Mish", ["X"], ["Y"]), x, list(x.shape))
    # GroupNormalization: opset 18 scales per group, 21 per channel.
    for opset, groups, per_group in ((18, 2, True), (18, 4, True), (21, 2, False), (21, 1, False)):
        x = rand(2, 4, 3, 3, lo=0, hi=4)
        n = groups if per_group else 4
        write_case(f"test_group_normalization_{groups}g_opset{opset}", opset,
                   helper.make_node("GroupNormalization", ["X", "scale", "bias"], ["Y"],
                                    num_groups=groups, epsilon=1e-3),
                   x, list(x.shape),
                   [const("scale", rand(n, lo=0.5, hi=2)), const("bias", rand(n))])
    # Reductions with axes as a constant input (opset 18).
    x = rand(2, 3, 4, 5, lo=0.1, hi=2)
    for op, axes, keepdims, noop, y_shape in (
            ("ReduceMean", [2, 3], 1, 0, [2, 3, 1, 1]),
            ("ReduceMean", [-1], 0, 0, [2, 3, 4]),
            ("ReduceMax", [0, 2], 1, 0, [1, 3, 1, 5]),
            ("ReduceMin", [1], 0, 0, [2, 4, 5]),
            ("ReduceSum", [], 1, 1, [2, 3, 4, 5]),
            ("ReduceProd", [-2], 1, 0, [2, 3, 1, 5]),
            ("ReduceL2", [3, 1], 0, 0, [2, 4]),
            ("ReduceLogSumExp", [1, 2], 1, 0, [2, 1, 1, 5])):
        inputs = ["X", "axes"] if axes or op == "ReduceSum" else ["X"]
        tag = "_".join(str(a).replace("-", "m") for a in axes) or "none"
        write_case(f"test_{op.lower()}_axes_{tag}_keep{keepdims}_opset18", 18,
                   helper.make_node(op, inputs, ["Y"], keepdims=keepdims,
                                    noop_with_empty_axes=noop),
                   x, y_shape, [const("axes", np.array(axes, dtype=np.int64))])
    # LayerNormalization without a bias, over the last two axes.
    x = rand(2, 3, 4, 5)
    write_case("test_layer_normalization_no_bias_opset17", 17,
               helper.make_node("LayerNormalization", ["X", "scale"], ["Y"], axis=-2,
                                epsilon=1e-4),
               x, list(x.shape), [const("scale", rand(4, 5, lo=0.5, hi=2))])


if __name__ == "__main__":
    main()
