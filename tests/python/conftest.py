"""Fixtures of the Python API tests (ctest entry python_api).

ctest sets PYTHONPATH to the build's package (<build>/python) and RECQ_CLI to
the recq CLI of the same build; the tests compare the Python API's results
with the CLI's, bit for bit. Without RECQ_CLI (a pip-installed recq) those
comparisons are skipped.
"""

import os
import pathlib
import subprocess

import numpy as np
import pytest

import recq

REPO = pathlib.Path(__file__).resolve().parents[2]
BLOCKS = sorted((REPO / "tests" / "models" / "blocks").glob("*.onnx"))
ONNX_NODE_TESTS = pathlib.Path(
    os.environ.get("RECQ_ONNX_TESTDATA_DIR", "/usr/share/libonnx-testdata/data/node"))
# The device every test uses: $RECQ_DEVICE as the CLI reads it, else auto.
DEVICE = os.environ.get("RECQ_DEVICE", "")


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("RECQ_CLI")
    if not path or not os.path.exists(path):
        pytest.skip("RECQ_CLI (the recq CLI of this build) is not set; ctest sets it")
    return path


@pytest.fixture(scope="session")
def context():
    return recq.Context(DEVICE)


@pytest.fixture(scope="session")
def block_engines(context):
    """Every block model of tests/models/blocks, compiled once."""
    return {p: recq.Engine.load(str(p), device=context, tuning="off") for p in BLOCKS}


@pytest.fixture(scope="session")
def small_engine(block_engines):
    """The block model with the fewest input elements."""
    return min(block_engines.values(), key=lambda e: int(np.prod(e.inputs[0].shape)))


@pytest.fixture(scope="session")
def mobilenet_path(cli, tmp_path_factory):
    """MobileNet V2 at 96x96 with seeded random weights, written by the CLI."""
    path = tmp_path_factory.mktemp("mobilenet") / "mobilenet_v2_96.onnx"
    subprocess.run([cli, "export-mobilenet", "--model=v2", "--resolution=96", str(path)],
                   check=True, capture_output=True)
    return path


def random_inputs(engine, rng):
    """Fresh random values for every input: floats in [-1, 1), integers in [0, 10)."""
    feeds = {}
    for i in engine.inputs:
        if np.issubdtype(i.dtype, np.floating):
            feeds[i.name] = rng.uniform(-1.0, 1.0, size=i.shape).astype(i.dtype)
        else:
            feeds[i.name] = rng.integers(0, 10, size=i.shape).astype(i.dtype)
    return feeds


def poisoned_outputs(engine):
    """An output array per output, filled with NaN (or 0x7f bytes) first."""
    out = {}
    for o in engine.outputs:
        a = np.empty(o.shape, dtype=o.dtype)
        if np.issubdtype(o.dtype, np.floating):
            a.fill(np.nan)
        else:
            a.view(np.uint8).fill(0x7F)
        out[o.name] = a
    return out


def assert_bitwise_equal(actual, expected):
    assert set(actual) == set(expected)
    for name in expected:
        a, e = np.asarray(actual[name]), np.asarray(expected[name])
        assert a.dtype == e.dtype and a.shape == e.shape, name
        assert np.array_equal(a.view(np.uint8), e.view(np.uint8)), (
            f"{name}: {np.count_nonzero(a != e)} of {a.size} elements differ")
