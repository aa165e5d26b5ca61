#!/usr/bin/env python3
"""Throughput of the Ray Serve example (examples/serve/recq_serve.py) over
HTTP with 1 and more replicas, from a bounded load generator on the same host.

    python3 bench/serve_replicas.py MODEL.onnx --replicas 1,2 --device ray-gpu --gpus 1 \
        --rounds 3 --requests 3000 --json serve.json

Starts a local Ray instance (127.0.0.1 only, no dashboard), then for each
round and each replica count (interleaved, the order alternating per round)
deploys the example, warms every replica up, and sends `--requests` JPEG
images (seeded, at 256x256, resized by the replica to the model's input)
from `--clients` processes of `--threads` threads, each with one keep-alive
HTTP connection and a fixed share of the requests. Every answer (.npy of
the first output) is checked against the engine run directly on the same
preprocessed tensor (`image_to_tensor`, the replica's own function), with
rel. L2 <= 1e-5; a mismatch or an HTTP error fails the run.

Throughput is answered requests over the time from the common start to the
last answer. The JSON has every round, the medians per replica count and
each round's ratio to the first replica count.

Needs ray[serve], Pillow and recq importable, and the example's folder is
put on the replicas' PYTHONPATH. `--device cpu:0 --gpus 0` runs it on PoCL.
"""

import argparse
import http.client
import io
import json
import multiprocessing as mp
import os
import pathlib
import socket
import statistics
import sys
import time

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
SERVE_DIR = REPO / "examples" / "serve"
# Every request: a JPEG in, the first output back as .npy.
HEADERS = {"Content-Type": "image/jpeg", "Accept": "application/x-npy"}


