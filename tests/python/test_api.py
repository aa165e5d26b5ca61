"""recq's Python API against the C++ CLI's results, bit for bit."""

import subprocess
import sys

import numpy as np
import pytest

import recq
from conftest import (BLOCKS, DEVICE, ONNX_NODE_TESTS, assert_bitwise_equal, poisoned_outputs,
                      random_inputs)


def cli_run(cli, model, feeds, out_names, tmp_path):
    """`recq run MODEL --input=... --output=...` on raw files; its outputs."""
    args = [cli, "run", str(model), "--runs=1"]
    if DEVICE:
        args.append(f"--device={DEVICE}")
    for name, value in feeds.items():
        path = tmp_path / f"in_{len(args)}.bin"
        value.tofile(path)
        args.append(f"--input={name}={path}")
    paths = {name: tmp_path / f"out_{i}.bin" for i, name in enumerate(out_names)}
    args.append("--output=" + ",".join(f"{n}={p}" for n, p in paths.items()))
    subprocess.run(args, check=True, capture_output=True, env={"RECQ_TUNING": "off",
                                                               **__import__("os").environ})
    return paths


def test_devices_lists_the_context_device(context):
    devices = recq.devices()
    assert devices, "no OpenCL device listed"
    for d in devices:
        assert d["selector"].split(":")[0] in ("gpu", "cpu", "accelerator", "custom")
        assert isinstance(d["name"], str) and d["name"]
        assert d["compute_units"] > 0
    assert context.device["name"] in [d["name"] for d in devices]


def test_engine_bindings_describe_the_model(small_engine):
    assert small_engine.inputs and small_engine.outputs
    for b in small_engine.inputs + small_engine.outputs:
        assert isinstance(b.name, str) and b.name
        assert isinstance(b.shape, tuple) and all(d > 0 for d in b.shape)
        assert isinstance(b.dtype, np.dtype)
    assert small_engine.stats["dispatches"] > 0


@pytest.mark.parametrize("model", BLOCKS, ids=lambda p: p.stem)
def test_run_matches_cli_bit_for_bit(model, block_engines, cli, tmp_path):
    engine = block_engines[model]
    feeds = random_inputs(engine, np.random.default_rng())
    got = engine.run(feeds)
    names = [o.name for o in engine.outputs]
    paths = cli_run(cli, model, feeds, names, tmp_path)
    want = {o.name: np.fromfile(paths[o.name], dtype=o.dtype).reshape(o.shape)
            for o in engine.outputs}
    assert_bitwise_equal(got, want)


def test_mobilenet_matches_cli_bit_for_bit(mobilenet_path, context, cli, tmp_path):
    engine = recq.Engine.load(str(mobilenet_path), device=context, tuning="off")
    assert engine.inputs[0].shape == (1, 3, 96, 96)
    feeds = random_inputs(engine, np.random.default_rng())
    got = engine.run(feeds)
    names = [o.name for o in engine.outputs]
    paths = cli_run(cli, mobilenet_path, feeds, names, tmp_path)
    want = {o.name: np.fromfile(paths[o.name], dtype=o.dtype).reshape(o.shape)
            for o in engine.outputs}
    assert_bitwise_equal(got, want)


def test_every_binding_path_gives_the_same_bits(small_engine):
    engine = small_engine
    feeds = random_inputs(engine, np.random.default_rng())
    reference = engine.run(feeds)
    rec = engine.record()
    assert rec.backend in ("replay", "khr_command_buffer", "qcom")
    assert rec.dispatch_count > 0
    # numpy in, numpy out (fresh arrays).
    assert_bitwise_equal(rec.run(feeds), reference)
    # numpy in, caller's poisoned numpy out (filled in place and returned).
    out = poisoned_outputs(engine)
    result = rec.run({**feeds, **out})
    assert all(result[n] is out[n] for n in out)
    assert_bitwise_equal(out, reference)
    # device tensors in and out, staying on the device.
    ins = {n: recq.Tensor.from_numpy(engine, v) for n, v in feeds.items()}
    outs = {o.name: engine.new_tensor(o.name) for o in engine.outputs}
    for o in engine.outputs:
        outs[o.name].write(poisoned_outputs(engine)[o.name])
    assert rec.run({**ins, **outs}) == {}
    assert_bitwise_equal({n: t.numpy() for n, t in outs.items()}, reference)
    # enqueue / wait.
    handle = rec.enqueue(feeds)
    assert_bitwise_equal(handle.wait(), reference)
    assert handle.done
    # a second recording, unrecorded backend.
    assert_bitwise_equal(engine.record(backend="unrecorded").run(feeds), reference)


