#!/usr/bin/env python3
"""Writes ONNX node-test-style cases for quantization and signal forms that
Debian's libonnx-testdata (opset 17) lacks: QuantizeLinear and
DequantizeLinear per block and with 16-bit types (opset 21), QLinearMatMul
with a batch (opset 21), DFT with its axis as an input
(opset 20), and DynamicQuantizeLinear and QLinearConv on random data. The
expected outputs come from onnxruntime.

Each case is a folder beside this script, laid out as make_cases.py's are
(model.onnx, test_data_set_0/input_N.pb and output_0.pb); constants are
initializers, the first input is a graph input.

Usage (onnx and onnxruntime come from the model-export venv):
  /work/main/build/.venv-models/bin/python tests/onnx/newer_opsets/make_quant_cases.py
"""
import os
import shutil

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(20261126)


def write_case(name, opset, node, x, outputs, initializers=()):
    """One single-node model with graph input X (x) and the named outputs
    [(name, tensor type, shape)]."""
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info("X", helper.np_dtype_to_tensor_dtype(x.dtype),
                                       list(x.shape))],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
        initializer=[numpy_helper.from_array(np.asarray(a), n) for n, a in initializers])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="recq make_quant_cases.py")
    model.ir_version = 9
    onnx.checker.check_model(model, full_check=True)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    ys = sess.run(None, {"X": x})
    out = os.path.join(HERE, name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.join(out, "test_data_set_0"))
    onnx.save(model, os.path.join(out, "model.onnx"))
    data = os.path.join(out, "test_data_set_0")
    with open(os.path.join(data, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "X").SerializeToString())
    for i, ((n, _, _), y) in enumerate(zip(outputs, ys)):
        with open(os.path.join(data, f"output_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(np.asarray(y), n).SerializeToString())
    print(f"{name}: opset {opset}, X {list(x.shape)} -> {[list(np.shape(y)) for y in ys]}")


def main():
    # QuantizeLinear per block: blocks of 3 along axis 1 (6 = 2 blocks).
    x = RNG.uniform(-60, 60, size=(2, 6, 5)).astype(np.float32)
    scale = RNG.uniform(0.1, 1.0, size=(2, 2, 5)).astype(np.float32)
    zp = RNG.integers(-20, 20, size=(2, 2, 5)).astype(np.int8)
    write_case("test_quantizelinear_blocked_int8_opset21", 21,
               helper.make_node("QuantizeLinear", ["X", "s", "z"], ["Y"], axis=1,
                                block_size=3),
               x, [("Y", TensorProto.INT8, [2, 6, 5])], [("s", scale), ("z", zp)])

    # DequantizeLinear per block of uint8, a partial last block (7 = 3 + 3 + 1).
    q = RNG.integers(0, 256, size=(4, 7)).astype(np.uint8)
    scale = RNG.uniform(0.01, 0.5, size=(4, 3)).astype(np.float32)
    zp = RNG.integers(0, 256, size=(4, 3)).astype(np.uint8)
    write_case("test_dequantizelinear_blocked_uint8_opset21", 21,
               helper.make_node("DequantizeLinear", ["X", "s", "z"], ["Y"], axis=-1,
                                block_size=3),
               q, [("Y", TensorProto.FLOAT, [4, 7])], [("s", scale), ("z", zp)])

    # 16-bit types per axis.
    x = RNG.uniform(-4000, 4000, size=(3, 4, 5)).astype(np.float32)
    scale = RNG.uniform(0.05, 0.2, size=(3,)).astype(np.float32)
    zp = RNG.integers(-1000, 1000, size=(3,)).astype(np.int16)
    write_case("test_quantizelinear_int16_axis0_opset21", 21,
               helper.make_node("QuantizeLinear", ["X", "s", "z"], ["Y"], axis=0),
               x, [("Y", TensorProto.INT16, [3, 4, 5])], [("s", scale), ("z", zp)])
    q = RNG.integers(0, 65536, size=(3, 4, 5)).astype(np.uint16)
    scale = RNG.uniform(0.001, 0.01, size=(4,)).astype(np.float32)
    zp = RNG.integers(0, 65536, size=(4,)).astype(np.uint16)
    write_case("test_dequantizelinear_uint16_axis1_opset21", 21,
               helper.make_node("DequantizeLinear", ["X", "s", "z"], ["Y"], axis=1),
               q, [("Y", TensorProto.FLOAT, [3, 4, 5])], [("s", scale), ("z", zp)])

    # DynamicQuantizeLinear on a few hundred random values.
    x = RNG.uniform(-3, 7, size=(4, 75)).astype(np.float32)
    write_case("test_dynamicquantizelinear_random_opset11", 11,
               helper.make_node("DynamicQuantizeLinear", ["X"], ["Y", "S", "Z"]),
               x, [("Y", TensorProto.UINT8, [4, 75]), ("S", TensorProto.FLOAT, []),
                   ("Z", TensorProto.UINT8, [])])

    # QLinearMatMul of int8 with a batch, per-tensor scales.
    a = RNG.integers(-128, 128, size=(2, 5, 16)).astype(np.int8)
    b = RNG.integers(-128, 128, size=(16, 3)).astype(np.int8)
    write_case("test_qlinearmatmul_int8_batch_opset21", 21,
               helper.make_node("QLinearMatMul",
                                ["X", "as", "az", "b", "bs", "bz", "ys", "yz"], ["Y"]),
               a, [("Y", TensorProto.INT8, [2, 5, 3])],
               [("as", np.float32(0.02)), ("az", np.int8(3)), ("b", b),
                ("bs", np.float32(0.015)), ("bz", np.int8(-2)), ("ys", np.float32(0.9)),
                ("yz", np.int8(5))])

    # QLinearConv with per-channel weight scales, a bias, stride and padding.
    x = RNG.integers(0, 256, size=(1, 4, 9, 8)).astype(np.uint8)
    w = RNG.integers(0, 256, size=(6, 2, 3, 3)).astype(np.uint8)
    write_case("test_qlinearconv_per_channel_opset10", 10,
               helper.make_node("QLinearConv",
                                ["X", "xs", "xz", "w", "ws", "wz", "ys", "yz", "B"], ["Y"],
                                group=2, strides=[2, 1], pads=[1, 1, 1, 1]),
               x, [("Y", TensorProto.UINT8, [1, 6, 5, 8])],
               [("xs", np.float32(0.03)), ("xz", np.uint8(120)), ("w", w),
                ("ws", RNG.uniform(0.002, 0.01, size=(6,)).astype(np.float32)),
                ("wz", np.uint8(128)), ("ys", np.float32(0.4)), ("yz", np.uint8(100)),
                ("B", RNG.integers(-2000, 2000, size=(6,)).astype(np.int32))])

    # DFT of opset 20: the axis as an input, a truncating dft_length, complex
    # input (a real one's structural zeros come out of onnxruntime's FFT as
    # rounding noise of 1e-6, past the 1e-7 atol).
    x = RNG.uniform(-1, 1, size=(2, 12, 3, 2)).astype(np.float32)
    write_case("test_dft_axis_input_complex_opset20", 20,
               helper.make_node("DFT", ["X", "len", "axis"], ["Y"]),
               x, [("Y", TensorProto.FLOAT, [2, 10, 3, 2])],
               [("len", np.int64(10)), ("axis", np.int64(1))])

if __name__ == "__main__":
    main()
