"""A Ray Serve deployment of a recq engine.

One replica per device; each replica loads the model once, records it
`max_batch_size` times (one recording per batch slot, each on its own
OpenCL queue) and serves HTTP requests:

    POST /             body: JSON {"inputs": {"NAME": nested list, ...}} (or
                       {"input": nested list} for a model of one input), an
                       .npy file (Content-Type: application/x-npy), or an
                       image (Content-Type: image/jpeg, image/png, ...; needs
                       Pillow), for a model of one input. An image is decoded
                       to RGB, resized to the input's HxW (bilinear), scaled
                       to [0, 1] and normalized with ImageNet's mean and std
                       into a float NCHW tensor (image_to_tensor).
    response           JSON {"outputs": {"NAME": nested list, ...}, "shapes": ...},
                       or .npy of the first output when the request sends
                       Accept: application/x-npy.

@serve.batch gathers concurrent requests; a batch is enqueued on the
replica's recordings at once and then waited for on a worker thread, so the
device overlaps the requests of one batch and the replica goes on decoding
and gathering the next batch meanwhile (recq engines have static shapes; a
model whose batch dimension is fixed at 1 is batched this way, request by
request). Up to CONCURRENT_BATCHES (2) batches are in flight, each on
recordings of its own.

Run locally (see README.md in this folder for a multi-node GPU cluster):

    serve run recq_serve:build_app model=/path/model.onnx device=cpu:0
"""

import asyncio
import io
import json
import os
from typing import Any, Dict, List, Sequence

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


# Batches in flight per replica: one running while the next is gathered.
CONCURRENT_BATCHES = 2
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


def image_to_tensor(body: bytes, shape: Sequence[int], mean: Sequence[float] = IMAGENET_MEAN,
                    std: Sequence[float] = IMAGENET_STD) -> np.ndarray:
    """An encoded image (any format Pillow reads) as a float32 [1, 3, H, W] tensor.

    Decoded to RGB, resized to the input's H x W (bilinear), scaled to [0, 1]
    and normalized per channel: (x - mean) / std.
    """
    from PIL import Image  # only image requests need Pillow

    if len(shape) != 4 or shape[0] != 1 or shape[1] != 3:
        raise ValueError(f"an image body needs an input of shape [1, 3, H, W]; the model's "
                         f"input has shape {list(shape)}")
    try:
        image = Image.open(io.BytesIO(body)).convert("RGB")
    except Exception as e:  # Pillow raises several types for a body it cannot read
        raise ValueError(f"the body is not an image Pillow can decode: {e}") from e
    image = image.resize((int(shape[3]), int(shape[2])), Image.BILINEAR)
    x = np.asarray(image, dtype=np.float32) / np.float32(255)
    x = (x - np.asarray(mean, np.float32)) / np.asarray(std, np.float32)
    return np.ascontiguousarray(x.transpose(2, 0, 1)[None])


@serve.deployment
class RecqModel:
    def __init__(self, model: str, device: str = "", max_batch_size: int = 8,
                 tuning: str = "off"):
        import recq  # imported in the replica's process

        self.engine = recq.Engine.load(model, device=_replica_device(device), tuning=tuning)
        self.inputs = {i.name: i for i in self.engine.inputs}
        # One recording per request slot: at most CONCURRENT_BATCHES batches of
        # max_batch_size requests are in flight, each request on a recording
        # (an OpenCL queue) of its own.
        self.free = [self.engine.record() for _ in range(max_batch_size * CONCURRENT_BATCHES)]
        self.infer.set_max_batch_size(max_batch_size)

    def _decode(self, feeds: Dict[str, Any]) -> Dict[str, np.ndarray]:
        out = {}
        for name, info in self.inputs.items():
            if name not in feeds:
                raise ValueError(f"missing input '{name}'; the model takes {list(self.inputs)}")
            out[name] = np.asarray(feeds[name], dtype=info.dtype).reshape(info.shape)
        return out

    @serve.batch(max_batch_size=8, batch_wait_timeout_s=0.005,
                 max_concurrent_batches=CONCURRENT_BATCHES)
    async def infer(self, batch: List[Dict[str, np.ndarray]]) -> List[Dict[str, np.ndarray]]:
        # One recording per request of the batch, all enqueued before any wait;
        # the waits run on a worker thread (they release the GIL), so the
        # event loop keeps taking requests meanwhile.
        recordings = [self.free.pop() for _ in batch]
        try:
            handles = [rec.enqueue(feeds) for rec, feeds in zip(recordings, batch)]
            return await asyncio.to_thread(lambda: [h.wait() for h in handles])
        finally:
            self.free.extend(recordings)

    async def __call__(self, request: Request) -> Response:
        body = await request.body()
        content_type = request.headers.get("content-type", "")
        try:
            if content_type.startswith(("application/x-npy", "image/")):
                if len(self.inputs) != 1:
                    raise ValueError(f"a {content_type} body needs a model of one input")
                name, info = next(iter(self.inputs.items()))
                if content_type.startswith("image/"):
                    feeds = {name: image_to_tensor(body, info.shape)}
                else:
                    feeds = {name: np.load(io.BytesIO(body), allow_pickle=False)}
            else:
                payload = json.loads(body)
                feeds = payload.get("inputs") or {next(iter(self.inputs)): payload["input"]}
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
    """`serve run recq_serve:build_app model=M.onnx [device=ray-gpu] [replicas=N] [gpus=1]`.

    Also `cpus=`, `max_batch_size=` (8), `max_ongoing_requests=` (4 times
    max_batch_size times CONCURRENT_BATCHES) and `tuning=` (off).
    """
    replicas = int(args.get("replicas", 1))
    gpus = float(args.get("gpus", 0))
    batch = int(args.get("max_batch_size", 8))
    return RecqModel.options(
        num_replicas=replicas,
        # Serve's default (5 requests in a replica at once) would cap each batch,
        # and requests that the router holds back while every replica is full
        # wait out its back-off: let the replica's batch queue hold them.
        max_ongoing_requests=int(args.get("max_ongoing_requests",
                                          4 * batch * CONCURRENT_BATCHES)),
        ray_actor_options={"num_cpus": float(args.get("cpus", 1)), "num_gpus": gpus},
    ).bind(args["model"], args.get("device", ""), batch, args.get("tuning", "off"))
