"""recq: compile an ONNX model to OpenCL kernels, record once, replay many times.

    import numpy as np, recq
    print(recq.devices())
    engine = recq.Engine.load("model.onnx", device="cpu:0")
    out = engine.run({"input": np.random.rand(1, 3, 224, 224).astype(np.float32)})

See docs/python.md for recordings, device tensors, zero-copy views and errors.
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
    Internal,
    InvalidArgument,
    NotFound,
    OutOfRange,
    PermissionDenied,
    Recording,
    ResourceExhausted,
    RunHandle,
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
    "Internal",
    "InvalidArgument",
    "NotFound",
    "OutOfRange",
    "PermissionDenied",
    "Recording",
    "ResourceExhausted",
    "RunHandle",
    "Tensor",
    "Unauthenticated",
    "Unavailable",
    "Unimplemented",
    "Unknown",
    "devices",
]
