"""The Ray Serve example (examples/serve) on a local Ray instance.

Starts Ray on this machine only, serves MobileNet V2 (96x96) on the test
device over HTTP at 127.0.0.1, sends a bounded number of requests (JSON and
.npy, several at once so that @serve.batch gathers them), checks every answer
against the engine's direct result bit for bit, and shuts Ray down. Beside
it, examples/serve/recq_text_serve.py serves tests/models/shapes/tiny_bert.onnx
over a shape profile (requests of random lengths, batched per bucket, against
exact-shape engines) and tests/models/decoder/tiny_decoder.onnx through
recq.Generator (ids against golden.txt).
Skipped when ray is not importable: scripts/ray_test.sh installs ray[serve]
into build/venv-ray and runs this file.
"""

import concurrent.futures
import io
import json
import os
import pathlib
import socket
import sys
import time
import urllib.error
import urllib.request

import numpy as np
import pytest

import recq
from conftest import DEVICE, assert_bitwise_equal

ray = pytest.importorskip(
    "ray", reason="ray is not installed (bash scripts/ray_test.sh installs ray[serve] into "
    "build/venv-ray and runs this test)")
serve = pytest.importorskip("ray.serve", reason="ray[serve] is not installed")

REPO = pathlib.Path(__file__).resolve().parents[2]
SERVE_DIR = REPO / "examples" / "serve"
TINY_BERT = REPO / "tests" / "models" / "shapes" / "tiny_bert.onnx"
DECODER = REPO / "tests" / "models" / "decoder"
TEXT_MAX_LENGTH = 32
REQUESTS = 24


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def served(mobilenet_path):
    # Replicas import recq and the example through the inherited environment.
    paths = [str(SERVE_DIR), os.path.dirname(os.path.dirname(recq.__file__))]
    os.environ["PYTHONPATH"] = os.pathsep.join(paths + [os.environ.get("PYTHONPATH", "")])
    sys.path.insert(0, str(SERVE_DIR))
    import recq_serve
    import recq_text_serve

    # On a loaded machine Serve's proxy misses its 5 s readiness check and is
    # restarted in a loop: give it longer.
    for knob in ("RAY_SERVE_PROXY_READY_CHECK_TIMEOUT_S", "RAY_SERVE_PROXY_HEALTH_CHECK_TIMEOUT_S"):
        os.environ.setdefault(knob, "60")
    port = free_port()
    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1",
             log_to_driver=False)
    try:
        serve.start(http_options={"host": "127.0.0.1", "port": port})
        # Three applications on 2 CPUs: each replica asks for half of one.
        app = recq_serve.build_app({"model": str(mobilenet_path), "device": DEVICE,
                                    "max_batch_size": "4", "cpus": "0.5"})
        serve.run(app, name="recq", route_prefix="/")
        text = recq_text_serve.build_bucketed_app({
            "model": str(TINY_BERT), "device": DEVICE, "max_batch_size": "4",
            "max_length": str(TEXT_MAX_LENGTH), "cpus": "0.5"})
        serve.run(text, name="recq_text", route_prefix="/text")
        generate = recq_text_serve.build_generate_app({
            "model": str(DECODER / "tiny_decoder.onnx"), "device": DEVICE, "max_length": "64",
            "cpus": "0.5"})
        serve.run(generate, name="recq_generate", route_prefix="/generate")
        wait_for_route(f"http://127.0.0.1:{port}", ("/", "/text", "/generate"))
        yield f"http://127.0.0.1:{port}/"
    finally:
        serve.shutdown()
        ray.shutdown()


