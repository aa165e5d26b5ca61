"""Ray Serve deployments of recq's shape-profile engine and generator.

RecqBucketed serves a text encoder (BERT-style: input_ids and
attention_mask of [batch, sequence]) over a shape profile. @serve.batch
gathers concurrent requests of different lengths; the batch is split by
the profile's sequence bucket, and each group is stacked into one
[n, length] run (shorter requests padded with pad_id and attention mask 0).
The ShapedEngine pads that run up to its bucket ([pow2 batch, bucket
length]) and returns the unpadded [n, length, ...] result; every request
gets its own rows, cut to its length.

    POST /     {"input_ids": [ids...]}   (attention mask: ones)
    response   {"outputs": {"NAME": nested list}, "shapes": {"NAME": dims},
                "bucket": {"input_ids": [n, bucket]}}

RecqGenerate serves a decoder exported with past key/values through
recq.Generator (one generation at a time per replica: its KV cache is the
replica's).

    POST /     {"prompt_ids": [ids...], "max_new_tokens": 32, "eos_id": null}
    response   {"ids": [...], "stop": "max_new_tokens", "prefill_tokens_per_s": ...,
                "decode_tokens_per_s": ..., "token_ms": [...]}

Run locally (README.md in this folder has the multi-node recipe):

    serve run recq_text_serve:build_bucketed_app model=bert.onnx max_length=512
    serve run recq_text_serve:build_generate_app model=decoder_with_past.onnx max_length=256
"""

import asyncio
import json
from typing import Any, Dict, List

import numpy as np
from ray import serve
from starlette.requests import Request
from starlette.responses import JSONResponse

from recq_serve import _replica_device


@serve.deployment
class RecqBucketed:
    def __init__(self, model: str, device: str = "", max_batch_size: int = 8,
                 max_length: int = 512, pad_id: int = 0, tuning: str = "off"):
        import recq  # imported in the replica's process

        dims = f"1..{max_batch_size}/pow2x1..{max_length}/pow2"
        self.engine = recq.Engine.load(
            model, device=_replica_device(device), tuning=tuning,
            shapes={"input_ids": dims, "attention_mask": dims},
            pad={"input_ids": pad_id, "attention_mask": 0})
        self.pad_id = pad_id
        self.max_length = max_length
        self.infer.set_max_batch_size(max_batch_size)

    def _bucket(self, length: int) -> int:
        shape = [1, length]
        return self.engine.bucket_for({"input_ids": shape, "attention_mask": shape})["input_ids"][1]

    def _run_group(self, group: List[np.ndarray]) -> List[Dict[str, Any]]:
        n, length = len(group), max(len(ids) for ids in group)
        ids = np.full((n, length), self.pad_id, dtype=np.int64)
        mask = np.zeros((n, length), dtype=np.int64)
        for i, row in enumerate(group):
            ids[i, :len(row)] = row
            mask[i, :len(row)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        bucket = self.engine.bucket_for({k: v.shape for k, v in feeds.items()})
        outputs = self.engine.run(feeds)  # [n, length, ...]: the unpadded result
        answers = []
        for i, row in enumerate(group):
            own = {}
            for name, value in outputs.items():
                part = value[i]
                if part.ndim >= 1 and part.shape[0] == length:
                    part = part[:len(row)]  # the request's own positions
                own[name] = part
            answers.append({"outputs": own, "bucket": {k: list(v) for k, v in bucket.items()}})
        return answers

    @serve.batch(max_batch_size=8, batch_wait_timeout_s=0.01)
    async def infer(self, batch: List[np.ndarray]) -> List[Any]:
        groups: Dict[int, List[int]] = {}
        answers: List[Any] = [None] * len(batch)
        for i, ids in enumerate(batch):
            try:
                groups.setdefault(self._bucket(len(ids)), []).append(i)
            except ValueError as e:  # outside the profile: recq's message
                answers[i] = e
        for members in groups.values():
            done = await asyncio.to_thread(self._run_group, [batch[i] for i in members])
            for i, answer in zip(members, done):
                answers[i] = answer
        return answers

    async def __call__(self, request: Request) -> JSONResponse:
        payload = json.loads(await request.body())
        ids = np.asarray(payload["input_ids"], dtype=np.int64).reshape(-1)
        answer = await self.infer(ids)
        if isinstance(answer, Exception):
            return JSONResponse({"error": str(answer)}, 400)
        return JSONResponse({"outputs": {n: v.tolist() for n, v in answer["outputs"].items()},
                             "shapes": {n: list(v.shape) for n, v in answer["outputs"].items()},
                             "bucket": answer["bucket"]})


@serve.deployment
class RecqGenerate:
    def __init__(self, model: str, device: str = "", max_length: int = 256,
                 sampling: str = "greedy", tuning: str = "off"):
        import recq

        self.generator = recq.Generator.load(model, max_length=max_length,
                                             device=_replica_device(device), sampling=sampling,
                                             tuning=tuning)
        self.lock = asyncio.Lock()  # one generation at a time: the KV cache is the replica's

    async def __call__(self, request: Request) -> JSONResponse:
        payload = json.loads(await request.body())
        async with self.lock:
            try:
                r = await asyncio.to_thread(
                    self.generator.generate, [int(i) for i in payload["prompt_ids"]],
                    max_new_tokens=int(payload.get("max_new_tokens", 32)),
                    eos_id=payload.get("eos_id"))
            except ValueError as e:
                return JSONResponse({"error": str(e)}, 400)
        return JSONResponse({"ids": r.ids, "stop": r.stop,
                             "prefill_tokens_per_s": r.prefill_tokens_per_s,
                             "decode_tokens_per_s": r.decode_tokens_per_s,
                             "token_ms": r.token_ms})


def _options(args: Dict[str, str]) -> Dict[str, Any]:
    return {"num_replicas": int(args.get("replicas", 1)),
            "ray_actor_options": {"num_cpus": float(args.get("cpus", 1)),
                                  "num_gpus": float(args.get("gpus", 0))}}


def build_bucketed_app(args: Dict[str, str]):
    """`serve run recq_text_serve:build_bucketed_app model=M.onnx [max_length=512]
    [max_batch_size=8] [pad_id=0] [device=ray-gpu] [replicas=N] [gpus=1]`."""
    return RecqBucketed.options(**_options(args)).bind(
        args["model"], args.get("device", ""), int(args.get("max_batch_size", 8)),
        int(args.get("max_length", 512)), int(args.get("pad_id", 0)), args.get("tuning", "off"))


def build_generate_app(args: Dict[str, str]):
    """`serve run recq_text_serve:build_generate_app model=decoder.onnx [max_length=256]
    [sampling=greedy] [device=ray-gpu] [replicas=N] [gpus=1]`."""
    return RecqGenerate.options(**_options(args)).bind(
        args["model"], args.get("device", ""), int(args.get("max_length", 256)),
        args.get("sampling", "greedy"), args.get("tuning", "off"))
