"""strider.compile: the packaged strider-compile, its options and errors, and
sessions on what it writes."""

import os

import numpy as np
import onnx
import pytest

import strider
from strider import Status, StriderError


def images(batch, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((batch, 3, 32, 32)).astype(np.float32)


def test_tool_is_packaged():
    from strider import _capi

    assert os.path.dirname(_capi.COMPILER_PATH) == os.path.dirname(_capi.LIBRARY_PATH)
    assert os.access(_capi.COMPILER_PATH, os.X_OK)


def test_compiled_directory_runs_the_same(resnet_block, ort_run, tmp_path):
    out = strider.compile(resnet_block, tmp_path / "out")
    assert out == tmp_path / "out"
    for name in ("model.onnx", "model.lir", "report.json", "report.txt", "layout.dot"):
        assert (out / name).is_file(), name
    compiled = strider.InferenceSession(out)
    direct = strider.InferenceSession(resnet_block)
    assert [i.shape for i in compiled.get_inputs()] == [["N", 3, 32, 32]]
    for batch in (1, 3):
        x = images(batch, seed=batch)
        (got,) = compiled.run(None, {"image": x})
        (want,) = direct.run(None, {"image": x})
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got, ort_run(resnet_block, {"image": x})[0], rtol=1e-3, atol=1e-4)


def test_shape_ranges_reach_the_session(resnet_block, tmp_path):
    out = strider.compile(resnet_block, tmp_path / "ranged", shapes={"image": "1..4x3x32x32"})
    sess = strider.InferenceSession(out)
    assert sess.get_inputs()[0].ranges == {0: (1, 4)}
    # The session's own range narrows the artifact's.
    narrow = strider.InferenceSession(out, input_ranges={"image": {0: (2, 3)}})
    assert narrow.get_inputs()[0].ranges == {0: (2, 3)}
    assert sess.run(None, {"image": images(4)})[0].shape == (4, 10)
    with pytest.raises(StriderError, match="outside the range 1..4"):
        sess.run(None, {"image": images(5)})


def test_options_become_flags(resnet_block, tmp_path, capsys):
    out = strider.compile(
        resnet_block,
        str(tmp_path / "nhwc"),
        target="cpu-avx2",
        layout="nhwc",
        io_layout="nhwc",
        shapes={"image": (2, 3, 32, 32)},
        strict=True,
        svg=False,
        verbose=True,
    )
    assert "strider-compile:" in capsys.readouterr().out
    assert not (out / "layout.svg").exists()
    sess = strider.InferenceSession(out)
    (image,) = sess.get_inputs()
    assert image.shape == [2, 3, 32, 32]
    assert image.layout == "nhwc"
    x = images(2)
    np.testing.assert_allclose(
        sess.run(None, {"image": x})[0],
        strider.InferenceSession(resnet_block).run(None, {"image": x})[0],
        rtol=1e-5,
        atol=1e-6,
    )
    # Specialized to a batch of 2: another batch is refused.
    with pytest.raises(StriderError, match="has shape") as info:
        sess.run(None, {"image": images(1)})
    assert info.value.status == Status.TENSOR


def test_dims_and_shape_strings(resnet_block, tmp_path):
    strider.compile(resnet_block, tmp_path / "a", dims={"N": 4}, svg=False)
    sess = strider.InferenceSession(strider.compile(resnet_block, tmp_path / "b", shapes={"image": "1x3x32x32"}))
    assert sess.get_inputs()[0].shape == [1, 3, 32, 32]


def test_model_proto(resnet_block, tmp_path):
    out = strider.compile(onnx.load(resnet_block), tmp_path / "proto", svg=False)
    assert (out / "model.lir").is_file()


def test_tool_errors(resnet_block, tmp_path):
    with pytest.raises(StriderError, match="no-such.onnx") as info:
        strider.compile(tmp_path / "no-such.onnx", tmp_path / "x")
    assert isinstance(info.value, RuntimeError)
    assert info.value.status == Status.MODEL
    assert info.value.returncode != 0
    with pytest.raises(StriderError, match="dim 'M' is not a symbolic dim"):
        strider.compile(resnet_block, tmp_path / "y", dims={"M": 1})
    with pytest.raises(StriderError, match="cpu-x86"):
        strider.compile(resnet_block, tmp_path / "z", target="cpu-x86")
    assert not (tmp_path / "y").exists() and not (tmp_path / "z").exists()


def test_unknown_option(resnet_block, tmp_path):
    with pytest.raises(TypeError, match="unknown option 'shape'.*shapes"):
        strider.compile(resnet_block, tmp_path / "x", shape={"image": (1, 3, 32, 32)})
    with pytest.raises(TypeError, match="dims must be a dict"):
        strider.compile(resnet_block, tmp_path / "x", dims=["N=1"])
