"""strider.InferenceSession against ONNX Runtime, its ONNX Runtime-like API,
its errors, and how NumPy arrays cross into the library."""

import importlib.metadata
import re
import threading

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import strider
from strider import Status, StriderError

RTOL, ATOL = 1e-3, 1e-4


def images(batch, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((batch, 3, 32, 32)).astype(np.float32)


@pytest.fixture(scope="module")
def session(resnet_block):
    return strider.InferenceSession(resnet_block)


def test_version():
    assert re.fullmatch(r"\d+\.\d+\.\d+", strider.__version__)
    # The wheel's metadata says the version the library reports.
    assert importlib.metadata.version("strider") == strider.__version__


def test_inputs_and_outputs(session):
    (image,) = session.get_inputs()
    assert image.name == "image"
    assert image.shape == ["N", 3, 32, 32]
    assert image.type == "tensor(float)"
    assert image.dtype == np.float32
    assert image.layout == "nchw"
    assert image.dim_order == [0, 1, 2, 3]
    (logits,) = session.get_outputs()
    assert logits.name == "logits"
    assert logits.shape == ["N", 10]
    assert logits.type == "tensor(float)"
    assert logits.layout == ""
    assert "image" in repr(image)


def test_matches_onnxruntime_and_reuses_programs(resnet_block, ort_run):
    sess = strider.InferenceSession(resnet_block)
    assert sess._num_programs_built == 0
    first = {}
    for built, batch in enumerate((1, 3), start=1):
        x = images(batch, seed=batch)
        (got,) = sess.run(None, {"image": x})
        (want,) = ort_run(resnet_block, {"image": x})
        assert got.shape == (batch, 10) and got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
        assert sess._num_programs_built == built
        first[batch] = got
    # The same shapes again: the cached programs run, with the same results.
    for batch in (3, 1):
        (again,) = sess.run(["logits"], {"image": images(batch, seed=batch)})
        np.testing.assert_array_equal(again, first[batch])
    assert sess._num_programs_built == 2
    info = sess.cache_info
    assert info["programs_built"] == 2 and info["cache_hits"] == 2
    assert info["build_seconds"] > 0


def test_cache_limits(resnet_block):
    sess = strider.InferenceSession(resnet_block, cache_programs=1)
    for batch in (1, 2, 1):
        sess.run(None, {"image": images(batch, seed=batch)})
    # Room for one program: each batch change evicts the other's.
    assert sess.cache_info["programs_built"] == 3
    assert sess.cache_info["cache_hits"] == 0
    with pytest.raises(strider.StriderError, match="cache_programs must be at least 1"):
        strider.InferenceSession(resnet_block, cache_programs=0)


def test_max_memory(resnet_block):
    # Batch 1 of the 3 x 32 x 32 block fits in 1 MiB, batch 64 does not.
    sess = strider.InferenceSession(resnet_block, max_memory=1 << 20)
    (one,) = sess.run(None, {"image": images(1)})
    with pytest.raises(StriderError, match=r"more than the 1\.0 MiB memory budget") as info:
        sess.run(None, {"image": images(64)})
    check_error(info, Status.RUN)
    (again,) = sess.run(None, {"image": images(1)})
    np.testing.assert_array_equal(again, one)
    with pytest.raises(StriderError, match="max_memory must be at least 1 byte"):
        strider.InferenceSession(resnet_block, max_memory=0)


def test_input_ranges(resnet_block, ort_run):
    sess = strider.InferenceSession(resnet_block, input_ranges={"image": {0: (1, 3)}})
    assert sess.get_inputs()[0].ranges == {0: (1, 3)}
    assert strider.InferenceSession(resnet_block).get_inputs()[0].ranges == {}
    for batch in (3, 1, 2):
        x = images(batch, seed=batch)
        (want,) = ort_run(resnet_block, {"image": x})
        (got,) = sess.run(None, {"image": x})
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg=f"batch {batch}")
    assert sess.cache_info["programs_built"] == 3
    with pytest.raises(strider.StriderError, match="dim 0 is 4, outside the range 1..3"):
        sess.run(None, {"image": images(4)})
    with pytest.raises(strider.StriderError, match="dim 1 is static"):
        strider.InferenceSession(resnet_block, input_ranges={"image": {1: (1, 3)}})
    with pytest.raises(strider.StriderError, match="1 <= min <= max"):
        strider.InferenceSession(resnet_block, input_ranges={"image": {0: (3, 1)}})


