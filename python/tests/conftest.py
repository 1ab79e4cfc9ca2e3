"""Fixtures of the strider package's tests: the sample model, ONNX Runtime
as the oracle, and small ONNX models written on the fly."""

import pathlib

import onnx
import onnxruntime
import pytest
from onnx import helper

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def resnet_block():
    """examples/resnet_block.onnx: input 'image' Nx3x32x32, output 'logits' Nx10."""
    return REPO_ROOT / "examples" / "resnet_block.onnx"


@pytest.fixture(scope="session")
def ort_run():
    """Runs a model file with ONNX Runtime: ort_run(path, feeds) -> outputs."""
    sessions = {}

    def run(path, feeds):
        key = str(path)
        if key not in sessions:
            sessions[key] = onnxruntime.InferenceSession(key, providers=["CPUExecutionProvider"])
        return sessions[key].run(None, feeds)

    return run


@pytest.fixture
def make_model(tmp_path):
    """Writes a one-graph ONNX model: make_model(nodes, inputs, outputs) -> path.

    inputs and outputs are (name, TensorProto type, shape) triples.
    """

    def make(nodes, inputs, outputs, name="model"):
        graph = helper.make_graph(
            nodes,
            name,
            [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
            [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8
        onnx.checker.check_model(model)
        path = tmp_path / f"{name}.onnx"
        onnx.save(model, path)
        return path

    return make

