"""InferenceSession: a model loaded into libstrider, run on NumPy arrays.

Inputs are handed to the library as DLTensors over the arrays' own memory
(no copy here, whatever their strides); outputs are NumPy arrays this
module allocates from the shapes the library reports for the inputs, and
the library writes into them.
"""

import ctypes
import os
import tempfile
import weakref
from collections.abc import Mapping

import numpy as np

from . import _capi
from ._capi import DLDataType, DLDevice, DLTensor, Status, TensorInfo, lib
from ._errors import StriderError, check

# Element types: NumPy dtype name, DLPack code and bits, ONNX type name.
# bfloat16 has no NumPy dtype of its own; ml_dtypes' one is used when
# installed.
_ELEMENT_TYPES = [
    ("float32", _capi.KDL_FLOAT, 32, "float"),
    ("float16", _capi.KDL_FLOAT, 16, "float16"),
    ("float64", _capi.KDL_FLOAT, 64, "double"),
    ("bfloat16", _capi.KDL_BFLOAT, 16, "bfloat16"),
    ("int8", _capi.KDL_INT, 8, "int8"),
    ("int16", _capi.KDL_INT, 16, "int16"),
    ("int32", _capi.KDL_INT, 32, "int32"),
    ("int64", _capi.KDL_INT, 64, "int64"),
    ("uint8", _capi.KDL_UINT, 8, "uint8"),
    ("uint16", _capi.KDL_UINT, 16, "uint16"),
    ("uint32", _capi.KDL_UINT, 32, "uint32"),
    ("uint64", _capi.KDL_UINT, 64, "uint64"),
    ("bool", _capi.KDL_BOOL, 8, "bool"),
]
_BY_NAME = {name: (code, bits) for name, code, bits, _ in _ELEMENT_TYPES}
_BY_CODE = {(code, bits): (name, onnx) for name, code, bits, onnx in _ELEMENT_TYPES}


def _numpy_dtype(name):
    """The NumPy dtype of element type `name`, or None if there is none."""
    if name != "bfloat16":
        return np.dtype(name)
    try:
        import ml_dtypes
    except ImportError:
        return None
    return np.dtype(ml_dtypes.bfloat16)


def _dl_dtype(dtype, what):
    """The DLDataType of NumPy `dtype`; StriderError if Strider has none."""
    code_bits = _BY_NAME.get(dtype.name) if dtype.isnative else None
    if code_bits is None:
        supported = ", ".join(name for name, _, _, _ in _ELEMENT_TYPES)
        raise StriderError(
            f"{what} has dtype {dtype.str if not dtype.isnative else dtype.name}, "
            f"which Strider does not read (it reads {supported}, in native byte order)",
            Status.TENSOR,
        )
    return DLDataType(code_bits[0], code_bits[1], 1)


class NodeArg:
    """An input or output of a model, as ONNX Runtime's NodeArg.

    ``shape`` lists ints for static dims, the symbol (a str) for a
    symbolic dim and None for an unknown one; it is None when the rank is
    unknown. ``type`` is ONNX Runtime's string ("tensor(float)"),
    ``dtype`` the NumPy dtype (None if unknown or unavailable). ``layout``
    is the memory order the model reads or writes without converting
    ("nchw", "nhwc", "[0, 2, 1]"; "" for a row-major rank < 3 tensor) and
    ``dim_order`` the same as logical dims from outermost to innermost.
    ``ranges`` (inputs only; {} for outputs) maps each dynamic dim whose
    sizes are bounded to its inclusive (min, max): the ranges of an
    artifact compiled with ``strider-compile --shape x=1x3x48x100..1000``
    and the session's ``input_ranges`` (both apply: runs outside either
    raise).
    """

    __slots__ = ("name", "shape", "type", "dtype", "layout", "dim_order", "ranges")

    def __init__(self, info):
        self.name = info.name.decode("utf-8")
        elt = _BY_CODE.get((info.dtype.code, info.dtype.bits))
        self.type = f"tensor({elt[1]})" if elt else "tensor(undefined)"
        self.dtype = _numpy_dtype(elt[0]) if elt else None
        if info.ndim < 0:
            self.shape = None
            self.dim_order = None
        else:
            self.shape = []
            for i in range(info.ndim):
                size = info.shape[i]
                if size >= 0:
                    self.shape.append(int(size))
                elif info.dim_names[i] is not None:
                    self.shape.append(info.dim_names[i].decode("utf-8"))
                else:
                    self.shape.append(None)
            self.dim_order = [int(info.dim_order[i]) for i in range(info.ndim)]
        self.layout = info.layout.decode("utf-8") if info.layout else ""
        self.ranges = {}

    def __repr__(self):
        return (
            f"NodeArg(name={self.name!r}, type={self.type!r}, "
            f"shape={self.shape!r}, layout={self.layout!r})"
        )