def test_size_classes(resnet_block, ort_run):
    # Batches 3 and 4 share the class of 4; 1 is its own.
    sess = strider.InferenceSession(resnet_block)
    per_shape = strider.InferenceSession(resnet_block, optimize_per_shape=True)
    for batch in (3, 4, 1):
        x = images(batch, seed=batch)
        (want,) = ort_run(resnet_block, {"image": x})
        for s in (sess, per_shape):
            (got,) = s.run(None, {"image": x})
            np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg=f"batch {batch}")
    assert sess.cache_info["programs_built"] == 3
    assert sess.cache_info["size_classes"] == 2
    assert per_shape.cache_info["size_classes"] == 0


def test_options(resnet_block, ort_run):
    x = images(2)
    (want,) = ort_run(resnet_block, {"image": x})
    for options in (
        {"threads": 2},
        {"backend": "reference"},
        {"optimize": False},
        {"dims": {"N": 2}},
    ):
        sess = strider.InferenceSession(resnet_block, **options)
        (got,) = sess.run(None, {"image": x})
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg=str(options))


def test_model_bytes(resnet_block, session):
    sess = strider.InferenceSession(resnet_block.read_bytes())
    x = images(1)
    np.testing.assert_array_equal(sess.run(None, {"image": x})[0], session.run(None, {"image": x})[0])


def test_output_order(make_model):
    path = make_model(
        [
            helper.make_node("Relu", ["x"], ["relu"]),
            helper.make_node("Neg", ["x"], ["neg"]),
            helper.make_node("Abs", ["x"], ["abs"]),
        ],
        [("x", TensorProto.FLOAT, [2, 3])],
        [("relu", TensorProto.FLOAT, [2, 3]), ("neg", TensorProto.FLOAT, [2, 3]),
         ("abs", TensorProto.FLOAT, [2, 3])],
    )
    sess = strider.InferenceSession(path)
    assert [o.name for o in sess.get_outputs()] == ["relu", "neg", "abs"]
    x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    relu, neg, abs_ = np.maximum(x, 0), -x, np.abs(x)
    for names, want in (
        (None, [relu, neg, abs_]),
        ([], [relu, neg, abs_]),
        (["abs", "relu"], [abs_, relu]),
        (["neg"], [neg]),
        (["neg", "neg"], [neg, neg]),
    ):
        got = sess.run(names, {"x": x})
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize(
    "dtype, onnx_type, op",
    [
        (np.bool_, TensorProto.BOOL, "Not"),
        (np.int64, TensorProto.INT64, "Neg"),
        (np.int32, TensorProto.INT32, "Abs"),
        (np.float64, TensorProto.DOUBLE, "Neg"),
        (np.float16, TensorProto.FLOAT16, "Relu"),
    ],
)
def test_element_types(make_model, dtype, onnx_type, op):
    path = make_model(
        [helper.make_node(op, ["x"], ["y"])],
        [("x", onnx_type, [2, 3])],
        [("y", onnx_type, [2, 3])],
    )
    sess = strider.InferenceSession(path)
    assert sess.get_inputs()[0].dtype == np.dtype(dtype)
    x = np.array([[0, 1, 2], [3, 0, 5]]).astype(dtype)
    if dtype is not np.bool_:
        x[0] *= -1
    want = {"Not": np.logical_not, "Neg": np.negative, "Abs": np.abs,
            "Relu": lambda a: np.maximum(a, 0)}[op](x)
    (got,) = sess.run(None, {"x": x})
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, want)


# Errors ----------------------------------------------------------------------


def check_error(info, status):
    assert isinstance(info.value, RuntimeError)
    assert info.value.status == status
    assert info.value.message == str(info.value)


def test_unknown_feed(session):
    with pytest.raises(StriderError, match=r"unknown input name\(s\) \['img'\]") as info:
        session.run(None, {"image": images(1), "img": images(1)})
    check_error(info, Status.TENSOR)


def test_missing_feed(session):
    with pytest.raises(StriderError, match=r"missing input\(s\) \['image'\]") as info:
        session.run(None, {})
    check_error(info, Status.TENSOR)


def test_wrong_dtype_is_not_cast(session):
    with pytest.raises(StriderError, match=r"'image'.*element type f64, the model expects f32") as info:
        session.run(None, {"image": images(1).astype(np.float64)})
    check_error(info, Status.TENSOR)


def test_unsupported_dtypes(session):
    x = images(1)
    for bad, shown in ((x.astype(np.complex64), "complex64"), (x.astype(">f4"), ">f4"),
                       (np.array([["a"]]), "str32")):
        with pytest.raises(StriderError, match=f"'image'.* has dtype {shown}, which Strider does not read") as info:
            session.run(None, {"image": bad})
        check_error(info, Status.TENSOR)


@pytest.mark.parametrize("shape", [(1, 3, 31, 32), (1, 4, 32, 32), (3, 32, 32), (1, 1, 3, 32, 32)])
def test_wrong_shape(session, shape):
    with pytest.raises(StriderError, match=r"'image'\) has shape \[.*\], the model expects") as info:
        session.run(None, {"image": np.zeros(shape, np.float32)})
    check_error(info, Status.TENSOR)


