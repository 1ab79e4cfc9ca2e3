"""strider.compile: ahead-of-time compilation through the packaged tool."""

import os
import pathlib
import subprocess
import tempfile
import warnings

from ._capi import COMPILER_PATH, Status
from ._errors import StriderError


def _text(value):
    return str(value)


def _shape(value):
    if isinstance(value, str):
        return value
    return "x".join(str(int(d)) for d in value)


# Keyword option: (flag, how the value is written; None for a switch).
# Dict-valued options give one flag per entry, as NAME=VALUE.
_OPTIONS = {
    "target": ("--target", _text),
    "layout": ("--layout", _text),
    "io_layout": ("--io-layout", _text),
    "shapes": ("--shape", _shape),
    "dims": ("--dim", _text),
    "tune": ("--tune", None),
    "tuning_file": ("--tuning-file", os.fspath),
    "tune_threads": ("--tune-threads", _text),
    "strict": ("--strict", None),
    "svg": ("--svg", None),
}
_DICT_OPTIONS = ("shapes", "dims")


def _flags(options):
    flags = []
    for key, value in options.items():
        if key not in _OPTIONS:
            raise TypeError(
                f"compile() got an unknown option '{key}' (options: {', '.join(_OPTIONS)})"
            )
        flag, write = _OPTIONS[key]
        if value is None:
            continue
        if key in _DICT_OPTIONS:
            if not isinstance(value, dict):
                raise TypeError(f"compile(): {key} must be a dict of input or dim name to size")
            flags += [f"{flag}={name}={write(v)}" for name, v in value.items()]
        elif write is None:
            flags.append(f"{flag}={'true' if value else 'false'}")
        else:
            flags.append(f"{flag}={write(value)}")
    return flags


def compile(model, out_dir, verbose=False, **options):
    """Compiles an ONNX model ahead of time into the directory `out_dir`.

    This runs the ``strider-compile`` executable shipped in this package
    (it is not a library call): it imports `model` (a path, or an ONNX
    model's bytes or ModelProto), canonicalizes it, chooses a layout for
    every activation and writes ``out_dir/model.onnx``, ``model.lir``,
    ``report.txt``, ``report.json`` and ``layout.dot``. An
    :class:`InferenceSession` on `out_dir` runs the chosen layouts.

    Options, each one of the tool's flags (``strider-compile --help``):

    - ``target``: "cpu-avx512" (the tool's default), "cpu-avx2",
      "cpu-neon", "cuda-sm80", "cuda-sm90";
    - ``layout``: "auto", "nchw" or "nhwc";
    - ``io_layout``: "model", "nchw" or "nhwc";
    - ``shapes``: {input: (1, 3, 224, 224) or "1x3x224x224"}, to
      specialize the graph to static input shapes (``--shape``);
    - ``dims``: {symbol: size}, sizes of symbolic dims (``--dim``);
    - ``tune``, ``tuning_file``, ``tune_threads``: time the convs on this
      CPU and choose layouts by the measured times;
    - ``strict``: refuse what ONNX Runtime tolerates;
    - ``svg``: render layout.svg when Graphviz is installed.

    The tool's summary is printed if `verbose`; its warnings become Python
    warnings. Returns `out_dir` as a ``pathlib.Path``. Raises
    :class:`StriderError` (status ``Status.MODEL``) with the tool's message
    when it fails, and TypeError for an unknown option.
    """
    flags = _flags(options)
    out_dir = pathlib.Path(out_dir)
    if hasattr(model, "SerializeToString"):
        model = model.SerializeToString()
    with tempfile.TemporaryDirectory(prefix="strider-") as tmp:
        if isinstance(model, (bytes, bytearray, memoryview)):
            path = os.path.join(tmp, "model.onnx")
            with open(path, "wb") as f:
                f.write(model)
        else:
            path = os.fspath(model)
        argv = [COMPILER_PATH, path, "-o", os.fspath(out_dir)] + flags
        try:
            result = subprocess.run(argv, capture_output=True, text=True, check=False)
        except OSError as e:
            raise StriderError(f"cannot run {COMPILER_PATH}: {e}", Status.INTERNAL) from e
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    if result.returncode != 0:
        message = "\n".join(lines) or f"strider-compile exited with status {result.returncode}"
        error = StriderError(message, Status.MODEL)
        error.returncode = result.returncode
        raise error
    for line in lines:
        warnings.warn(line, RuntimeWarning, stacklevel=2)
    if verbose:
        print(result.stdout, end="")
    return out_dir