class _TensorList:
    """DLTensors over arrays, in a C array, with what keeps them valid.

    A C-contiguous array is described with NULL strides, any other with
    its own strides in elements: the tensor's data is the array's memory
    either way. Only an array whose byte strides are not a multiple of its
    item size (a view cut out of a structured array) is copied first.
    """

    def __init__(self, arrays, whats):
        self.arrays = []
        self._keep = []
        self.tensors = (DLTensor * max(len(arrays), 1))()
        for i, (array, what) in enumerate(zip(arrays, whats)):
            self._describe(self.tensors[i], array, what)

    def _describe(self, t, array, what):
        t.dtype = _dl_dtype(array.dtype, what)
        itemsize = array.dtype.itemsize
        strides = None
        if not array.flags.c_contiguous:
            if any(s % itemsize for s in array.strides):
                array = np.ascontiguousarray(array)
            else:
                strides = (ctypes.c_int64 * array.ndim)(
                    *(s // itemsize for s in array.strides)
                )
        shape = (ctypes.c_int64 * array.ndim)(*array.shape)
        self.arrays.append(array)
        self._keep.extend((shape, strides))
        t.data = array.__array_interface__["data"][0]
        t.device = DLDevice(_capi.KDL_CPU, 0)
        t.ndim = array.ndim
        t.shape = shape if array.ndim else None
        t.strides = strides
        t.byte_offset = 0


def _tensor_info(get, handle, index):
    info = TensorInfo()
    check(get(handle, index, ctypes.byref(info)))
    return info


def _input_ranges(model, index, arg, session_ranges):
    """{axis: (min, max)} of input INDEX's bounded dynamic dims: the
    model's (strider_model_input_dim_range) narrowed by SESSION_RANGES."""
    ranges = {}
    for axis, size in enumerate(arg.shape or []):
        if isinstance(size, int):
            continue
        low, high = ctypes.c_int64(), ctypes.c_int64()
        check(lib.strider_model_input_dim_range(model, index, axis, ctypes.byref(low),
                                                ctypes.byref(high)))
        lo, hi = low.value, high.value
        if axis in session_ranges:
            lo = max(lo, int(session_ranges[axis][0]))
            hi = min(hi, int(session_ranges[axis][1]))
        if lo > 0 or hi < 2**63 - 1:
            ranges[axis] = (lo, hi)
    return ranges


def _free(session, model):
    lib.strider_session_free(session)
    lib.strider_model_free(model)


class InferenceSession:
    """A model loaded for running, in the manner of onnxruntime.InferenceSession.

    ``path`` is an ONNX file (optimized as strider-compile does and
    compiled for this machine at each new set of input shapes), a ``.lir``
    file, a strider-compile output directory (its layouts run as chosen),
    or the bytes of an ONNX model. Options:

    - ``threads``: threads each kernel splits its work over (default 1);
    - ``backend``: "cpu" (SIMD kernels), "reference" (the interpreter) or
      "cuda" (an NVIDIA GPU: a CUDA build, a GPU, cuDNN 9 and cuBLASLt;
      arrays stay NumPy arrays in host memory);
    - ``device``: with backend="cuda", the GPU's ordinal (default 0);
    - ``precision``: with backend="cuda", "fp32" (default), "tf32", "fp16"
      or "bf16" (convolutions and matmuls in half precision, casts placed
      by the compiler);
    - ``optimize``: False runs an ONNX model as imported (no
      canonicalization or layout assignment);
    - ``dims``: sizes of symbolic dims, {"N": 1}, beyond what the fed
      shapes bind;
    - ``input_ranges``: the sizes dynamic input dims may take, {"x": {3:
      (100, 1000)}} (input, axis, inclusive range), as ``strider-compile
      --shape x=1x3x48x100..1000`` records them in an artifact: runs with
      other sizes raise. An ONNX model is then optimized once for every
      shape in the ranges (layouts costed at their upper ends), so that a
      new shape costs only its specialization and lowering;
    - ``optimize_per_shape``: False (default) optimizes an ONNX model with
      dynamic input dims once per size class (each dynamic dim's size
      rounded up to a power of two, layouts costed at those sizes), and a
      new shape of a class already seen is only specialized and lowered;
      True optimizes each new shape for itself. Either way the program a
      shape gets depends on that shape only;
    - ``cache_programs``, ``cache_bytes``: what the cache of programs may
      keep (default 64 programs holding at most 1 GiB of their own: the
      constants made for their shapes; the least recently used is evicted);
    - ``max_memory``: the most one run may allocate on the host, in bytes
      (activations; the reference backend's tensors); None (default): the
      memory available on the machine when a shape's program is built. A
      shape whose program needs more raises when it is first run, saying
      how much it needs;
    - ``tuning_file``: a table written by ``strider-compile --tune`` for
      the session's target: an ONNX model's layouts are costed by its
      measurements, and backend="cuda" runs the cuDNN algorithms it holds.

    Programs are built per distinct set of input shapes and cached (up to
    64, holding at most 1 GiB of their own). ``run`` may be called
    from any number of threads at once: the GIL is released during the
    library's calls and the session takes no lock of its own for a run, so
    runs on one session overlap (each in an activation arena of its own).
    Raises :class:`StriderError` if the model cannot be
    loaded or an option is refused.
    """

    def __init__(self, path, threads=1, backend="cpu", optimize=True, dims=None,
                 device=0, precision="fp32", tuning_file=None, cache_programs=64,
                 cache_bytes=1 << 30, input_ranges=None, optimize_per_shape=False,
                 max_memory=None):
        model = _capi.ModelPtr()
        if isinstance(path, (bytes, bytearray, memoryview)):
            with tempfile.TemporaryDirectory(prefix="strider-") as tmp:
                file = os.path.join(tmp, "model.onnx")
                with open(file, "wb") as f:
                    f.write(path)
                check(lib.strider_model_load(file.encode(), ctypes.byref(model)))
        else:
            check(lib.strider_model_load(os.fsencode(path), ctypes.byref(model)))
        session = _capi.SessionPtr()
        options = _capi.OptionsPtr()
        try:
            check(lib.strider_session_options_create(ctypes.byref(options)))
            check(lib.strider_session_options_set_threads(options, int(threads)))
            check(lib.strider_session_options_set_backend(options, str(backend).encode()))
            check(lib.strider_session_options_set_optimize(options, 1 if optimize else 0))
            check(lib.strider_session_options_set_optimize_per_shape(
                options, 1 if optimize_per_shape else 0))
            if backend == "cuda":
                check(lib.strider_session_options_set_device(
                    options, _capi.DLDevice(_capi.KDL_CUDA, int(device))))
            check(lib.strider_session_options_set_precision(options, str(precision).encode()))
            if int(cache_programs) < 1 or int(cache_bytes) < 0:
                raise StriderError(
                    f"cache_programs must be at least 1 and cache_bytes at least 0 "
                    f"(got {cache_programs}, {cache_bytes})", Status.INVALID_ARGUMENT)
            check(lib.strider_session_options_set_cache_limits(
                options, int(cache_programs), int(cache_bytes)))
            if max_memory is not None:
                if int(max_memory) < 1:
                    raise StriderError(
                        f"max_memory must be at least 1 byte (got {max_memory})",
                        Status.INVALID_ARGUMENT)
                check(lib.strider_session_options_set_max_memory(
                    options, int(max_memory)))
            if tuning_file is not None:
                check(lib.strider_session_options_set_tuning_file(
                    options, os.fsencode(tuning_file)))
            for symbol, size in (dims or {}).items():
                check(lib.strider_session_options_set_dim(options, str(symbol).encode(), int(size)))
            for name, axes in (input_ranges or {}).items():
                for axis, (low, high) in axes.items():
                    check(lib.strider_session_options_set_input_range(
                        options, str(name).encode(), int(axis), int(low), int(high)))
            check(lib.strider_session_create(model, options, ctypes.byref(session)))
        except BaseException:
            lib.strider_model_free(model)
            raise
        finally:
            lib.strider_session_options_free(options)
        self._model = model
        self._session = session
        self._finalizer = weakref.finalize(self, _free, session, model)
        self._inputs = [
            NodeArg(_tensor_info(lib.strider_model_input_info, model, i))
            for i in range(lib.strider_model_num_inputs(model))
        ]
        for i, arg in enumerate(self._inputs):
            arg.ranges = _input_ranges(model, i, arg, (input_ranges or {}).get(arg.name, {}))
        self._outputs = [
            NodeArg(_tensor_info(lib.strider_model_output_info, model, i))
            for i in range(lib.strider_model_num_outputs(model))
        ]
        self._input_index = {arg.name: i for i, arg in enumerate(self._inputs)}
        self._output_index = {arg.name: i for i, arg in enumerate(self._outputs)}

    def get_inputs(self):
        """The inputs a run feeds (graph inputs without default data), in order."""
        return list(self._inputs)

    def get_outputs(self):
        """The model's outputs, in order."""
        return list(self._outputs)

    @property
    def _num_programs_built(self):
        """Programs built so far (one per distinct set of input shapes run)."""
        return lib.strider_session_num_programs_built(self._session)

    @property
    def cache_info(self):
        """What the session's cache of compiled programs did so far, a dict:
        programs_built (one per distinct set of input shapes run, again
        after an eviction: the misses), cache_hits (runs that reused the
        program of an earlier run), build_seconds (time spent building
        programs, in all) and size_classes (the size classes the model was
        optimized for; 0 with optimize_per_shape)."""
        return {
            "programs_built": lib.strider_session_num_programs_built(self._session),
            "cache_hits": lib.strider_session_num_cache_hits(self._session),
            "build_seconds": lib.strider_session_build_seconds(self._session),
            "size_classes": lib.strider_session_num_size_classes(self._session),
        }

    def _input_tensors(self, input_feed):
        """The feeds checked by name and as DLTensors, in the model's order."""
        if not isinstance(input_feed, Mapping):
            raise TypeError(
                f"feeds must be a dict of input name to array, not {type(input_feed).__name__}"
            )
        names = [arg.name for arg in self._inputs]
        unknown = [n for n in input_feed if n not in self._input_index]
        if unknown:
            raise StriderError(
                f"unknown input name(s) {unknown}; the model's inputs are {names}",
                Status.TENSOR,
            )
        missing = [n for n in names if n not in input_feed]
        if missing:
            raise StriderError(
                f"missing input(s) {missing}; the model's inputs are {names}",
                Status.TENSOR,
            )
        arrays = [np.asarray(input_feed[n]) for n in names]
        whats = [f"input {i} ('{n}')" for i, n in enumerate(names)]
        return _TensorList(arrays, whats)

    def _output_indices(self, output_names):
        if not output_names:
            return list(range(len(self._outputs)))
        if isinstance(output_names, (str, bytes)):
            raise TypeError("output_names must be a list of names (or None), not a string")
        indices = []
        for name in output_names:
            if name not in self._output_index:
                known = [arg.name for arg in self._outputs]
                raise StriderError(
                    f"unknown output name '{name}'; the model's outputs are {known}",
                    Status.INVALID_ARGUMENT,
                )
            indices.append(self._output_index[name])
        return indices

    def run(self, output_names, input_feed):
        """Runs the model on `input_feed` ({input name: array}).

        Returns a list of NumPy arrays: the outputs `output_names` names,
        in that order, or all outputs in the model's order when it is None
        (or empty). Arrays are read where they are, in any strides, with
        no conversion: an element type other than the model's, a shape
        its static dims refuse, an unknown or missing name raise
        :class:`StriderError`.
        """
        indices = self._output_indices(output_names)
        inputs = self._input_tensors(input_feed)
        count = len(self._inputs)
        # The output shapes of this thread's prepare (the C API keeps one
        # per thread), then the run: no lock, other threads run meanwhile.
        check(lib.strider_session_prepare(self._session, inputs.tensors, count))
        outputs = []
        for i in range(len(self._outputs)):
            info = _tensor_info(lib.strider_session_output_info, self._session, i)
            outputs.append(self._allocate(info))
        whats = [f"output {i} ('{arg.name}')" for i, arg in enumerate(self._outputs)]
        out_tensors = _TensorList(outputs, whats)
        check(
            lib.strider_session_run(
                self._session, inputs.tensors, count, out_tensors.tensors, len(outputs)
            )
        )
        return [outputs[i] for i in indices]

    @staticmethod
    def _allocate(info):
        """An uninitialized array for the output `info` describes."""
        arg = NodeArg(info)
        if arg.shape is None or any(not isinstance(d, int) for d in arg.shape):
            raise StriderError(
                f"output '{arg.name}' has no static shape for these inputs ({arg.shape})",
                Status.INTERNAL,
            )
        if arg.dtype is None:
            detail = (
                "install ml_dtypes for bfloat16"
                if arg.type == "tensor(bfloat16)"
                else "the model does not say"
            )
            raise StriderError(
                f"output '{arg.name}' has element type {arg.type}, which has no "
                f"NumPy dtype here ({detail})",
                Status.UNSUPPORTED,
            )
        return np.empty(arg.shape, arg.dtype)