def test_pinned_uploads_give_the_same_bits_with_runs_in_flight(small_engine, context):
    # The pinned staging of numpy inputs (the default where the device does
    # not share host memory) forced on: several runs enqueued before any is
    # waited for, more than the two pinned buffers per input, each with its
    # own inputs, whose arrays are overwritten right after enqueueing.
    engine = small_engine
    rec = engine.record(pinned_uploads=True)
    assert rec.pinned_uploads
    assert engine.record().pinned_uploads == (not context.host_unified_memory)
    rng = np.random.default_rng()
    feeds = [random_inputs(engine, rng) for _ in range(5)]
    want = [engine.record(pinned_uploads=False).run(f) for f in feeds]
    handles = []
    for f in feeds:
        scratch = {n: v.copy() for n, v in f.items()}
        handles.append(rec.enqueue(scratch))
        for v in scratch.values():
            v[...] = 0  # the run must have taken its own copy already
    for handle, expected in zip(handles, want):
        assert_bitwise_equal(handle.wait(), expected)
    # And again, one run at a time, through the same pinned buffers.
    for f, expected in zip(feeds, want):
        assert_bitwise_equal(rec.run(f), expected)


def test_engine_file_round_trip(small_engine, context, tmp_path):
    path = tmp_path / "block.recq"
    small_engine.save(str(path))
    loaded = recq.Engine.load(str(path), device=context)
    assert loaded.stats["origin"].startswith("file")
    assert [(b.name, b.shape, b.dtype) for b in loaded.inputs] == \
        [(b.name, b.shape, b.dtype) for b in small_engine.inputs]
    feeds = random_inputs(small_engine, np.random.default_rng())
    assert_bitwise_equal(loaded.run(feeds), small_engine.run(feeds))


def test_python_m_recq_mirrors_the_cli(small_engine, tmp_path):
    model = next(p for p in BLOCKS)
    engine = recq.Engine.load(str(model), device=DEVICE or None, tuning="off")
    feeds = random_inputs(engine, np.random.default_rng())
    args = [sys.executable, "-m", "recq", "run", str(model), "--runs=2"]
    for name, value in feeds.items():
        np.save(tmp_path / f"{name}.npy", value)
        args.append(f"--input={name}={tmp_path / f'{name}.npy'}")
    for o in engine.outputs:
        args.append(f"--output={o.name}={tmp_path / 'out.npy'}")
        break
    if DEVICE:
        args.append(f"--device={DEVICE}")
    run = subprocess.run(args, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "latency over 2 runs" in run.stdout
    o = engine.outputs[0]
    assert_bitwise_equal({o.name: np.load(tmp_path / "out.npy")}, {o.name: engine.run(feeds)[o.name]})
    devices = subprocess.run([sys.executable, "-m", "recq", "devices"], capture_output=True,
                             text=True, check=True)
    assert recq.devices()[0]["name"] in devices.stdout
    bad = subprocess.run([sys.executable, "-m", "recq", "run", str(tmp_path / "none.onnx")],
                         capture_output=True, text=True)
    assert bad.returncode == 1 and "NotFound" in bad.stderr


def test_relu_node_model_matches_numpy(context):
    model = ONNX_NODE_TESTS / "test_relu" / "model.onnx"
    if not model.exists():
        pytest.skip(f"{model} missing (Debian: libonnx-testdata)")
    engine = recq.Engine.load(str(model), device=context)
    x = np.random.default_rng().standard_normal(engine.inputs[0].shape).astype(np.float32)
    (y,) = engine.run({engine.inputs[0].name: x}).values()
    np.testing.assert_array_equal(y, np.maximum(x, 0))
