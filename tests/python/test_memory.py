"""Device tensors, zero-copy views (buffer protocol, DLPack), lifetimes, threads."""

import gc
import pathlib
import sys
import threading

import numpy as np
import pytest

import recq
from conftest import BLOCKS, assert_bitwise_equal, random_inputs


def host_visible(engine):
    return engine.context.host_unified_memory


def test_tensor_round_trip_every_dtype(context):
    rng = np.random.default_rng()
    for dtype in (np.float32, np.float16, np.int64, np.int32, np.int8, np.uint8, np.bool_):
        x = rng.integers(-100, 100, size=(3, 5, 7)).astype(dtype)
        t = recq.Tensor.from_numpy(context, x)
        assert t.shape == (3, 5, 7) and t.dtype == np.dtype(dtype) and t.nbytes == x.nbytes
        y = t.numpy()
        assert y.dtype == x.dtype
        np.testing.assert_array_equal(y, x)


def test_dlpack_and_buffer_views_are_zero_copy(small_engine):
    engine = small_engine
    if not host_visible(engine):
        assert recq.Tensor.from_numpy(engine, np.ones(4, np.float32)).__dlpack_device__()[0] == 4
        pytest.skip("the device does not share host memory: no zero-copy views")
    rng = np.random.default_rng()
    x = rng.standard_normal((4, 8)).astype(np.float32)
    t = recq.Tensor.from_numpy(engine, x)
    assert t.__dlpack_device__() == (1, 0)
    a = np.from_dlpack(t)  # numpy marks DLPack imports read-only
    assert t.host_views == 1
    np.testing.assert_array_equal(a, x)
    y = rng.standard_normal((4, 8)).astype(np.float32)
    m = memoryview(t)
    assert t.host_views == 2 and m.format == "f" and m.shape == (4, 8) and not m.readonly
    b = np.asarray(m)
    b[...] = y  # writes the tensor's memory itself: the DLPack view sees it
    np.testing.assert_array_equal(a, y)
    del a
    assert t.host_views == 1
    del b
    m.release()
    gc.collect()
    assert t.host_views == 0
    np.testing.assert_array_equal(t.numpy(), y)
    # An unconsumed capsule releases its view too.
    cap = t.__dlpack__()
    assert t.host_views == 1
    del cap
    assert t.host_views == 0


def test_run_reads_and_writes_through_views(small_engine):
    engine = small_engine
    if not host_visible(engine):
        pytest.skip("the device does not share host memory: no zero-copy views")
    feeds = random_inputs(engine, np.random.default_rng())
    reference = engine.run(feeds)
    name = engine.inputs[0].name
    t_in = engine.new_tensor(name)
    view = np.asarray(memoryview(t_in))
    view[...] = feeds[name]
    outs = {o.name: engine.new_tensor(o.name) for o in engine.outputs}
    rec = engine.record()
    with pytest.raises(recq.FailedPrecondition, match="live host view"):
        rec.run({**feeds, name: t_in, **outs})
    del view
    assert rec.run({**feeds, name: t_in, **outs}) == {}
    got = {n: np.from_dlpack(t).copy() for n, t in outs.items()}
    assert_bitwise_equal(got, reference)


def test_tensor_outlives_its_engine(context):
    engine = recq.Engine.load(str(BLOCKS[0]), device=recq.Context(context.device["name"]),
                              tuning="off")
    name = engine.inputs[0].name
    t = engine.new_tensor(name)
    x = np.random.default_rng().standard_normal(engine.inputs[0].shape).astype(np.float32)
    del engine
    gc.collect()
    t.write(x)
    np.testing.assert_array_equal(t.numpy(), x)


def test_engine_freed_while_a_run_is_in_flight(context):
    engine = recq.Engine.load(str(BLOCKS[0]), device=context, tuning="off")
    feeds = random_inputs(engine, np.random.default_rng())
    reference = engine.run(feeds)
    rec = engine.record()
    handles = [rec.enqueue(feeds) for _ in range(3)]
    del rec, engine
    gc.collect()
    for h in handles:
        assert_bitwise_equal(h.wait(), reference)
    # A handle dropped unwaited waits for its run before freeing its memory.
    engine = recq.Engine.load(str(BLOCKS[0]), device=context, tuning="off")
    rec = engine.record()
    dropped = rec.enqueue(feeds)
    del dropped, rec, engine
    gc.collect()


def test_two_threads_on_two_recordings(block_engines):
    engine = max(block_engines.values(), key=lambda e: e.stats["dispatches"])
    rng = np.random.default_rng()
    runs = 8
    cases = [random_inputs(engine, rng) for _ in range(2 * runs)]
    references = [engine.run(c) for c in cases]
    failures = []

    def worker(first):
        rec = engine.record()
        try:
            for i in range(first, 2 * runs, 2):
                assert_bitwise_equal(rec.run(cases[i]), references[i])
        except Exception as e:  # noqa: BLE001  (reported by the main thread)
            failures.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures


def test_package_folder_holds_no_caches():
    folder = pathlib.Path(recq.__file__).parent
    allowed = {".py", ".pyi", ".so", ".typed", ".pyc"}
    stray = [p for p in folder.rglob("*") if p.is_file() and p.suffix not in allowed]
    assert not stray, f"files written into the package folder: {stray}"


@pytest.mark.parametrize("call", ["run", "load"])
def test_the_gil_is_released(call, small_engine, context):
    """With a switch interval of 1000 s a waiting thread gets the GIL only when the
    holder gives it up; thread B runs between A's call and its return only if the
    call released the GIL. Whether B is scheduled inside one call's GIL-free window
    is up to the OS (a quick call on a loaded machine can end before B wakes), so
    B gets one chance per call over up to 20 calls: a call that holds the GIL
    throughout gives it none, and fails every time."""
    feeds = random_inputs(small_engine, np.random.default_rng())
    rec = small_engine.record()
    old = sys.getswitchinterval()
    sys.setswitchinterval(1000)
    inside = []
    try:
        for _ in range(20):
            go = threading.Event()
            state = {"a_returned": False, "b_ran_inside": None}

            def a():
                go.set()  # B is runnable from here, but needs the GIL
                if call == "run":
                    rec.run(feeds)
                else:
                    recq.Engine.load(str(BLOCKS[0]), device=context, tuning="off")
                state["a_returned"] = True

            def b():
                go.wait()
                state["b_ran_inside"] = not state["a_returned"]

            tb = threading.Thread(target=b)
            tb.start()
            ta = threading.Thread(target=a)
            ta.start()
            ta.join()
            tb.join()
            inside.append(state["b_ran_inside"])
            if state["b_ran_inside"]:
                break
    finally:
        sys.setswitchinterval(old)
    assert any(inside), f"B never ran inside {call}() in {len(inside)} calls"
