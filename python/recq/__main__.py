"""python -m recq: a small mirror of the recq CLI.

    python -m recq devices
    python -m recq run MODEL.onnx|MODEL.recq [--input NAME=FILE]... [--output NAME=FILE]...
                       [--device SPEC] [--shapes NAME:DxD,...] [--precision fp32|fp16|tf32]
                       [--backend auto] [--runs N]

Input files: .npy, or raw little-endian elements of the input's dtype (as
`recq run --input` takes them); inputs not given are random (seed 0: floats in
[-1, 1), integers in [0, 10)). Outputs: .npy, or raw elements (as
`recq run --output` writes them).
"""

import argparse
import statistics
import sys
import time

import numpy as np

import recq


def _parse_shapes(text):
    shapes = {}
    for part in filter(None, text.split(",")):
        name, sep, dims = part.rpartition(":")
        if not sep or not name:
            raise SystemExit(f"--shapes: '{part}' is not NAME:DxD...")
        shapes[name] = [int(d) for d in dims.split("x")]
    return shapes


def _pairs(items, flag):
    out = {}
    for item in items:
        for part in filter(None, item.split(",")):
            name, sep, path = part.partition("=")
            if not sep:
                raise SystemExit(f"{flag}: '{part}' is not NAME=FILE")
            out[name] = path
    return out


def _read_input(info, path):
    if path.endswith(".npy"):
        array = np.load(path)
    else:
        array = np.fromfile(path, dtype=info.dtype)
        if array.size != int(np.prod(info.shape)):
            raise SystemExit(
                f"--input {info.name}={path}: {array.nbytes} bytes, the input "
                f"{'x'.join(map(str, info.shape))} {info.dtype} needs "
                f"{int(np.prod(info.shape)) * info.dtype.itemsize}"
            )
        array = array.reshape(info.shape)
    return array


def _random_input(info, rng):
    if np.issubdtype(info.dtype, np.floating):
        return rng.uniform(-1.0, 1.0, size=info.shape).astype(info.dtype)
    return rng.integers(0, 10, size=info.shape).astype(info.dtype)


def _devices(_args):
    for d in recq.devices():
        print(f"{d['selector']:<8} {d['platform_device']:<5} {d['name']} ({d['platform_name']}, "
              f"{d['version']}, {d['compute_units']} compute units, "
              f"{d['global_mem_bytes'] // (1 << 20)} MiB)")
    return 0


def _run(args):
    engine = recq.Engine.load(
        args.model,
        device=args.device,
        precision=args.precision,
        shapes=_parse_shapes(args.shapes) if args.shapes else None,
    )
    rec = engine.record(backend=args.backend)
    files = _pairs(args.input, "--input")
    known = {i.name: i for i in engine.inputs}
    for name in files:
        if name not in known:
            raise SystemExit(f"--input: '{name}' is not an input; inputs: {', '.join(known)}")
    rng = np.random.default_rng(0)
    feeds = {
        i.name: _read_input(i, files[i.name]) if i.name in files else _random_input(i, rng)
        for i in engine.inputs
    }
    outputs = rec.run(feeds)  # untimed first run
    times = []
    for _ in range(args.runs):
        start = time.perf_counter()
        outputs = rec.run(feeds)
        times.append((time.perf_counter() - start) * 1e3)
    device = engine.context.device
    print(f"device: {device['name']} ({device['platform_name']})")
    print(f"backend: {rec.backend} ({rec.backend_reason})")
    print(f"dispatches: {rec.dispatch_count}")
    if times:
        times.sort()
        p90 = times[min(len(times) - 1, int(0.9 * len(times)))]
        print(f"latency over {len(times)} runs: min {times[0]:.3f} ms, median "
              f"{statistics.median(times):.3f} ms, p90 {p90:.3f} ms")
    for name, path in _pairs(args.output, "--output").items():
        if name not in outputs:
            raise SystemExit(f"--output: '{name}' is not an output; outputs: {', '.join(outputs)}")
        if path.endswith(".npy"):
            np.save(path, outputs[name])
        else:
            outputs[name].tofile(path)
        print(f"wrote {name} to {path}")
    for name, value in outputs.items():
        print(f"{name}: {'x'.join(map(str, value.shape))} {value.dtype}")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m recq", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("devices", help="OpenCL devices with the selectors --device takes")
    run = sub.add_parser("run", help="load, record once, run N times, print latencies")
    run.add_argument("model")
    run.add_argument("--input", action="append", default=[], help="NAME=FILE (.npy or raw)")
    run.add_argument("--output", action="append", default=[], help="NAME=FILE (.npy or raw)")
    run.add_argument("--device", default=None, help="cpu:0, gpu:1, P:D, a name ('' = auto)")
    run.add_argument("--shapes", default="", help="NAME:DxD...[,NAME:...]")
    run.add_argument("--precision", default=None, help="fp32, fp16 or tf32")
    run.add_argument("--backend", default="auto", help="auto, replay, khr_command_buffer, ...")
    run.add_argument("--runs", type=int, default=10)
    args = parser.parse_args(argv)
    try:
        return _devices(args) if args.command == "devices" else _run(args)
    except recq.Error as e:
        print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