def test_unknown_output(session):
    with pytest.raises(StriderError, match=r"unknown output name 'prob'; the model's outputs are \['logits'\]") as info:
        session.run(["prob"], {"image": images(1)})
    check_error(info, Status.INVALID_ARGUMENT)


def test_bad_arguments(session):
    with pytest.raises(TypeError, match="dict of input name"):
        session.run(None, [images(1)])
    with pytest.raises(TypeError, match="list of names"):
        session.run("logits", {"image": images(1)})


def test_bad_model(tmp_path):
    with pytest.raises(StriderError, match="no-such-model.onnx") as info:
        strider.InferenceSession(tmp_path / "no-such-model.onnx")
    check_error(info, Status.MODEL)
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"not a model")
    with pytest.raises(StriderError, match="garbage.onnx") as info:
        strider.InferenceSession(garbage)
    check_error(info, Status.MODEL)


@pytest.mark.parametrize(
    "options, status, match",
    [
        ({"threads": 0}, Status.INVALID_ARGUMENT, "threads must be at least 1"),
        ({"backend": "gpu"}, Status.INVALID_ARGUMENT, "unknown backend 'gpu'"),
        ({"precision": "fp8"}, Status.INVALID_ARGUMENT, "unknown precision 'fp8'"),
        ({"precision": "fp16"}, Status.INVALID_ARGUMENT, "needs the CUDA backend"),
        ({"dims": {"N": -1}}, Status.INVALID_ARGUMENT, "dim 'N' cannot be -1"),
    ],
)
def test_bad_options(resnet_block, options, status, match):
    with pytest.raises(StriderError, match=match) as info:
        strider.InferenceSession(resnet_block, **options)
    check_error(info, status)


def test_tuning_file(resnet_block, tmp_path):
    # A table of the session's target (this machine's cpu-avx512 or
    # cpu-avx2) is taken, one of another target refused; a malformed file
    # names its line.
    results = {}
    for target in ("cpu-avx512", "cpu-avx2"):
        table = tmp_path / f"{target}.tune"
        table.write_text(f"strider-tuning 1\ntarget {target}\nsimd -\nthreads 1\n")
        try:
            session = strider.InferenceSession(resnet_block, tuning_file=table)
            results[target] = session.run(None, {"image": images(1)})[0].shape
        except StriderError as e:
            results[target] = str(e)
    shapes = [r for r in results.values() if isinstance(r, tuple)]
    errors = [r for r in results.values() if isinstance(r, str)]
    assert shapes == [(1, 10)], results
    assert len(errors) == 1 and "the tuning table was measured for target" in errors[0], results
    bad = tmp_path / "bad.tune"
    bad.write_text("strider-tuning 1\nkernel x\n")
    with pytest.raises(StriderError, match=r"bad.tune:2:1: unknown entry 'kernel'") as info:
        strider.InferenceSession(resnet_block, tuning_file=bad)
    check_error(info, Status.INVALID_ARGUMENT)


