"""The Ray Serve example (examples/serve) on a local Ray instance.

Starts Ray on this machine only, serves MobileNet V2 (96x96) on the test
device over HTTP at 127.0.0.1, sends a bounded number of requests (JSON and
.npy, several at once so that @serve.batch gathers them), checks every answer
against the engine's direct result bit for bit, and shuts Ray down.
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

SERVE_DIR = pathlib.Path(__file__).resolve().parents[2] / "examples" / "serve"
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

    # On a loaded machine Serve's proxy misses its 5 s readiness check and is
    # restarted in a loop: give it longer.
    for knob in ("RAY_SERVE_PROXY_READY_CHECK_TIMEOUT_S", "RAY_SERVE_PROXY_HEALTH_CHECK_TIMEOUT_S"):
        os.environ.setdefault(knob, "60")
    port = free_port()
    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1",
             log_to_driver=False)
    try:
        serve.start(http_options={"host": "127.0.0.1", "port": port})
        app = recq_serve.build_app({"model": str(mobilenet_path), "device": DEVICE,
                                    "max_batch_size": "4", "cpus": "1"})
        serve.run(app, name="recq", route_prefix="/")
        wait_for_route(f"http://127.0.0.1:{port}")
        yield f"http://127.0.0.1:{port}/"
    finally:
        serve.shutdown()
        ray.shutdown()


def wait_for_route(base, timeout_s=300):
    """Polls the proxy's route table until it serves "/" (bounded)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(base + "/-/routes", timeout=10) as response:
                if "/" in json.loads(response.read()):
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
