"""ShapedEngine (Engine.load with a shape profile) against exact-shape engines.

tests/models/shapes/tiny_bert.onnx (inputs input_ids and attention_mask,
[batch, sequence] int64; output last_hidden_state [batch, sequence, 32]) is
served over a profile with padding; every request's outputs are compared
with an Engine compiled for exactly that shape. Tolerance: padded positions
get attention_mask 0, whose softmax terms are exact zeros, so the unpadded
positions agree to float32 rounding (max abs difference 1e-5 relative to the
largest magnitude).
"""

import pathlib

import numpy as np
import pytest

import recq

MODELS = pathlib.Path(__file__).resolve().parents[2] / "tests" / "models"
MODEL = MODELS / "shapes" / "tiny_bert.onnx"
PROFILE = {"input_ids": "1..2x1..32/pow2", "attention_mask": "1..2x1..32/pow2"}
PAD = {"input_ids": 0, "attention_mask": 0}


@pytest.fixture(scope="module")
def shaped(context):
    return recq.Engine.load(str(MODEL), device=context, shapes=PROFILE, pad=PAD, tuning="off")


def request(rng, batch, length):
    ids = rng.integers(0, 100, size=(batch, length)).astype(np.int64)
    mask = (rng.random((batch, length)) < 0.8).astype(np.int64)
    mask[:, 0] = 1
    return {"input_ids": ids, "attention_mask": mask}


def exact(context, feeds):
    shape = list(feeds["input_ids"].shape)
    engine = recq.Engine.load(str(MODEL), device=context, tuning="off",
                              shapes={"input_ids": shape, "attention_mask": shape})
    assert isinstance(engine, recq.Engine)
    return engine.run(feeds)


def assert_close(actual, expected):
    assert set(actual) == set(expected)
    for name, e in expected.items():
        a = actual[name]
        assert a.dtype == e.dtype and a.shape == e.shape, (name, a.shape, e.shape)
        assert np.all(np.isfinite(a)), name
        scale = float(np.abs(e).max())
        assert float(np.abs(a - e).max()) <= 1e-5 * max(scale, 1.0), name


def test_random_lengths_match_exact_shape_engines(shaped, context):
    assert isinstance(shaped, recq.ShapedEngine)
    rng = np.random.default_rng()
    # Lengths off the buckets (padded), on a bucket, and batch 2 (rows a
    # bucket apart in the engine's output).
    cases = [(1, int(rng.integers(17, 32))), (1, int(rng.integers(3, 8))), (1, 16),
             (2, int(rng.integers(9, 16)))]
    for batch, length in cases:
        feeds = request(rng, batch, length)
        got = shaped.run(feeds)
        assert got["last_hidden_state"].shape == (batch, length, 32)
        assert got["last_hidden_state"].flags.c_contiguous
        assert_close(got, exact(context, feeds))


def test_buckets_and_stats(shaped):
    rng = np.random.default_rng()
    buckets = shaped.buckets()
    lengths = [1, 2, 4, 8, 16, 32]
    assert buckets == [{"attention_mask": (b, n), "input_ids": (b, n)}
                       for n in lengths for b in (1, 2)]
    assert shaped.bucket_for({"input_ids": [1, 5], "attention_mask": [1, 5]}) == {
        "attention_mask": (1, 8), "input_ids": (1, 8)}
    assert shaped.profile == {"input_ids": "1..2x1..32/pow2", "attention_mask": "1..2x1..32/pow2"}
    assert shaped.max_shapes == {"input_ids": (2, 32), "attention_mask": (2, 32)}
    assert shaped.input_names == ["input_ids", "attention_mask"]
    assert shaped.output_names == ["last_hidden_state"]
    shaped.run(request(rng, 1, 3))
    shaped.run(request(rng, 1, 30))
    stats = shaped.stats
    compiled = {tuple(b["shapes"]["input_ids"]) for b in stats["buckets"]}
    assert {(1, 4), (1, 32)} <= compiled
    per_bucket = [b["weight_bytes"] for b in stats["buckets"]]
    # A weight is uploaded by the first bucket that binds it: the total is
    # below the sum of what the buckets bind (their folded shape constants
    # differ, so it may exceed any one bucket's).
    assert stats["weight_bytes_uploaded"] == sum(b["weight_bytes_uploaded"]
                                                 for b in stats["buckets"])
    assert 0 < stats["weight_bytes_uploaded"] < sum(per_bucket)
    assert stats["weight_reuses"] > 0
    for b in stats["buckets"]:
        assert b["memory_bytes"] == b["intermediate_bytes"] + b["staging_bytes"] > 0
        assert b["outputs"]["last_hidden_state"] == b["shapes"]["input_ids"] + (32,)
        assert b["runs"] >= 1


