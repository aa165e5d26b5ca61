"""A Ray Serve deployment of a recq engine.

One replica per device; each replica loads the model once, records it
`max_batch_size` times (one recording per batch slot, each on its own
OpenCL queue) and serves HTTP requests:

    POST /             body: JSON {"inputs": {"NAME": nested list, ...}} (or
                       {"input": nested list} for a model of one input), or
                       an .npy file (Content-Type: application/x-npy) for a
                       model of one input.
    response           JSON {"outputs": {"NAME": nested list, ...}, "shapes": ...},
                       or .npy of the first output when the request sends
                       Accept: application/x-npy.

@serve.batch gathers concurrent requests; a batch is enqueued on the
replica's recordings at once and then waited for, so the device overlaps the
requests of one batch (recq engines have static shapes; a model whose batch
dimension is fixed at 1 is batched this way, request by request).

Run locally (see README.md in this folder for a multi-node GPU cluster):

    serve run recq_serve:build_app model=/path/model.onnx device=cpu:0
"""

import io
import json
import os
from typing import Any, Dict, List

import numpy as np
from ray import serve
from starlette.requests import Request
from starlette.responses import JSONResponse, Response


def _replica_device(device: str) -> str:
    """'ray-gpu' picks the GPU Ray gave this replica; anything else is a recq device spec.

    NVIDIA's OpenCL driver honours CUDA_VISIBLE_DEVICES (which Ray sets), so the one
    visible GPU is gpu:0; other drivers see every GPU, so take Ray's index.
    """
    if device != "ray-gpu":
        return device
    import ray

    ids = ray.get_gpu_ids()
    if not ids or os.environ.get("CUDA_VISIBLE_DEVICES"):
        return "gpu:0"
    return f"gpu:{int(ids[0])}"


@serve.deployment
class RecqModel:
    def __init__(self, model: str, device: str = "", max_batch_size: int = 8,
                 tuning: str = "off"):
        import recq  # imported in the replica's process

        self.engine = recq.Engine.load(model, device=_replica_device(device), tuning=tuning)
        self.inputs = {i.name: i for i in self.engine.inputs}
        self.recordings = [self.engine.record() for _ in range(max_batch_size)]
        self.infer.set_max_batch_size(max_batch_size)

    def _decode(self, feeds: Dict[str, Any]) -> Dict[str, np.ndarray]:
        out = {}
        for name, info in self.inputs.items():
            if name not in feeds:
                raise ValueError(f"missing input '{name}'; the model takes {list(self.inputs)}")
            out[name] = np.asarray(feeds[name], dtype=info.dtype).reshape(info.shape)
        return out

    @serve.batch(max_batch_size=8, batch_wait_timeout_s=0.005)
    async def infer(self, batch: List[Dict[str, np.ndarray]]) -> List[Dict[str, np.ndarray]]:
        # One recording per request of the batch, all enqueued before any wait.
        handles = [self.recordings[i].enqueue(feeds) for i, feeds in enumerate(batch)]
        return [h.wait() for h in handles]

    async def __call__(self, request: Request) -> Response:
        body = await request.body()
        if request.headers.get("content-type", "").startswith("application/x-npy"):
            if len(self.inputs) != 1:
                return JSONResponse({"error": "an .npy body needs a model of one input"}, 400)
            feeds = {next(iter(self.inputs)): np.load(io.BytesIO(body), allow_pickle=False)}
        else:
            payload = json.loads(body)
            feeds = payload.get("inputs") or {next(iter(self.inputs)): payload["input"]}
        try:
            outputs = await self.infer(self._decode(feeds))
        except (ValueError, KeyError) as e:
            return JSONResponse({"error": str(e)}, 400)
        if request.headers.get("accept", "").startswith("application/x-npy"):
            buf = io.BytesIO()
            np.save(buf, next(iter(outputs.values())))
            return Response(buf.getvalue(), media_type="application/x-npy")
        return JSONResponse({"outputs": {n: v.tolist() for n, v in outputs.items()},
                             "shapes": {n: list(v.shape) for n, v in outputs.items()}})


def build_app(args: Dict[str, str]):
    """`serve run recq_serve:build_app model=M.onnx [device=ray-gpu] [replicas=N] [gpus=1]`."""
    replicas = int(args.get("replicas", 1))
    gpus = float(args.get("gpus", 0))
    batch = int(args.get("max_batch_size", 8))
    return RecqModel.options(
        num_replicas=replicas,
        ray_actor_options={"num_cpus": float(args.get("cpus", 1)), "num_gpus": gpus},
    ).bind(args["model"], args.get("device", ""), batch, args.get("tuning", "off"))