def test_cuda_backend_runs_or_says_why_not(resnet_block):
    # Where the build and machine have no GPU: one UNSUPPORTED error that
    # says so. Where they do: the CPU backend's outputs.
    try:
        sess = strider.InferenceSession(resnet_block, backend="cuda")
    except StriderError as e:
        assert e.status == Status.UNSUPPORTED
        assert "no CUDA device" in str(e) or "no CUDA backend" in str(e), str(e)
        return
    x = np.random.default_rng(0).standard_normal((2, 3, 32, 32), dtype=np.float32)
    want = strider.InferenceSession(resnet_block).run(None, {"image": x})[0]
    got = sess.run(None, {"image": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_bad_dim_binding(resnet_block):
    # Bound to 2, fed a batch of 1: the run says so.
    sess = strider.InferenceSession(resnet_block, dims={"N": 2})
    with pytest.raises(StriderError) as info:
        sess.run(None, {"image": images(1)})
    check_error(info, Status.RUN)


# Memory ----------------------------------------------------------------------


def test_contiguous_input_is_not_copied(session):
    x = images(2)
    tensors = session._input_tensors({"image": x})
    t = tensors.tensors[0]
    assert t.data == x.ctypes.data
    assert not t.strides  # NULL: compact row-major
    assert [t.shape[i] for i in range(t.ndim)] == [2, 3, 32, 32]
    assert tensors.arrays[0] is x


def test_strided_inputs(session, ort_run, resnet_block):
    nhwc = np.random.default_rng(7).standard_normal((2, 32, 32, 3)).astype(np.float32)
    views = {
        "transposed": nhwc.transpose(0, 3, 1, 2),
        "reversed": images(2, seed=8)[:, :, ::-1, :],
        "every other": images(4, seed=9)[::2],
        "broadcast": np.broadcast_to(images(1, seed=10), (2, 3, 32, 32)),
    }
    for what, view in views.items():
        assert not view.flags.c_contiguous, what
        # Passed by its strides, not copied.
        t = session._input_tensors({"image": view}).tensors[0]
        assert t.data == view.__array_interface__["data"][0], what
        assert [t.strides[i] for i in range(4)] == [s // 4 for s in view.strides], what
        (got,) = session.run(None, {"image": view})
        (dense,) = session.run(None, {"image": np.ascontiguousarray(view)})
        np.testing.assert_allclose(got, dense, rtol=1e-5, atol=1e-6, err_msg=what)
        (want,) = ort_run(resnet_block, {"image": np.ascontiguousarray(view)})
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg=what)


def test_field_of_structured_array_is_copied(session):
    # Byte strides of 5 are no whole number of f32 elements: copied first.
    records = np.zeros((1, 3, 32, 32), dtype=[("value", "<f4"), ("flag", "u1")])
    records["value"] = images(1, seed=12)
    field = records["value"]
    tensors = session._input_tensors({"image": field})
    assert tensors.tensors[0].data != field.__array_interface__["data"][0]
    assert tensors.arrays[0].flags.c_contiguous
    np.testing.assert_array_equal(
        session.run(None, {"image": field})[0],
        session.run(None, {"image": images(1, seed=12)})[0],
    )


def test_outputs_are_fresh_arrays(session):
    x = images(1)
    (a,) = session.run(None, {"image": x})
    (b,) = session.run(None, {"image": x})
    assert a is not b and not np.shares_memory(a, b)
    assert a.flags.c_contiguous and a.flags.writeable and a.flags.owndata


def test_read_only_input(session):
    x = images(1)
    (want,) = session.run(None, {"image": x})
    x.flags.writeable = False
    np.testing.assert_array_equal(session.run(None, {"image": x})[0], want)


# Threads ---------------------------------------------------------------------


def test_sessions_on_two_threads(resnet_block):
    x = images(2, seed=11)
    (want,) = strider.InferenceSession(resnet_block).run(None, {"image": x})
    sessions = [strider.InferenceSession(resnet_block) for _ in range(2)]
    results = [[] for _ in sessions]
    errors = []

    def work(sess, out):
        try:
            for _ in range(5):
                out.append(sess.run(None, {"image": x})[0])
        except Exception as e:  # reported below, not lost in the thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s, r)) for s, r in zip(sessions, results)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for out in results:
        assert len(out) == 5
        for got in out:
            np.testing.assert_array_equal(got, want)


def test_one_session_shared_by_threads(session):
    # Runs on one session overlap (no lock is held through a run); each
    # thread gets its own results, bit for bit those of serial runs, over
    # several input shapes at once.
    inputs = [images(1 + i % 3, seed=20 + i) for i in range(6)]
    want = [session.run(None, {"image": x})[0] for x in inputs]
    before = session.cache_info
    rounds = 10
    start = threading.Barrier(len(inputs))
    mismatches, errors = [], []

    def work(i):
        try:
            start.wait()
            for _ in range(rounds):
                (got,) = session.run(None, {"image": inputs[i]})
                if not np.array_equal(got, want[i]):
                    mismatches.append(i)
        except Exception as e:  # reported below, not lost in the thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert not mismatches
    after = session.cache_info
    assert after["programs_built"] == before["programs_built"]
    assert after["cache_hits"] == before["cache_hits"] + rounds * len(inputs)


def test_weights_folded_from_shapes_are_not_reused(make_model, ort_run):
    # y = Conv(x, W) * H with H read from x's shape: the scale folds into
    # the conv's weights only once a specialization knows H, so each height
    # packs other weights under the same node name. The session's store of
    # packed weights must not hand one height's to another.
    rng = np.random.default_rng(3)
    w = rng.standard_normal((8, 4, 3, 3)).astype(np.float32)
    path = make_model(
        [
            helper.make_node("Constant", [], ["w"], value=numpy_helper.from_array(w)),
            helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
            helper.make_node("Shape", ["x"], ["s"], start=2, end=3),
            helper.make_node("Cast", ["s"], ["h"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["c", "h"], ["y"]),
        ],
        [("x", TensorProto.FLOAT, [1, 4, "h", "w"])],
        [("y", TensorProto.FLOAT, [1, 8, "h", "w"])],
    )
    sess = strider.InferenceSession(path)
    for h in (8, 16, 8, 12):
        x = rng.standard_normal((1, 4, h, 10)).astype(np.float32)
        got = sess.run(None, {"x": x})[0]
        np.testing.assert_allclose(got, ort_run(path, {"x": x})[0], rtol=1e-4, atol=1e-3)