def wait_for_route(base, prefixes, timeout_s=300):
    """Polls the proxy's route table until it serves every prefix (bounded)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(base + "/-/routes", timeout=10) as response:
                routes = json.loads(response.read())
                if all(p in routes for p in prefixes):
                    return
        except (urllib.error.URLError, ConnectionError, OSError):
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"Serve's proxy at {base} did not list the route within {timeout_s} s")
        time.sleep(1)


def post(url, body, content_type, accept="application/json"):
    request = urllib.request.Request(url, data=body, method="POST",
                                     headers={"Content-Type": content_type, "Accept": accept})
    with urllib.request.urlopen(request, timeout=120) as response:
        return response.read()


def test_served_answers_match_the_engine(served, mobilenet_path):
    engine = recq.Engine.load(str(mobilenet_path), device=DEVICE or None, tuning="off")
    inp, out = engine.inputs[0], engine.outputs[0]
    rng = np.random.default_rng()
    cases = [rng.uniform(-1, 1, size=inp.shape).astype(inp.dtype) for _ in range(REQUESTS)]
    want = [engine.run({inp.name: x})[out.name] for x in cases]

    def ask(i):
        x = cases[i]
        if i % 2:
            buf = io.BytesIO()
            np.save(buf, x)
            body = post(served, buf.getvalue(), "application/x-npy", accept="application/x-npy")
            return np.load(io.BytesIO(body), allow_pickle=False)
        body = post(served, json.dumps({"inputs": {inp.name: x.tolist()}}).encode(),
                    "application/json")
        answer = json.loads(body)
        assert answer["shapes"][out.name] == list(out.shape)
        return np.asarray(answer["outputs"][out.name], dtype=out.dtype).reshape(out.shape)

    with concurrent.futures.ThreadPoolExecutor(max_workers=6) as pool:
        got = list(pool.map(ask, range(REQUESTS)))
    for i in range(REQUESTS):
        assert_bitwise_equal({out.name: got[i]}, {out.name: want[i]})


def test_served_images_match_the_engine_on_the_same_preprocessing(served, mobilenet_path):
    """PNG bodies of another size than the input: the replica decodes, resizes
    and normalizes them (image_to_tensor), and its answers equal the engine's
    on that tensor bit for bit. A body that is no image is a 400."""
    Image = pytest.importorskip("PIL.Image", reason="Pillow is not installed")
    import recq_serve

    engine = recq.Engine.load(str(mobilenet_path), device=DEVICE or None, tuning="off")
    inp, out = engine.inputs[0], engine.outputs[0]
    rng = np.random.default_rng()
    bodies = []
    for _ in range(6):
        buf = io.BytesIO()
        pixels = rng.integers(0, 256, size=(80, 120, 3), dtype=np.uint8)
        Image.fromarray(pixels).save(buf, format="PNG")
        bodies.append(buf.getvalue())
    want = [engine.run({inp.name: recq_serve.image_to_tensor(b, inp.shape)})[out.name]
            for b in bodies]

    def ask(body):
        answer = post(served, body, "image/png", accept="application/x-npy")
        return np.load(io.BytesIO(answer), allow_pickle=False)

    with concurrent.futures.ThreadPoolExecutor(max_workers=6) as pool:
        got = list(pool.map(ask, bodies))
    for g, w in zip(got, want):
        assert_bitwise_equal({out.name: g}, {out.name: w})
    with pytest.raises(urllib.error.HTTPError) as err:
        post(served, b"not an image", "image/jpeg")
    assert err.value.code == 400 and b"not an image Pillow can decode" in err.value.read()


def test_bucketed_text_answers_match_exact_shape_engines(served):
    """Requests of random lengths, eight at a time, so that @serve.batch stacks
    requests of one bucket into one padded run; each answer against an engine
    compiled for exactly that request (tolerance as tests/python/test_shapes.py)."""
    rng = np.random.default_rng()
    lengths = [int(n) for n in rng.integers(1, TEXT_MAX_LENGTH + 1, size=16)]
    cases = [rng.integers(1, 100, size=n).astype(np.int64) for n in lengths]

    def ask(ids):
        return json.loads(post(served + "text", json.dumps({"input_ids": ids.tolist()}).encode(),
                               "application/json"))

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(ask, cases))
    exact = {}
    for ids, answer in zip(cases, answers):
        n = len(ids)
        if n not in exact:
            exact[n] = recq.Engine.load(str(TINY_BERT), device=DEVICE or None, tuning="off",
                                        shapes={"input_ids": [1, n], "attention_mask": [1, n]})
        want = exact[n].run({"input_ids": ids[None], "attention_mask": np.ones((1, n), np.int64)})
        want = want["last_hidden_state"][0]
        got = np.asarray(answer["outputs"]["last_hidden_state"], dtype=np.float32)
        assert answer["shapes"]["last_hidden_state"] == [n, 32]
        assert answer["bucket"]["input_ids"][1] >= n
        assert float(np.abs(got - want).max()) <= 1e-5 * max(float(np.abs(want).max()), 1.0)
    too_long = urllib.request.Request(
        served + "text", method="POST", headers={"Content-Type": "application/json"},
        data=json.dumps({"input_ids": [1] * (TEXT_MAX_LENGTH + 1)}).encode())
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(too_long, timeout=120)
    assert err.value.code == 400 and b"outside the profile's range" in err.value.read()


def test_generate_answers_match_golden_ids(served):
    lines = dict(line.split(" ", 1) for line in (DECODER / "golden.txt").read_text().splitlines()
                 if line and not line.startswith("#"))
    prompt = [int(x) for x in lines["prompt"].split()]
    greedy = [int(x) for x in lines["greedy"].split()]
    body = json.dumps({"prompt_ids": prompt, "max_new_tokens": len(greedy)}).encode()
    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        answers = list(pool.map(lambda _: json.loads(post(served + "generate", body,
                                                          "application/json")), range(3)))
    for answer in answers:
        assert answer["ids"] == greedy and answer["stop"] == "max_new_tokens"
        assert answer["decode_tokens_per_s"] > 0
