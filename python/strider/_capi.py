"""ctypes declarations of libstrider's C API (include/strider/strider.h).

The library is loaded from this package's directory (``_native/``), where
the wheel puts it. Every function is declared with its argument and result
types so that ctypes converts and checks them; ctypes releases the GIL
during each call, so runs on other threads (of one session or several) go
on meanwhile.
"""

import ctypes
import enum
import os

#: The C API version this module is written against (STRIDER_API_VERSION).
API_VERSION = 1

NATIVE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_native")
LIBRARY_PATH = os.path.join(NATIVE_DIR, "libstrider.so")
COMPILER_PATH = os.path.join(NATIVE_DIR, "strider-compile")


class Status(enum.IntEnum):
    """strider_status values."""

    OK = 0
    INVALID_ARGUMENT = 1
    MODEL = 2
    TENSOR = 3
    RUN = 4
    UNSUPPORTED = 5
    INTERNAL = 6


# DLPack 0.6 (dlpack/dlpack.h) -------------------------------------------------

KDL_CPU = 1
KDL_CUDA = 2
KDL_INT = 0
KDL_UINT = 1
KDL_FLOAT = 2
KDL_BFLOAT = 4
#: STRIDER_DL_BOOL: the boolean code of later DLPack versions, 8 bits.
KDL_BOOL = 6


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class DLDataType(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_uint8),
        ("bits", ctypes.c_uint8),
        ("lanes", ctypes.c_uint16),
    ]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class TensorInfo(ctypes.Structure):
    """strider_tensor_info."""

    _fields_ = [
        ("name", ctypes.c_char_p),
        ("dtype", DLDataType),
        ("ndim", ctypes.c_int32),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("dim_names", ctypes.POINTER(ctypes.c_char_p)),
        ("dim_order", ctypes.POINTER(ctypes.c_int32)),
        ("layout", ctypes.c_char_p),
    ]


class _Opaque(ctypes.Structure):
    pass


ModelPtr = ctypes.POINTER(type("strider_model", (_Opaque,), {}))
SessionPtr = ctypes.POINTER(type("strider_session", (_Opaque,), {}))
OptionsPtr = ctypes.POINTER(type("strider_session_options", (_Opaque,), {}))

_status = ctypes.c_int
_size = ctypes.c_size_t

# name: (result type, argument types)
_SIGNATURES = {
    "strider_version": (ctypes.c_char_p, []),
    "strider_api_version": (ctypes.c_int, []),
    "strider_last_error": (ctypes.c_char_p, []),
    "strider_model_load": (_status, [ctypes.c_char_p, ctypes.POINTER(ModelPtr)]),
    "strider_model_free": (None, [ModelPtr]),
    "strider_model_num_inputs": (_size, [ModelPtr]),
    "strider_model_num_outputs": (_size, [ModelPtr]),
    "strider_model_input_info": (_status, [ModelPtr, _size, ctypes.POINTER(TensorInfo)]),
    "strider_model_output_info": (_status, [ModelPtr, _size, ctypes.POINTER(TensorInfo)]),
    "strider_model_input_dim_range": (
        _status, [ModelPtr, _size, ctypes.c_int32, ctypes.POINTER(ctypes.c_int64),
                  ctypes.POINTER(ctypes.c_int64)]),
    "strider_session_options_create": (_status, [ctypes.POINTER(OptionsPtr)]),
    "strider_session_options_free": (None, [OptionsPtr]),
    "strider_session_options_set_threads": (_status, [OptionsPtr, ctypes.c_int]),
    "strider_session_options_set_backend": (_status, [OptionsPtr, ctypes.c_char_p]),
    "strider_session_options_set_device": (_status, [OptionsPtr, DLDevice]),
    "strider_session_options_set_precision": (_status, [OptionsPtr, ctypes.c_char_p]),
    "strider_session_options_set_tuning_file": (_status, [OptionsPtr, ctypes.c_char_p]),
    "strider_session_options_set_dim": (_status, [OptionsPtr, ctypes.c_char_p, ctypes.c_int64]),
    "strider_session_options_set_optimize": (_status, [OptionsPtr, ctypes.c_int]),
    "strider_session_options_set_cache_limits": (
        _status, [OptionsPtr, ctypes.c_size_t, ctypes.c_int64]),
    "strider_session_options_set_max_memory": (_status, [OptionsPtr, ctypes.c_uint64]),
    "strider_session_options_set_input_range": (
        _status, [OptionsPtr, ctypes.c_char_p, ctypes.c_int32, ctypes.c_int64,
                  ctypes.c_int64]),
    "strider_session_options_set_optimize_per_shape": (_status, [OptionsPtr, ctypes.c_int]),
    "strider_session_create": (_status, [ModelPtr, OptionsPtr, ctypes.POINTER(SessionPtr)]),
    "strider_session_free": (None, [SessionPtr]),
    "strider_session_prepare": (_status, [SessionPtr, ctypes.POINTER(DLTensor), _size]),
    "strider_session_output_info": (_status, [SessionPtr, _size, ctypes.POINTER(TensorInfo)]),
    "strider_session_run": (
        _status,
        [SessionPtr, ctypes.POINTER(DLTensor), _size, ctypes.POINTER(DLTensor), _size],
    ),
    "strider_session_num_programs_built": (_size, [SessionPtr]),
    "strider_session_num_cache_hits": (_size, [SessionPtr]),
    "strider_session_build_seconds": (ctypes.c_double, [SessionPtr]),
    "strider_session_num_size_classes": (_size, [SessionPtr]),
}


def _load():
    if not os.path.exists(LIBRARY_PATH):
        raise ImportError(
            f"strider: {LIBRARY_PATH} is missing: import the installed package "
            "(python -m pip install ./python), not the source tree"
        )
    lib = ctypes.CDLL(LIBRARY_PATH)
    for name, (restype, argtypes) in _SIGNATURES.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    got = lib.strider_api_version()
    if got != API_VERSION:
        raise ImportError(
            f"strider: {LIBRARY_PATH} has C API version {got}, this package "
            f"was written for version {API_VERSION}"
        )
    return lib


lib = _load()


def last_error():
    """This thread's last failure message of the C API."""
    return lib.strider_last_error().decode("utf-8", "replace")
