"""edgemm for Python: ONNX Runtime's InferenceSession API over edgemm's engine, the OCR, CLIP and
VLM pipelines, and the quantize / convert tools (docs/python.md).

An ONNX Runtime script runs on edgemm by changing its import::

    import edgemm as ort
    session = ort.InferenceSession("model.onnx", providers=["CPUExecutionProvider"])
    outputs = session.run(None, {"x": x})

Errors are edgemm.Error subclasses carrying edgemm's message (and `code`): InvalidArgument (also
a ValueError), InvalidModel, Unsupported (also a NotImplementedError), OutOfMemory (also a
MemoryError), IoError, InternalError.
"""

from edgemm._edgemm import (
    Error,
    InternalError,
    InvalidArgument,
    InvalidModel,
    IoError,
    OutOfMemory,
    Unsupported,
)
from edgemm.pipelines import ClipModel, OcrLine, OcrPipeline, OcrResult, VlmModel, VlmResult, ZeroShot
from edgemm.session import (
    ExecutionMode,
    GraphOptimizationLevel,
    InferenceSession,
    NodeArg,
    RunOptions,
    SessionOptions,
    get_all_providers,
    get_available_providers,
    get_device,
)
from edgemm.tools import convert, quantize

__version__ = "0.1.0"

__all__ = [
    "ClipModel",
    "Error",
    "ExecutionMode",
    "GraphOptimizationLevel",
    "InferenceSession",
    "InternalError",
    "InvalidArgument",
    "InvalidModel",
    "IoError",
    "NodeArg",
    "OcrLine",
    "OcrPipeline",
    "OcrResult",
    "OutOfMemory",
    "RunOptions",
    "SessionOptions",
    "Unsupported",
    "VlmModel",
    "VlmResult",
    "ZeroShot",
    "convert",
    "get_all_providers",
    "get_available_providers",
    "get_device",
    "quantize",
]
