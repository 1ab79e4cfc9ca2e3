#!/usr/bin/env python3
"""Write a directory in ONNX's backend-test format (model.onnx,
test_data_set_K/input_J.pb, output_J.pb) holding an Add model and two data
sets, for the strider-run --onnx-test lit test.

Usage: make_onnx_test.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(out):
    graph = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["sum"], name="add")], "add",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("sum", TensorProto.FLOAT, [2, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    os.makedirs(out, exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))
    rng = np.random.default_rng(0)
    for k in range(2):
        d = os.path.join(out, f"test_data_set_{k}")
        os.makedirs(d, exist_ok=True)
        a = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
        b = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
        for j, x in enumerate([a, b]):
            with open(os.path.join(d, f"input_{j}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(x).SerializeToString())
        with open(os.path.join(d, "output_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a + b, "sum").SerializeToString())


if __name__ == "__main__":
    main(sys.argv[1])
