#!/usr/bin/env python3
"""Write a small model shaped like third-party exports, for the strider-run
tests of run-time shape specialization.

Usage: make_dynamic_model.py OUT.onnx

The model has what real exports have and our generated set does not:
  * input dims that are a named symbol (N), anonymous (no dim_value or
    dim_param), dim_param "?" and dim_value -1;
  * a conv weight computed by ConstantOfShape from an initializer that is
    also listed as a graph input (ONNX's light model zoo);
  * a Range whose limit comes from Shape -> Gather -> Squeeze, added to the
    activations (positions along the width), and a Reshape whose target is
    built by Shape -> Gather -> Concat (three rounds of folding);
  * a value_info whose declared shape contradicts inference;
  * output names that are not plain file names ("feat:0", "logits/prob").
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(out):
    f32 = TensorProto.FLOAT
    x = helper.make_tensor_value_info("x", f32, ["N", 3, None, "?"])
    x.type.tensor_type.shape.dim[3].ClearField("dim_param")
    x.type.tensor_type.shape.dim[3].dim_value = -1
    wshape_in = helper.make_tensor_value_info("wshape", TensorProto.INT64, [4])
    inits = [
        numpy_helper.from_array(np.array([4, 3, 3, 3], np.int64), "wshape"),
        numpy_helper.from_array(np.array([3], np.int64), "i3"),
        numpy_helper.from_array(np.array([0], np.int64), "i0"),
        numpy_helper.from_array(np.array([4], np.int64), "c4"),
        numpy_helper.from_array(np.array([-1], np.int64), "m1"),
        numpy_helper.from_array(np.array(0, np.int64), "zero"),
        numpy_helper.from_array(np.array(1, np.int64), "one"),
        numpy_helper.from_array(np.array(0.01, np.float32), "scale"),
    ]
    nodes = [
        helper.make_node("ConstantOfShape", ["wshape"], ["w"], name="weights",
                         value=numpy_helper.from_array(
                             np.array([0.1], np.float32), "v")),
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Shape", ["c"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "i3"], ["wdim"], name="width"),
        helper.make_node("Squeeze", ["wdim", "i0"], ["wlen"], name="squeeze"),
        helper.make_node("Range", ["zero", "wlen", "one"], ["pos"],
                         name="positions"),
        helper.make_node("Cast", ["pos"], ["posf"], name="cast", to=f32),
        helper.make_node("Mul", ["posf", "scale"], ["poss"], name="scale_pos"),
        helper.make_node("Add", ["c", "poss"], ["a"], name="add_pos"),
        helper.make_node("Relu", ["a"], ["r"], name="relu"),
        helper.make_node("Gather", ["s", "i0"], ["n"], name="batch"),
        helper.make_node("Concat", ["n", "c4", "m1"], ["target"],
                         name="target", axis=0),
        helper.make_node("Reshape", ["r", "target"], ["feat:0"],
                         name="flatten"),
        helper.make_node("ReduceMean", ["feat:0"], ["logits/prob"],
                         name="mean", axes=[2], keepdims=0),
    ]
    graph = helper.make_graph(
        nodes, "dynamic", [x, wshape_in],
        [helper.make_tensor_value_info("feat:0", f32, ["N", 4, None]),
         helper.make_tensor_value_info("logits/prob", f32, ["N", 4])],
        inits,
        value_info=[helper.make_tensor_value_info("r", f32, [1, 4, 7])])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.save(model, out)


if __name__ == "__main__":
    main(sys.argv[1])
