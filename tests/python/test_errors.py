"""Failed statuses become recq.Error subclasses; bad bindings never crash or enqueue."""

import numpy as np
import pytest

import recq
from conftest import ONNX_NODE_TESTS, assert_bitwise_equal, random_inputs


def test_error_hierarchy():
    for name in ("InvalidArgument", "Unimplemented", "NotFound", "FailedPrecondition",
                 "Internal", "DataLoss", "ResourceExhausted", "Unavailable"):
        cls = getattr(recq, name)
        assert issubclass(cls, recq.Error) and issubclass(cls, RuntimeError)
    assert issubclass(recq.InvalidArgument, ValueError)
    assert issubclass(recq.Unimplemented, NotImplementedError)


def test_missing_model_is_not_found(tmp_path, context):
    path = tmp_path / "missing.onnx"
    with pytest.raises(recq.NotFound, match="missing.onnx"):
        recq.Engine.load(str(path), device=context)


def test_garbage_model_is_invalid_argument(tmp_path, context):
    path = tmp_path / "garbage.onnx"
    path.write_bytes(np.random.default_rng().integers(0, 256, 4096, dtype=np.uint8).tobytes())
    with pytest.raises(recq.Error) as info:
        recq.Engine.load(str(path), device=context)
    assert type(info.value) in (recq.InvalidArgument, recq.DataLoss)


def test_unsupported_op_is_unimplemented(context):
    model = ONNX_NODE_TESTS / "test_roialign_aligned_false" / "model.onnx"
    if not model.exists():
        pytest.skip(f"{model} missing (Debian: libonnx-testdata)")
    with pytest.raises(recq.Unimplemented, match="RoiAlign"):
        recq.Engine.load(str(model), device=context)


def test_device_out_of_range_is_not_found():
    with pytest.raises(recq.NotFound, match="gpu:4096"):
        recq.Context("gpu:4096")


def test_bad_option_names_are_invalid_argument(small_engine, context):
    with pytest.raises(recq.InvalidArgument, match="backend"):
        small_engine.record(backend="warp-drive")
    with pytest.raises(recq.InvalidArgument, match="off, fast or exhaustive"):
        recq.Engine.load(str(next(iter(__import__("conftest").BLOCKS))), device=context,
                         tuning="sometimes")
    with pytest.raises(recq.InvalidArgument, match="fp32"):
        recq.Engine.load(str(next(iter(__import__("conftest").BLOCKS))), device=context,
                         precision="fp8")


def test_bad_bindings_raise_and_leave_the_recording_usable(small_engine):
    engine = small_engine
    rec = engine.record()
    feeds = random_inputs(engine, np.random.default_rng())
    name = engine.inputs[0].name
    x = feeds[name]
    with pytest.raises(recq.InvalidArgument, match="float64"):
        rec.run({name: x.astype(np.float64)})
    with pytest.raises(recq.InvalidArgument, match="shape"):
        rec.run({name: x.reshape(-1)})
    with pytest.raises(recq.InvalidArgument, match="not a binding"):
        rec.run({**feeds, "no_such_tensor": x})
    with pytest.raises(recq.InvalidArgument, match="missing input"):
        rec.run({})
    with pytest.raises(recq.InvalidArgument, match="numpy array or a recq.Tensor"):
        rec.run({name: x.tolist()})
    with pytest.raises(recq.InvalidArgument, match="writable"):
        out = np.empty(engine.outputs[0].shape, engine.outputs[0].dtype)
        out.flags.writeable = False
        rec.run({**feeds, engine.outputs[0].name: out})
    wrong = recq.Tensor.empty(engine, [2, 2], "float32")
    with pytest.raises(recq.InvalidArgument, match="expected"):
        rec.run({name: wrong})
    other_context = recq.Context(engine.context.device["name"])
    foreign = recq.Tensor.from_numpy(other_context, x)
    with pytest.raises(recq.InvalidArgument, match="another context"):
        rec.run({name: foreign})
    with pytest.raises(recq.NotFound, match="no_such"):
        engine.new_tensor("no_such")
    with pytest.raises(recq.InvalidArgument, match="dtype"):
        recq.Tensor.from_numpy(engine, x.astype(np.complex64))
    with pytest.raises(TypeError):
        rec.run([x])
    # Nothing was enqueued: the recording still gives the engine's results.
    assert_bitwise_equal(rec.run(feeds), engine.run(feeds))


def test_engine_file_with_other_precision_is_refused(small_engine, context, tmp_path):
    path = tmp_path / "e.recq"
    small_engine.save(str(path))
    with pytest.raises(recq.InvalidArgument, match="fp32"):
        recq.Engine.load(str(path), device=context, precision="fp16")
    with pytest.raises(recq.InvalidArgument, match="shapes"):
        recq.Engine.load(str(path), device=context, shapes={"x": [1]})
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises((recq.DataLoss, recq.InvalidArgument)):
        recq.Engine.load(str(path), device=context)


def test_messages_are_the_cli_messages(cli, context, tmp_path):
    """The exception carries the C++ status message, as `recq run` prints it."""
    import subprocess

    cases = [(tmp_path / "missing.onnx", recq.NotFound, "NOT_FOUND")]
    unsupported = ONNX_NODE_TESTS / "test_roialign_aligned_false" / "model.onnx"
    if unsupported.exists():
        cases.append((unsupported, recq.Unimplemented, "UNIMPLEMENTED"))
    for model, cls, code in cases:
        with pytest.raises(cls) as info:
            recq.Engine.load(str(model), device=context)
        run = subprocess.run([cli, "run", str(model)], capture_output=True, text=True)
        assert run.returncode != 0
        assert f"{code}: {info.value}" in run.stderr, (str(info.value), run.stderr)