def test_profile_string_and_saved_engine_file(context, tmp_path):
    rng = np.random.default_rng()
    engine = recq.Engine.load(str(MODEL), device=context, tuning="off",
                              shapes="input_ids:1x{8,16},attention_mask:1x{8,16}",
                              pad="input_ids:0,attention_mask:0")
    assert engine.buckets() == [{"attention_mask": (1, 8), "input_ids": (1, 8)},
                                {"attention_mask": (1, 16), "input_ids": (1, 16)}]
    path = tmp_path / "tiny_bert.recq"
    engine.save(str(path))
    loaded = recq.Engine.load(str(path), device=context)
    assert isinstance(loaded, recq.ShapedEngine)
    assert loaded.buckets() == engine.buckets()
    feeds = request(rng, 1, int(rng.integers(9, 16)))
    want = engine.run(feeds)
    got = loaded.run(feeds)
    assert np.array_equal(got["last_hidden_state"], want["last_hidden_state"])
    with pytest.raises(ValueError, match="shapes and pad apply to ONNX models"):
        recq.Engine.load(str(path), device=context, shapes={"input_ids": "1x1..16/pow2"})
    fixed = recq.Engine.load(str(MODEL), device=context, tuning="off",
                             shapes={"input_ids": [1, 8], "attention_mask": [1, 8]})
    fixed.save(str(tmp_path / "fixed.recq"))
    with pytest.raises(ValueError, match="this engine file has fixed shapes"):
        recq.Engine.load(str(tmp_path / "fixed.recq"), device=context, pad=PAD)


def test_bad_shapes_raise_value_error_and_keep_the_engine(shaped):
    rng = np.random.default_rng()
    with pytest.raises(recq.InvalidArgument, match=r"input '\w+' dimension 1 is 33, outside "
                       r"the profile's range 1\.\.32 \(1\.\.2x1\.\.32/pow2\)"):
        shaped.run(request(rng, 1, 33))
    with pytest.raises(ValueError, match="dimension 0 is 3"):
        shaped.run(request(rng, 3, 4))
    feeds = request(rng, 1, 6)
    feeds["attention_mask"] = feeds["attention_mask"][:, :5].copy()
    with pytest.raises(ValueError):
        shaped.run(feeds)
    feeds = request(rng, 1, 6)
    feeds["input_ids"] = feeds["input_ids"].astype(np.int32)
    with pytest.raises(ValueError, match="dtype int32, expected int64"):
        shaped.run(feeds)
    with pytest.raises(ValueError, match="no shape given for input .attention_mask."):
        shaped.run({"input_ids": request(rng, 1, 6)["input_ids"]})
    out = shaped.run(request(rng, 1, 6))
    assert out["last_hidden_state"].shape == (1, 6, 32)


def test_bad_profiles_raise_value_error(context):
    with pytest.raises(ValueError, match="minimum 8 is above maximum 4"):
        recq.Engine.load(str(MODEL), device=context, shapes={"input_ids": "1x8..4"})
    with pytest.raises(ValueError, match="pad needs shapes with a range"):
        recq.Engine.load(str(MODEL), device=context, pad=PAD)
    with pytest.raises(ValueError, match="expected a sequence of ints or a profile string"):
        recq.Engine.load(str(MODEL), device=context, shapes={"input_ids": 3.5})


def test_two_threads_share_the_engine(shaped):
    """Runs of two buckets from two threads at once (the GIL is released and
    ShapedEngine is thread-safe) give the results of the same runs made alone."""
    import threading

    rng = np.random.default_rng()
    jobs = [request(rng, 1, int(rng.integers(9, 16))), request(rng, 1, int(rng.integers(17, 32)))]
    alone = [shaped.run(feeds)["last_hidden_state"] for feeds in jobs]
    failures = []

    def work(i):
        try:
            for _ in range(3):
                got = shaped.run(jobs[i])["last_hidden_state"]
                if not np.array_equal(got, alone[i]):
                    failures.append(f"thread {i}: results differ from the run made alone")
        except Exception as e:  # reported below
            failures.append(f"thread {i}: {e!r}")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures
