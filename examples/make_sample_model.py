#!/usr/bin/env python3
"""Generate examples/resnet_block.onnx, the sample model of the quick start.

A small residual classifier (opset 13, symbolic batch dim N, deterministic
random weights): Conv-BN-Relu, a residual block with an Add, MaxPool,
GlobalAveragePool, Flatten and a Gemm head.

Usage: make_sample_model.py OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(out):
    rng = np.random.default_rng(20261122)

    def weight(name, *shape):
        return numpy_helper.from_array(
            (rng.standard_normal(shape) * 0.1).astype(np.float32), name)

    inits = [
        weight("conv1.w", 16, 3, 3, 3), weight("conv1.b", 16),
        numpy_helper.from_array(np.ones(16, np.float32), "bn1.scale"),
        weight("bn1.bias", 16), weight("bn1.mean", 16),
        numpy_helper.from_array(
            (1.0 + rng.random(16)).astype(np.float32), "bn1.var"),
        weight("conv2.w", 16, 16, 3, 3), weight("conv2.b", 16),
        weight("conv3.w", 16, 16, 3, 3), weight("conv3.b", 16),
        weight("fc.w", 10, 16), weight("fc.b", 10),
    ]
    nodes = [
        helper.make_node("Conv", ["image", "conv1.w", "conv1.b"], ["c1"],
                         name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization",
                         ["c1", "bn1.scale", "bn1.bias", "bn1.mean", "bn1.var"],
                         ["b1"], name="bn1"),
        helper.make_node("Relu", ["b1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1",
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "conv2.w", "conv2.b"], ["c2"],
                         name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("Conv", ["r2", "conv3.w", "conv3.b"], ["c3"],
                         name="conv3", pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c3", "p1"], ["sum"], name="residual"),
        helper.make_node("Relu", ["sum"], ["r3"], name="relu3"),
        helper.make_node("GlobalAveragePool", ["r3"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["logits"],
                         name="fc", transB=1),
    ]
    graph = helper.make_graph(
        nodes, "resnet_block",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT,
                                       ["N", 3, 32, 32])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                       ["N", 10])],
        inits)
    model = helper.make_model(graph, producer_name="strider-examples",
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, out)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