def make_images(count, size, seed):
    """Seeded JPEGs: smooth random colour fields with a little noise."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    images = []
    for _ in range(count):
        coarse = rng.uniform(0, 255, size=(8, 8, 3)).astype(np.float32)
        field = np.asarray(Image.fromarray(coarse.astype(np.uint8)).resize((size, size),
                                                                          Image.BICUBIC),
                           dtype=np.float32)
        field += rng.normal(0, 12, size=field.shape)
        buf = io.BytesIO()
        Image.fromarray(np.clip(field, 0, 255).astype(np.uint8)).save(buf, format="JPEG",
                                                                      quality=90)
        images.append(buf.getvalue())
    return images


def client(args):
    """One load-generator process: `threads` connections, `count` requests each."""
    port, images, expected, threads, count, start_at = args
    import threading

    results = [None] * threads

    def worker(t):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        latencies, failures, worst = [], [], 0.0
        while time.time() < start_at:
            time.sleep(0.0005)
        for i in range(count):
            k = (t * 7919 + i) % len(images)
            t0 = time.perf_counter()
            try:
                conn.request("POST", "/", body=images[k], headers=HEADERS)
                resp = conn.getresponse()
                data = resp.read()
            except (OSError, http.client.HTTPException) as e:
                failures.append(f"request failed: {e!r}")
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                continue
            latencies.append(time.perf_counter() - t0)
            if resp.status != 200:
                failures.append(f"HTTP {resp.status}: {data[:200]!r}")
                continue
            if expected is None:  # the proxy-only deployment: nothing to check
                continue
            got = np.load(io.BytesIO(data), allow_pickle=False)
            ref = expected[k]
            err = float(np.linalg.norm(got.astype(np.float64) - ref) / np.linalg.norm(ref))
            worst = max(worst, err)
            if got.shape != ref.shape or not err <= 1e-5:
                failures.append(f"image {k}: shape {got.shape}, rel. L2 {err:.3g}")
        results[t] = (latencies, failures, worst, time.time())
        conn.close()

    pool = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    return results


def direct_throughput(engine, recq_serve, images, requests, batch, batches):
    """The replicas' own work without Serve, in one thread: decode, enqueue a
    batch on recordings of its own (up to `batches` batches in flight), wait."""
    shape, name = engine.inputs[0].shape, engine.inputs[0].name
    recordings = [engine.record() for _ in range(batch * batches)]
    in_flight = []
    t0 = time.perf_counter()
    for start in range(0, requests, batch):
        slot = (start // batch) % batches
        if len(in_flight) == batches:
            for h in in_flight.pop(0):
                h.wait()
        recs = recordings[slot * batch:(slot + 1) * batch][:min(batch, requests - start)]
        feeds = [recq_serve.image_to_tensor(images[(start + i) % len(images)], shape)
                 for i in range(len(recs))]
        in_flight.append([rec.enqueue({name: x}) for rec, x in zip(recs, feeds)])
    for handles in in_flight:
        for h in handles:
            h.wait()
    return requests / (time.perf_counter() - t0)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(port, image, timeout_s=600):
    deadline = time.time() + timeout_s
    while True:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("POST", "/", body=image, headers=HEADERS)
            resp = conn.getresponse()
            resp.read()
            if resp.status == 200:
                return
        except (OSError, http.client.HTTPException):
            pass
        if time.time() > deadline:
            raise RuntimeError("the deployment did not answer within its timeout")
        time.sleep(0.5)


def run_load(port, images, expected, clients, threads, requests):
    per = max(1, requests // (clients * threads))
    start_at = time.time() + 1.0
    ctx = mp.get_context("spawn")
    with ctx.Pool(clients) as pool:
        parts = pool.map(client, [(port, images, expected, threads, per, start_at)] * clients)
    latencies, failures, worst, end = [], [], 0.0, start_at
    for part in parts:
        for lat, fail, w, t_end in part:
            latencies += lat
            failures += fail
            worst = max(worst, w)
            end = max(end, t_end)
    answered = len(latencies)
    latencies.sort()
    return {
        "requests": clients * threads * per,
        "answered": answered,
        "failures": len(failures),
        "first_failures": failures[:5],
        "seconds": end - start_at,
        "throughput_per_s": answered / (end - start_at),
        "latency_p50_ms": 1e3 * latencies[answered // 2] if answered else None,
        "latency_p99_ms": 1e3 * latencies[min(answered - 1, answered * 99 // 100)]
        if answered else None,
        "worst_rel_l2": worst,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--replicas", default="1,2", help="replica counts, comma-separated")
    ap.add_argument("--device", default="ray-gpu", help="the example's device= (ray-gpu, cpu:0)")
    ap.add_argument("--gpus", type=float, default=1, help="GPUs per replica")
    ap.add_argument("--cpus", type=float, default=1, help="CPUs per replica")
    ap.add_argument("--check-device", default="gpu:0",
                    help="where the driver computes the expected answers")
    ap.add_argument("--max-batch-size", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--requests", type=int, default=3000, help="per round and replica count")
    ap.add_argument("--warmup", type=int, default=200, help="requests before each timed run")
    ap.add_argument("--clients", type=int, default=4, help="load-generator processes")
    ap.add_argument("--threads", type=int, default=8, help="connections per process")
    ap.add_argument("--images", type=int, default=16)
    ap.add_argument("--direct", type=int, default=0,
                    help="first time this many requests through the replicas' own work, "
                         "without Serve (decode, enqueue, wait) in one thread")
    ap.add_argument("--proxy-only", action="store_true",
                    help="also time a deployment that answers a fixed .npy without running "
                         "anything: Serve's own ceiling on this host")
    ap.add_argument("--max-ongoing-requests", type=int, default=0,
                    help="the example's max_ongoing_requests= (0: its default)")
    ap.add_argument("--json", help="write the report here")
    args = ap.parse_args()
    counts = [int(c) for c in args.replicas.split(",")]

    import recq

    sys.path.insert(0, str(SERVE_DIR))
    import recq_serve

    images = make_images(args.images, 256, seed=7)
    engine = recq.Engine.load(args.model, device=args.check_device, tuning="off")
    shape = engine.inputs[0].shape
    name = engine.inputs[0].name
    expected = [next(iter(engine.run({name: recq_serve.image_to_tensor(im, shape)}).values()))
                .astype(np.float64) for im in images]
    direct = None
    if args.direct:
        direct_throughput(engine, recq_serve, images, 64, args.max_batch_size, 2)  # warm-up
        direct = [direct_throughput(engine, recq_serve, images, args.direct, args.max_batch_size,
                                    2) for _ in range(3)]
        print(f"without Serve, one thread: {statistics.median(direct):.0f} req/s "
              f"(runs: {', '.join(f'{d:.0f}' for d in direct)})", flush=True)
    answer = io.BytesIO()
    np.save(answer, expected[0].astype(np.float32))
    answer = answer.getvalue()
    del engine

    import ray
    from ray import serve

    @serve.deployment
    class Fixed:
        """Answers every request with the same .npy, running nothing."""

        def __init__(self, body: bytes):
            self.body = body

        async def __call__(self, request):
            from starlette.responses import Response

            await request.body()
            return Response(self.body, media_type="application/x-npy")

    paths = [str(SERVE_DIR), os.path.dirname(os.path.dirname(recq.__file__))]
    os.environ["PYTHONPATH"] = os.pathsep.join(paths + [os.environ.get("PYTHONPATH", "")])
    port = free_port()
    # A small object store: requests pass through it, and a sandbox's /dev/shm
    # may not hold Ray's default (30 % of memory).
    ray.init(include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False,
             object_store_memory=2 << 30)
    report = {"model": os.path.basename(args.model), "device": args.device,
              "gpus_per_replica": args.gpus, "requests": args.requests,
              "clients": args.clients, "threads": args.threads,
              "max_batch_size": args.max_batch_size, "ray": ray.__version__,
              "direct_per_s": direct,
              "cluster": {k: v for k, v in ray.cluster_resources().items()
                          if k in ("CPU", "GPU")},
              "rounds": []}
    try:
        serve.start(http_options={"host": "127.0.0.1", "port": port})
        for r in range(args.rounds):
            order = counts if r % 2 == 0 else counts[::-1]
            for n, kind in [(n, k) for n in order
                            for k in (["recq", "proxy-only"] if args.proxy_only else ["recq"])]:
                if kind == "recq":
                    options = {
                        "model": str(pathlib.Path(args.model).resolve()), "device": args.device,
                        "replicas": str(n), "gpus": str(args.gpus), "cpus": str(args.cpus),
                        "max_batch_size": str(args.max_batch_size)}
                    if args.max_ongoing_requests:
                        options["max_ongoing_requests"] = str(args.max_ongoing_requests)
                    app = recq_serve.build_app(options)
                else:
                    app = Fixed.options(num_replicas=n, max_ongoing_requests=64,
                                        ray_actor_options={"num_cpus": args.cpus,
                                                           "num_gpus": args.gpus}).bind(answer)
                t0 = time.time()
                serve.run(app, name="recq", route_prefix="/")
                wait_ready(port, images[0])
                deploy_s = time.time() - t0
                check = expected if kind == "recq" else None
                run_load(port, images, check, args.clients, args.threads, args.warmup)
                result = run_load(port, images, check, args.clients, args.threads, args.requests)
                result.update(round=r, replicas=n, deployment=kind, deploy_s=deploy_s)
                report["rounds"].append(result)
                print(f"round {r} {kind} replicas {n}: {result['throughput_per_s']:.0f} req/s, "
                      f"p50 {result['latency_p50_ms']:.2f} ms, p99 {result['latency_p99_ms']:.2f} "
                      f"ms, {result['failures']} failures, worst rel. L2 "
                      f"{result['worst_rel_l2']:.2g} (deployed in {deploy_s:.1f} s)", flush=True)
                serve.delete("recq")
    finally:
        serve.shutdown()
        ray.shutdown()

    base = counts[0]
    summary = {}
    for kind in sorted({x["deployment"] for x in report["rounds"]}):
        rows = [x for x in report["rounds"] if x["deployment"] == kind]
        part = summary[kind] = {}
        for n in counts:
            tput = [x["throughput_per_s"] for x in rows if x["replicas"] == n]
            part[str(n)] = {"throughput_median_per_s": statistics.median(tput),
                            "throughput_per_round": tput}
        for n in counts[1:]:
            ratios = [a["throughput_per_s"] / b["throughput_per_s"]
                      for a in rows if a["replicas"] == n
                      for b in rows if b["replicas"] == base and b["round"] == a["round"]]
            ratio = (part[str(n)]["throughput_median_per_s"] /
                     part[str(base)]["throughput_median_per_s"])
            part[str(n)]["ratio_to_%d_per_round" % base] = ratios
            part[str(n)]["ratio_of_medians_to_%d" % base] = ratio
            print(f"{kind}: {n} replicas / {base}: {ratio:.2f}x "
                  f"(per round {', '.join(f'{x:.2f}' for x in ratios)})")
    report["summary"] = summary
    failures = sum(x["failures"] for x in report["rounds"])
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(report, indent=1))
    if failures:
        print(f"{failures} requests failed or mismatched", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
