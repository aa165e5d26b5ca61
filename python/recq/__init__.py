"""recq: compile an ONNX model to OpenCL kernels, record once, replay many times.

    import numpy as np, recq
    print(recq.devices())
    engine = recq.Engine.load("model.onnx", device="cpu:0")
    out = engine.run({"input": np.random.rand(1, 3, 224, 224).astype(np.float32)})

    bert = recq.Engine.load("bert.onnx", shapes="input_ids:1x1..512/pow2,"
                            "attention_mask:1x1..512/pow2",
                            pad={"input_ids": 0, "attention_mask": 0})  # a ShapedEngine
    gen = recq.Generator.load("decoder_with_past.onnx", max_length=256)
    ids = gen.generate([464, 3290, 318], max_new_tokens=64).ids

See docs/python.md for recordings, device tensors, zero-copy views, shape
profiles, generation and errors.
"""

from ._recq import (  # noqa: F401  (re-exported)
    Aborted,
    AlreadyExists,
    BindingInfo,
    Cancelled,
    Context,
    DataLoss,
    DeadlineExceeded,
    Engine,
    Error,
    FailedPrecondition,
    GenerateResult,
    Generator,
    Internal,
    InvalidArgument,
    NotFound,
    OutOfRange,
    PermissionDenied,
    Recording,
    ResourceExhausted,
    RunHandle,
    ShapedEngine,
    Tensor,
    Unauthenticated,
    Unavailable,
    Unimplemented,
    Unknown,
    devices,
)

__version__ = "0.1"

__all__ = [
    "Aborted",
    "AlreadyExists",
    "BindingInfo",
    "Cancelled",
    "Context",
    "DataLoss",
    "DeadlineExceeded",
    "Engine",
    "Error",
    "FailedPrecondition",
    "GenerateResult",
    "Generator",
    "Internal",
    "InvalidArgument",
    "NotFound",
    "OutOfRange",
    "PermissionDenied",
    "Recording",
    "ResourceExhausted",
    "RunHandle",
    "ShapedEngine",
    "Tensor",
    "Unauthenticated",
    "Unavailable",
    "Unimplemented",
    "Unknown",
    "devices",
]
