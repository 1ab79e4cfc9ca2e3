"""Strider, a layout-optimizing compiler for ONNX models, from Python.

``InferenceSession(path, ...)`` loads an ONNX model (or a strider-compile
output directory) into libstrider and runs it on NumPy arrays, as
onnxruntime.InferenceSession does; ``compile(model, out_dir, ...)`` runs
the packaged strider-compile tool. Failures raise :class:`StriderError`.
"""

from ._capi import Status, lib as _lib
from ._compile import compile
from ._errors import StriderError
from ._session import InferenceSession, NodeArg

__version__ = _lib.strider_version().decode("ascii")

__all__ = ["InferenceSession", "NodeArg", "Status", "StriderError", "compile", "__version__"]
