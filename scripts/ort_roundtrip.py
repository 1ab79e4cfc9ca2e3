#!/usr/bin/env python3
"""Round-trip ONNX models through Strider and compare them under ONNX Runtime.

Every case is a small model built here with onnx.helper. For each:

    strider-translate --import-onnx M.onnx -o M.lir
    strider-opt M.lir -o M2.lir                 (textual IR round trip)
    strider-translate --export-onnx M2.lir -o E.onnx

then M.onnx and E.onnx run under ONNX Runtime on the same random inputs and
their outputs must agree (rtol 1e-5, atol 1e-6, NaNs equal). Each case is
also run as a *layout variant*: every rank-4 value of M.lir is given the
channels-last layout (the model's logic is unchanged), so the export has to
make every physical layout explicit with Transposes; rank-4 graph inputs and
outputs then have their physical (NHWC) shape in E.onnx, and the script feeds
and reads them transposed. Hand-written .lir cases with `relayout` nodes are
compared against the same graph without layouts.

Suites: `models` (conv blocks, old opsets, fp16, symbolic dims, ...),
`ops` (one model per op of include/strider/IR/Ops.def) and `layouts`
(hand-written .lir with relayouts). Prints one line per case and exits 1 if
any case fails.
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import zlib

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

RTOL = 1e-5
ATOL = 1e-6
# Value bound to every symbolic dim when making inputs.
SYMBOLIC_DIM_SIZE = 2

F32 = TensorProto.FLOAT
F16 = TensorProto.FLOAT16
I64 = TensorProto.INT64

NCHW_TO_NHWC = (0, 2, 3, 1)
NHWC_TO_NCHW = (0, 3, 1, 2)


# ---------------------------------------------------------------------------
# Model building helpers
# ---------------------------------------------------------------------------

def rng_for(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def ints(name, values):
    return init(name, np.array(values, dtype=np.int64))


def floats(name, values):
    return init(name, np.array(values, dtype=np.float32))


def rand(shape, seed=0, positive=False):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return np.abs(a) + 0.5 if positive else a


def tin(name, shape, elem=F32):
    return helper.make_tensor_value_info(name, elem, shape)


def tout(name, elem=F32, shape=None):
    return helper.make_tensor_value_info(name, elem, shape)


def model(name, nodes, inputs, outputs, inits=(), opset=18, ir_version=None,
          **model_fields):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="ort_roundtrip", **model_fields)
    if ir_version is None:
        ir_version = helper.find_min_ir_version_for(
            [helper.make_opsetid("", opset)])
    m.ir_version = ir_version
    return m


def node(op, inputs, outputs, name=None, **attrs):
    return helper.make_node(op, inputs, outputs, name=name or outputs[0],
                            **attrs)


def unary(op, opset=18, shape=(2, 3, 4, 5), **attrs):
    return model(op, [node(op, ["x"], ["y"], **attrs)],
                 [tin("x", list(shape))], [tout("y")], opset=opset)


def binary(op, opset=18):
    return model(op, [node(op, ["x", "b"], ["t"]), node(op, ["t", "z"], ["y"])],
                 [tin("x", [2, 3, 4, 5]), tin("z", [2, 3, 4, 5])],
                 [tout("y")], [floats("b", rand((3, 1, 1), 1, True))],
                 opset=opset)


# ---------------------------------------------------------------------------
# Suite "models": blocks, old opsets, fp16, symbolic dims
# ---------------------------------------------------------------------------

def m_conv_bn_relu_pool():
    return model("conv_bn_relu_pool", [
        node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        node("BatchNormalization", ["c", "s", "bb", "mean", "var"], ["n"],
             epsilon=1e-3),
        node("Relu", ["n"], ["r"]),
        node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2]),
    ], [tin("x", [1, 3, 16, 16])], [tout("y")], [
        floats("w", rand((8, 3, 3, 3), 1)), floats("b", rand(8, 2)),
        floats("s", rand(8, 3)), floats("bb", rand(8, 4)),
        floats("mean", rand(8, 5)), floats("var", rand(8, 6, True)),
    ], opset=13)


def m_residual():
    return model("residual", [
        node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        node("Relu", ["c1"], ["r1"]),
        node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
        node("Add", ["c2", "x"], ["s"]),
        node("Relu", ["s"], ["y"]),
    ], [tin("x", [2, 4, 8, 8])], [tout("y")], [
        floats("w1", rand((4, 4, 3, 3), 1)), floats("w2", rand((4, 4, 3, 3), 2)),
        floats("b2", rand(4, 3)),
    ], opset=17)


def m_concat_split_slice_pad_resize():
    return model("concat_split_slice_pad_resize", [
        node("Concat", ["x", "z"], ["cat"], axis=1),
        node("Split", ["cat", "split"], ["s0", "s1"], axis=1),
        node("Slice", ["s0", "starts", "ends", "axes", "steps"], ["sl"]),
        node("Pad", ["sl", "pads"], ["p"], mode="reflect"),
        node("Resize", ["p", "", "scales"], ["up"], mode="linear"),
        node("Resize", ["s1", "", "", "sizes"], ["y1"], mode="nearest"),
    ], [tin("x", [1, 2, 8, 8]), tin("z", [1, 3, 8, 8])],
        [tout("up"), tout("y1")], [
        ints("split", [3, 2]), ints("starts", [0, 1]), ints("ends", [8, 7]),
        ints("axes", [2, 3]), ints("steps", [2, 1]), ints("pads", [0, 0, 1, 1,
                                                                   0, 0, 1, 1]),
        floats("scales", [1, 1, 2, 2]), ints("sizes", [1, 2, 12, 4]),
    ], opset=13)


def m_flatten_gemm():
    return model("flatten_gemm", [
        node("GlobalAveragePool", ["x"], ["g"]),
        node("Flatten", ["g"], ["f"], axis=1),
        node("Gemm", ["f", "w", "b"], ["y"], transB=1, alpha=0.5, beta=2.0),
    ], [tin("x", [2, 16, 5, 5])], [tout("y")], [
        floats("w", rand((10, 16), 1)), floats("b", rand(10, 2)),
    ], opset=13)


def m_reduce_softmax_transpose_reshape():
    return model("reduce_softmax_transpose_reshape", [
        node("ReduceMean", ["x"], ["m"], axes=[2, 3], keepdims=1),
        node("Sub", ["x", "m"], ["d"]),
        node("ReduceSum", ["d", "axes1"], ["rs"], keepdims=0),
        node("ReduceMax", ["x"], ["rm"], axes=[-1], keepdims=0),
        node("Softmax", ["rm"], ["sm"], axis=-1),
        node("Transpose", ["d"], ["t"], perm=[0, 2, 3, 1]),
        node("Reshape", ["t", "shape"], ["y"]),
    ], [tin("x", [2, 3, 4, 5])], [tout("y"), tout("rs"), tout("sm")],
        [ints("axes1", [1]), ints("shape", [0, -1, 3])], opset=13)


def m_opset7():
    # Upsample, Clip, Pad and Unsqueeze in their attribute forms; the
    # importer makes a Resize of the Upsample, so the export needs opset 11.
    return model("opset7", [
        node("Upsample", ["x"], ["u"], scales=[1.0, 1.0, 2.0, 2.0],
             mode="nearest"),
        node("Clip", ["u"], ["c"], min=-0.5, max=0.5),
        node("Pad", ["c"], ["p"], pads=[0, 0, 1, 2, 0, 0, 2, 1], value=0.25),
        node("Conv", ["p", "w"], ["v"]),
        node("BatchNormalization", ["v", "s", "bb", "mean", "var"], ["n"]),
        node("Softmax", ["n"], ["y"], axis=1),
        node("Unsqueeze", ["y"], ["z"], axes=[0]),
        node("Reshape", ["z", "shape"], ["r"]),
    ], [tin("x", [1, 2, 3, 3])], [tout("z"), tout("r")], [
        floats("w", rand((4, 2, 3, 3), 1)), floats("s", rand(4, 2)),
        floats("bb", rand(4, 3)), floats("mean", rand(4, 4)),
        floats("var", rand(4, 5, True)), ints("shape", [1, -1]),
    ], opset=7, ir_version=3)


def m_opset7_keep():
    # Only attribute forms the exporter can write back: opset 7 is kept.
    return model("opset7_keep", [
        node("Clip", ["x"], ["c"], min=-0.5, max=0.5),
        node("Pad", ["c"], ["p"], pads=[0, 0, 1, 2, 0, 0, 2, 1], value=0.25),
        node("Squeeze", ["p"], ["q"], axes=[0]),
        node("Unsqueeze", ["q"], ["u"], axes=[0]),
        node("Softmax", ["u"], ["sm"], axis=3),
        node("ReduceMean", ["sm"], ["y"], axes=[1], keepdims=0),
        node("Split", ["x"], ["s0", "s1"], axis=1, split=[1, 2]),
    ], [tin("x", [1, 3, 4, 5])], [tout("y"), tout("s0"), tout("s1")],
        opset=7, ir_version=3)


def m_opset11():
    return model("opset11", [
        node("Clip", ["x", "lo", "hi"], ["c"]),
        node("Pad", ["c", "pads", "pv"], ["p"]),
        node("Split", ["p"], ["s0", "s1"], axis=-3, split=[1, 2]),
        node("Squeeze", ["s0"], ["q"], axes=[1]),
        node("Unsqueeze", ["q"], ["u"], axes=[-1]),
        node("ReduceSum", ["s1"], ["rs"], axes=[-1], keepdims=1),
        node("Resize", ["rs", "roi", "scales"], ["up"], mode="nearest",
             coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
        node("Softmax", ["u"], ["sm"], axis=-1),
    ], [tin("x", [1, 3, 4, 5])], [tout("sm"), tout("up")], [
        floats("lo", -0.3), floats("hi", 0.6), ints("pads", [0, 0, 1, 1,
                                                               0, 0, 1, 1]),
        floats("pv", 0.5), floats("roi", []), floats("scales", [1, 1, 2, 2]),
    ], opset=11)


def m_tf_half_pixel_for_nn():
    """Resize-11's tf_half_pixel_for_nn with the two nearest modes the
    importer rewrites (up by 9/6 and down by 4/7: ties and clamping)."""
    return model("tf_half_pixel_for_nn", [
        node("Resize", ["x", "roi", "none", "up_sizes"], ["up"],
             mode="nearest",
             coordinate_transformation_mode="tf_half_pixel_for_nn",
             nearest_mode="floor"),
        node("Resize", ["x", "roi", "none", "down_sizes"], ["down"],
             mode="nearest",
             coordinate_transformation_mode="tf_half_pixel_for_nn"),
    ], [tin("x", [1, 2, 6, 7])], [tout("up"), tout("down")], [
        floats("roi", []), floats("none", []), ints("up_sizes", [1, 2, 9, 11]),
        ints("down_sizes", [1, 2, 4, 4]),
    ], opset=11)


def m_fp16():
    return model("fp16", [
        node("Cast", ["x"], ["xh"], to=F16),
        node("Add", ["xh", "b"], ["a"]),
        node("Mul", ["a", "s"], ["m"]),
        node("Cast", ["m"], ["y"], to=F32),
        node("Cast", ["w"], ["wf"], to=F32),
        node("Add", ["y", "wf"], ["z"]),
    ], [tin("x", [2, 3, 4])], [tout("z"), tout("m", F16)], [
        init("b", rand((3, 4), 1).astype(np.float16)),
        init("s", np.float16(1.5)),
        init("w", rand((2, 3, 4), 2).astype(np.float16)),
    ], opset=13)


def m_symbolic_batch():
    return model("symbolic_batch", [
        node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
        node("Relu", ["c"], ["r"]),
        node("GlobalAveragePool", ["r"], ["g"]),
        node("Flatten", ["g"], ["f"]),
        node("MatMul", ["f", "m"], ["y"]),
    ], [tin("x", ["N", 3, 8, 8])], [tout("y", shape=["N", 5])], [
        floats("w", rand((6, 3, 3, 3), 1)), floats("m", rand((6, 5), 2)),
    ], opset=17)


def m_metadata():
    m = model("metadata", [node("Relu", ["x"], ["y"], doc_string="a relu")],
              [tin("x", [3])], [tout("y")], opset=14,
              doc_string="model doc", domain="org.strider.test",
              model_version=7, producer_version="1.2")
    onnx.helper.set_model_props(m, {"author": "strider", "purpose": "test"})
    return m


def m_initializer_inputs():
    # Initializers that are also graph inputs (overridable defaults).
    m = model("initializer_inputs", [node("Add", ["x", "b"], ["y"])],
              [tin("x", [2, 3]), tin("b", [3])], [tout("y")],
              [floats("b", [1, 2, 3])], opset=13)
    return m


MODELS = [m_conv_bn_relu_pool, m_residual, m_concat_split_slice_pad_resize,
          m_flatten_gemm, m_reduce_softmax_transpose_reshape, m_opset7,
          m_opset7_keep, m_opset11, m_tf_half_pixel_for_nn, m_fp16,
          m_symbolic_batch, m_metadata,
          m_initializer_inputs]

# Opset the export must use, where it matters.
EXPECTED_OPSET = {"opset7": 11, "opset7_keep": 7, "opset11": 11,
                  "conv_bn_relu_pool": 13}


# ---------------------------------------------------------------------------
# Suite "ops": one model per op of Ops.def
# ---------------------------------------------------------------------------

def op_cases():
    x4 = [tin("x", [2, 3, 6, 6])]
    cases = [
        model("Conv", [node("Conv", ["x", "w", "b"], ["y"], pads=[1, 0, 1, 2],
                            strides=[2, 1], dilations=[1, 2])], x4, [tout("y")],
              [floats("w", rand((4, 3, 3, 3), 1)), floats("b", rand(4, 2))]),
        model("Conv_group", [node("Conv", ["x", "w"], ["y"], group=3,
                                  auto_pad="SAME_UPPER")], x4, [tout("y")],
              [floats("w", rand((6, 1, 3, 3), 1))]),
        model("ConvTranspose", [node("ConvTranspose", ["x", "w", "b"], ["y"],
                                     strides=[2, 2], pads=[1, 1, 1, 1],
                                     output_padding=[1, 1])],
              x4, [tout("y")], [floats("w", rand((3, 2, 3, 3), 1)),
                                floats("b", rand(2, 2))]),
        model("BatchNormalization", [node("BatchNormalization",
                                          ["x", "s", "b", "m", "v"], ["y"])],
              x4, [tout("y")], [floats("s", rand(3, 1)), floats("b", rand(3, 2)),
                                floats("m", rand(3, 3)),
                                floats("v", rand(3, 4, True))]),
        model("InstanceNormalization", [node("InstanceNormalization",
                                             ["x", "s", "b"], ["y"],
                                             epsilon=1e-4)],
              x4, [tout("y")], [floats("s", rand(3, 1)), floats("b", rand(3, 2))]),
        model("LayerNormalization", [node("LayerNormalization",
                                          ["x", "s", "b"], ["y", "m", "r"],
                                          axis=1, epsilon=1e-3)],
              x4, [tout("y"), tout("m"), tout("r")],
              [floats("s", rand((3, 6, 6), 1)), floats("b", rand(6, 2))],
              opset=17),
        model("LayerNormalization_no_bias",
              [node("LayerNormalization", ["x", "s"], ["y"])],
              x4, [tout("y")], [floats("s", rand(6, 1))], opset=17),
        model("LRN", [node("LRN", ["x"], ["y"], size=3, alpha=0.02, beta=0.6,
                           bias=1.5)],
              x4, [tout("y")]),
        model("MaxPool", [node("MaxPool", ["x"], ["y", "i"], kernel_shape=[3, 3],
                               strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1)],
              x4, [tout("y"), tout("i", I64)]),
        model("AveragePool", [node("AveragePool", ["x"], ["y"],
                                   kernel_shape=[2, 3], strides=[2, 1],
                                   pads=[1, 1, 0, 1], count_include_pad=1)],
              x4, [tout("y")]),
        unary("GlobalAveragePool"),
        unary("GlobalMaxPool"),
        unary("Relu"),
        model("Relu_int32", [node("Relu", ["x"], ["y"])],
              [tin("x", [2, 3, 4], TensorProto.INT32)],
              [tout("y", TensorProto.INT32)]),
        unary("LeakyRelu", alpha=0.3),
        model("Clip", [node("Clip", ["x", "lo", "hi"], ["y"])], x4, [tout("y")],
              [floats("lo", -0.2), floats("hi", 0.7)]),
        model("Clip_min_only", [node("Clip", ["x", "lo"], ["y"])], x4,
              [tout("y")], [floats("lo", -0.2)], opset=11),
        unary("Sigmoid"),
        unary("HardSigmoid", alpha=0.3, beta=0.4),
        unary("HardSwish"),
        unary("Tanh"),
        unary("Elu", alpha=0.7),
        unary("Selu", alpha=1.5, gamma=1.2),
        unary("Softplus"),
        unary("Softsign"),
        unary("Celu", alpha=0.6),
        unary("Erf"),
        unary("Gelu", opset=20),
        model("Gelu_tanh", [node("Gelu", ["x"], ["y"], approximate="tanh")],
              [tin("x", [2, 3, 4, 5])], [tout("y")], opset=20),
        unary("Exp"),
        unary("Sqrt"),  # NaN for negative inputs, compared as equal
        model("Cast", [node("Cast", ["x"], ["y"], to=TensorProto.DOUBLE)], x4,
              [tout("y", TensorProto.DOUBLE)]),
        unary("Identity"),
        model("Dropout", [node("Dropout", ["x", "r"], ["y"])], x4,
              [tout("y")], [floats("r", 0.3)]),
        model("PRelu", [node("PRelu", ["x", "s"], ["y"])], x4, [tout("y")],
              [floats("s", rand((3, 1, 1), 1))]),
        binary("Add"), binary("Sub"), binary("Mul"), binary("Div"),
        model("Pow", [node("Pow", ["x", "e"], ["y"])], x4, [tout("y")],
              [floats("e", 2.0)]),
        model("Max", [node("Max", ["x", "a", "b"], ["y"])], x4, [tout("y")],
              [floats("a", rand((3, 1, 1), 1)), floats("b", rand((6,), 2))]),
        model("Max_int64", [node("Max", ["x", "a"], ["y"])],
              [tin("x", [2, 3, 4], I64)], [tout("y", I64)],
              [ints("a", [1, 0, 2, 1])]),
        model("Min", [node("Min", ["x", "a"], ["y"])], x4, [tout("y")],
              [floats("a", rand((1, 6), 1))]),
        model("Sum", [node("Sum", ["x", "x", "a"], ["y"])], x4, [tout("y")],
              [floats("a", rand((3, 6, 6), 1))]),
        unary("Neg"), unary("Abs"), unary("Reciprocal"), unary("Floor"),
        unary("Ceil"), unary("Log"),  # NaN for negative inputs
        unary("Sin"), unary("Cos"),
        # Inverse functions out of their domains give NaN (compared as
        # equal); Acosh reads 1 + |x|, inside its domain.
        unary("Tan"), unary("Asin"), unary("Acos"), unary("Atan"),
        unary("Sinh"), unary("Cosh"), unary("Asinh"), unary("Atanh"),
        model("Acosh", [node("Abs", ["x"], ["a"]), node("Add", ["a", "one"], ["b"]),
                        node("Acosh", ["b"], ["y"])], x4, [tout("y")],
              [floats("one", 1.0)]),
        unary("Sign"), unary("Round"),
        unary("ThresholdedRelu", alpha=0.3),
        unary("Shrink", lambd=0.6, bias=0.2),
        model("Mod", [node("Mod", ["x", "d"], ["y"], fmod=1)], x4,
              [tout("y")], [floats("d", rand((3, 1, 1), 3, True))]),
        model("Mod_int64", [node("Mod", ["x", "d"], ["y"])],
              [tin("x", [2, 3, 4], I64)], [tout("y", I64)],
              [ints("d", [3, -2, 5, -7])]),
        model("BitShift", [node("BitShift", ["x", "s"], ["y"],
                                direction="LEFT")],
              [tin("x", [2, 3], TensorProto.UINT8)],
              [tout("y", TensorProto.UINT8)],
              [init("s", np.array([1, 3, 7], dtype=np.uint8))]),
        model("Xor", [node("Less", ["x", "a"], ["l"]),
                      node("Greater", ["x", "b"], ["g"]),
                      node("Xor", ["l", "g"], ["y"])],
              x4, [tout("y", TensorProto.BOOL)],
              [floats("a", rand((3, 1, 1), 1)), floats("b", rand((6,), 2))]),
        model("IsNaN_IsInf", [node("Div", ["x", "z"], ["q"]),
                              node("IsNaN", ["q"], ["n"]),
                              node("IsInf", ["q"], ["y"], detect_negative=0),
                              node("Or", ["n", "y"], ["o"])],
              x4, [tout("o", TensorProto.BOOL)],
              [floats("z", np.array([0.0, 1.0, -0.0], np.float32)
                      .reshape(3, 1, 1))]),
        model("Neg_int64", [node("Neg", ["x"], ["y"])],
              [tin("x", [2, 3, 4], I64)], [tout("y", I64)]),
        *[model(op, [node(op, ["x", "a"], ["y"])], x4,
                [tout("y", TensorProto.BOOL)],
                [floats("a", rand((3, 1, 1), 1))])
          for op in ["Equal", "Less", "LessOrEqual", "Greater",
                     "GreaterOrEqual"]],
        model("Equal_int64", [node("Equal", ["x", "a"], ["y"])],
              [tin("x", [2, 3, 4], I64)], [tout("y", TensorProto.BOOL)],
              [ints("a", [1, 0, 2, 1])]),
        model("Logic", [node("Less", ["x", "a"], ["l"]),
                        node("Greater", ["x", "b"], ["g"]),
                        node("And", ["l", "g"], ["n"]),
                        node("Not", ["n"], ["o"]),
                        node("Or", ["o", "l"], ["y"])],
              x4, [tout("y", TensorProto.BOOL)],
              [floats("a", rand((3, 1, 1), 1)), floats("b", rand((6,), 2))]),
        model("Where", [node("Less", ["x", "a"], ["c"]),
                        node("Where", ["c", "x", "b"], ["y"])],
              x4, [tout("y")],
              [floats("a", rand((3, 1, 1), 1)), floats("b", rand((6,), 2))]),
        model("Concat", [node("Concat", ["x", "z", "x"], ["y"], axis=-1)],
              x4 + [tin("z", [2, 3, 6, 2])], [tout("y")]),
        model("Split", [node("Split", ["x", "s"], ["a", "b"], axis=2)], x4,
              [tout("a"), tout("b")], [ints("s", [2, 4])]),
        model("Split_num_outputs", [node("Split", ["x"], ["a", "b", "c"],
                                         axis=1, num_outputs=3)],
              x4, [tout("a"), tout("b"), tout("c")]),
        model("Split_uneven", [node("Split", ["x"], ["a", "b"], axis=3,
                                    num_outputs=2)],
              [tin("x", [2, 3, 6, 5])], [tout("a"), tout("b")]),
        model("Slice", [node("Slice", ["x", "st", "en", "ax", "sp"], ["y"])],
              x4, [tout("y")], [ints("st", [5, 1]), ints("en", [0, 100]),
                                ints("ax", [-1, 1]), ints("sp", [-2, 1])]),
        model("Pad", [node("Pad", ["x", "p", "v"], ["y"])], x4, [tout("y")],
              [ints("p", [0, 1, 2, 0, 0, 0, 1, 3]), floats("v", 1.5)]),
        model("Pad_edge_axes", [node("Pad", ["x", "p", "", "a"], ["y"],
                                     mode="edge")],
              x4, [tout("y")], [ints("p", [1, 2, 2, 1]), ints("a", [2, 3])]),
        model("Resize_linear", [node("Resize", ["x", "", "sc"], ["y"],
                                     mode="linear",
                                     coordinate_transformation_mode="half_pixel")],
              x4, [tout("y")], [floats("sc", [1, 1, 1.5, 2])]),
        model("Resize_nearest_sizes", [node("Resize", ["x", "", "", "sz"], ["y"],
                                            mode="nearest",
                                            nearest_mode="round_prefer_ceil")],
              x4, [tout("y")], [ints("sz", [2, 3, 9, 4])]),
        model("Resize_cubic", [node("Resize", ["x", "", "sc"], ["y"],
                                    mode="cubic", cubic_coeff_a=-0.5,
                                    coordinate_transformation_mode="align_corners")],
              x4, [tout("y")], [floats("sc", [1, 1, 2, 2])], opset=13),
        model("DepthToSpace", [node("DepthToSpace", ["x"], ["y"], blocksize=2,
                                    mode="CRD")],
              [tin("x", [1, 8, 3, 3])], [tout("y")]),
        model("DepthToSpace_DCR", [node("DepthToSpace", ["x"], ["y"],
                                        blocksize=2)],
              [tin("x", [1, 8, 3, 3])], [tout("y")], opset=11),
        unary("SpaceToDepth", blocksize=2, shape=(1, 2, 4, 6)),
        unary("Softmax", axis=1),
        unary("LogSoftmax", axis=2),
        model("Softmax_opset11_last", [node("Softmax", ["x"], ["y"], axis=3)],
              x4, [tout("y")], opset=11),
        model("ReduceMean", [node("ReduceMean", ["x", "a"], ["y"],
                                  keepdims=0)],
              x4, [tout("y")], [ints("a", [1, -1])]),
        model("ReduceMax", [node("ReduceMax", ["x", "a"], ["y"])], x4,
              [tout("y")], [ints("a", [2])]),
        model("ReduceSum", [node("ReduceSum", ["x"], ["y"], keepdims=0)], x4,
              [tout("y")]),
        model("ReduceSum_noop", [node("ReduceSum", ["x", "a"], ["y"],
                                      noop_with_empty_axes=1)],
              x4, [tout("y")], [ints("a", [])]),
        model("ReduceMin", [node("ReduceMin", ["x", "a"], ["y"], keepdims=0)],
              x4, [tout("y")], [ints("a", [1])]),
        model("ReduceProd", [node("ReduceProd", ["x", "a"], ["y"])], x4,
              [tout("y")], [ints("a", [2, 3])]),
        model("ReduceL2", [node("ReduceL2", ["x"], ["y"], keepdims=0)], x4,
              [tout("y")]),
        model("ReduceSumSquare", [node("ReduceSumSquare", ["x", "a"], ["y"])],
              x4, [tout("y")], [ints("a", [-1])]),
        model("ReduceL2_opset13", [node("ReduceL2", ["x"], ["y"], axes=[1])],
              x4, [tout("y")], opset=13),
        model("ArgMax", [node("ArgMax", ["x"], ["y"], axis=-1, keepdims=0,
                              select_last_index=1)], x4, [tout("y", I64)]),
        model("ArgMin", [node("ArgMin", ["x"], ["y"], axis=1)], x4,
              [tout("y", I64)]),
        model("Gather", [node("Gather", ["x", "i"], ["y"], axis=1)], x4,
              [tout("y")], [ints("i", [[2, 0], [1, -1]])]),
        model("GatherElements",
              [node("GatherElements", ["x", "i"], ["y"], axis=2)], x4,
              [tout("y")], [ints("i", np.tile([[[0], [-1], [2]]],
                                              (2, 3, 1, 5)))]),
        model("ScatterElements", [node("ScatterElements", ["x", "i", "u"],
                                       ["y"], axis=1)], x4, [tout("y")],
              [ints("i", np.tile([[[[2]], [[0]]]], (2, 1, 4, 5))),
               floats("u", rand((2, 2, 4, 5), 1))], opset=13),
        model("ScatterElements_max", [
            node("ScatterElements", ["x", "i", "u"], ["y"], axis=-1,
                 reduction="max")], x4, [tout("y")],
              [ints("i", np.tile([1, -1, 1], (2, 3, 4, 1))),
               floats("u", rand((2, 3, 4, 3), 2))]),
        # A Hann-like window, frames overlapping by half.
        model("STFT", [node("STFT", ["x", "s", "w"], ["y"])],
              [tin("x", [2, 64, 1])], [tout("y")],
              [init("s", np.array(8, dtype=np.int64)),
               floats("w", 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(16) / 16))],
              opset=17),
        model("Expand", [node("Expand", ["x", "s"], ["y"])],
              [tin("x", [3, 1, 6])], [tout("y")], [ints("s", [2, 3, 4, 6])]),
        model("Reshape", [node("Reshape", ["x", "s"], ["y"])], x4, [tout("y")],
              [ints("s", [0, -1, 12])]),
        model("Flatten", [node("Flatten", ["x"], ["y"], axis=2)], x4,
              [tout("y")]),
        model("Squeeze", [node("Squeeze", ["x", "a"], ["y"])],
              [tin("x", [2, 1, 6, 1])], [tout("y")], [ints("a", [1, -1])]),
        model("Unsqueeze", [node("Unsqueeze", ["x", "a"], ["y"])], x4,
              [tout("y")], [ints("a", [0, -1])]),
        unary("Transpose", perm=[0, 3, 1, 2]),
        model("Gemm", [node("Gemm", ["a", "b", "c"], ["y"], transA=1,
                            alpha=0.7, beta=0.3)],
              [tin("a", [4, 3])], [tout("y")],
              [floats("b", rand((4, 5), 1)), floats("c", rand((1, 5), 2))]),
        model("Gemm_no_c", [node("Gemm", ["a", "b"], ["y"], transB=1)],
              [tin("a", [3, 4])], [tout("y")], [floats("b", rand((5, 4), 1))]),
        model("MatMul", [node("MatMul", ["a", "b"], ["y"])],
              [tin("a", [2, 3, 4]), tin("b", [4, 5])], [tout("y")]),
        # Attention scores (rank 4: the layout variant goes through it
        # with Transposes), '...' broadcast in the implicit form, and a
        # diagonal of a constant scaled by a reduction.
        model("Einsum", [node("Einsum", ["q", "k"], ["y"],
                              equation="bhqd,bhkd->bhqk")],
              [tin("q", [2, 3, 5, 4]), tin("k", [2, 3, 6, 4])], [tout("y")],
              opset=12),
        model("Einsum_implicit_ellipsis",
              [node("Einsum", ["a", "b"], ["y"], equation="...ij,...jk")],
              [tin("a", [2, 1, 3, 4]), tin("b", [1, 5, 4, 2])], [tout("y")]),
        model("Einsum_diagonal_sum", [
            node("Einsum", ["m"], ["d"], equation="ii->i"),
            node("Einsum", ["x", "d"], ["y"], equation="bij,i->bj")],
              [tin("x", [2, 4, 3])], [tout("y")], [floats("m", rand((4, 4), 1))]),
        model("Constant", [
            helper.make_node("Constant", [], ["c"], name="c",
                             value=init("cv", rand((3, 1, 6), 1))),
            node("Add", ["x", "c"], ["y"])], x4, [tout("y")]),
        model("ConstantOfShape", [
            node("Shape", ["x"], ["s"]),
            node("ConstantOfShape", ["s"], ["c"],
                 value=init("v", np.array([2.5], dtype=np.float32))),
            node("Mul", ["x", "c"], ["y"])], x4, [tout("y")]),
        model("Shape", [node("Shape", ["x"], ["y"], start=1, end=-1)],
              x4, [tout("y", I64)]),
        # Size of an activation (a normalization by the element count),
        # and the lower triangle of each 6 x 6 plane from diagonal 1.
        model("Size", [node("Size", ["x"], ["n"]),
                       node("Cast", ["n"], ["nf"], to=F32),
                       node("Div", ["x", "nf"], ["y"])], x4, [tout("y")]),
        model("QuantizeLinear_DequantizeLinear",
              [node("QuantizeLinear", ["x", "s", "z"], ["q"]),
               node("DequantizeLinear", ["q", "s", "z"], ["y"])], x4,
              [tout("y")],
              [floats("s", 0.02), init("z", np.array(128, dtype=np.uint8))]),
        # A QOperator conv between quantization steps: u8 activations,
        # per-channel s8 weights and an i32 bias.
        model("QLinearConv",
              [node("QuantizeLinear", ["x", "xs", "xz"], ["q"]),
               node("QLinearConv", ["q", "xs", "xz", "w", "ws", "wz", "ys",
                                    "yz", "b"], ["qy"], pads=[1, 1, 1, 1]),
               node("DequantizeLinear", ["qy", "ys", "yz"], ["y"])], x4,
              [tout("y")],
              [floats("xs", 0.02), init("xz", np.array(128, dtype=np.uint8)),
               init("w", (rand((4, 3, 3, 3), 31) * 100).astype(np.int8)),
               floats("ws", [0.01, 0.02, 0.015, 0.005]),
               init("wz", np.zeros(4, dtype=np.int8)),
               floats("ys", 0.05), init("yz", np.array(100, dtype=np.uint8)),
               init("b", np.array([10, -20, 30, 0], dtype=np.int32))]),
        # Dynamic quantization's conv: u8 activations quantized at run
        # time, u8 weights with their zero point, the i32 sums.
        model("ConvInteger",
              [node("DynamicQuantizeLinear", ["x"], ["q", "qs", "qz"]),
               node("ConvInteger", ["q", "w", "qz", "wz"], ["y"],
                    pads=[1, 1, 1, 1], strides=[2, 1])], x4,
              [tout("y", TensorProto.INT32)],
              [init("w", np.clip(rand((4, 3, 3, 3), 32) * 60 + 128, 0,
                                  255).astype(np.uint8)),
               init("wz", np.array(131, dtype=np.uint8))]),
        model("QuantizeLinear_per_axis",
              [node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=1)], x4,
              [tout("y", TensorProto.INT8)],
              [floats("s", [0.01, 0.02, 0.05]),
               init("z", np.array([0, -4, 9], dtype=np.int8))]),
        model("GatherND", [node("GatherND", ["x", "i"], ["y"])], x4,
              [tout("y")], [ints("i", [[1, 2], [0, -1]])]),
        model("ScatterND", [node("ScatterND", ["x", "i", "u"], ["y"],
                                 reduction="add")], x4, [tout("y")],
              [ints("i", [[1, 2], [0, 0], [1, 2]]),
               floats("u", rand((3, 6, 6), 4))], opset=18),
        model("CumSum", [node("CumSum", ["x", "a"], ["y"], exclusive=1,
                              reverse=1)], x4, [tout("y")],
              [init("a", np.array(2, dtype=np.int64))]),
        # The condition on the data (exported as is: only sessions need it
        # to fold); the branches read x, the else branch a constant too.
        model("If", [node("ReduceSum", ["x"], ["s"], keepdims=0),
                     node("Greater", ["s", "z"], ["c"]),
                     helper.make_node(
                         "If", ["c"], ["y"], name="y",
                         then_branch=helper.make_graph(
                             [node("Relu", ["x"], ["t"])], "then", [],
                             [tout("t", shape=[2, 3, 6, 6])]),
                         else_branch=helper.make_graph(
                             [node("Mul", ["x", "k"], ["e"])], "else", [],
                             [tout("e", shape=[2, 3, 6, 6])],
                             [floats("k", rand((6,), 5))]))],
              x4, [tout("y")], [floats("z", 0.0)]),
        # Grid points inside and up to half the image outside it.
        model("GridSample", [node("GridSample", ["x", "g"], ["y"],
                                  mode="bicubic", padding_mode="reflection",
                                  align_corners=1)], x4, [tout("y")],
              [floats("g", rand((2, 4, 5, 2), 6) * 0.75)], opset=16),
        model("GridSample_20", [node("GridSample", ["x", "g"], ["y"],
                                     mode="linear", padding_mode="border")],
              x4, [tout("y")], [floats("g", rand((2, 3, 7, 2), 7) * 0.75)],
              opset=20),
        model("Trilu", [node("Trilu", ["x", "k"], ["y"], upper=0)], x4,
              [tout("y")], [ints("k", 1)]),
        model("TopK", [node("TopK", ["x", "k"], ["v", "i"], axis=1,
                            largest=0)], x4, [tout("v"), tout("i", I64)],
              [ints("k", [2])]),
        model("Tile", [node("Tile", ["x", "r"], ["y"])], x4, [tout("y")],
              [ints("r", [1, 2, 1, 3])]),
        model("LSTM", [node("LSTM", ["x", "w", "r", "b", "l", "h", "c", "p"],
                            ["y", "yh", "yc"], direction="bidirectional",
                            hidden_size=4)],
              [tin("x", [5, 2, 3])], [tout("y"), tout("yh"), tout("yc")],
              [floats("w", rand((2, 16, 3), 1)), floats("r", rand((2, 16, 4), 2)),
               floats("b", rand((2, 32), 3)),
               init("l", np.array([5, 3], dtype=np.int32)),
               floats("h", rand((2, 2, 4), 4)), floats("c", rand((2, 2, 4), 5)),
               floats("p", rand((2, 12), 6))]),
        # ONNX Runtime runs no batch-major (layout = 1) LSTM.
        model("LSTM_reverse_clip", [node("LSTM", ["x", "w", "r"], ["", "yh"],
                                         direction="reverse", hidden_size=3,
                                         clip=0.8)],
              [tin("x", [4, 2, 3])], [tout("yh")],
              [floats("w", rand((1, 12, 3), 1)),
               floats("r", rand((1, 12, 3), 2))]),
        model("GRU", [node("GRU", ["x", "w", "r", "b", "l", "h"], ["y", "yh"],
                           direction="bidirectional", hidden_size=4,
                           linear_before_reset=1)],
              [tin("x", [5, 2, 3])], [tout("y"), tout("yh")],
              [floats("w", rand((2, 12, 3), 1)), floats("r", rand((2, 12, 4), 2)),
               floats("b", rand((2, 24), 3)),
               init("l", np.array([2, 5], dtype=np.int32)),
               floats("h", rand((2, 2, 4), 4))]),
        model("GRU_reverse", [node("GRU", ["x", "w", "r"], ["", "yh"],
                                   direction="reverse", hidden_size=3)],
              [tin("x", [4, 2, 3])], [tout("yh")],
              [floats("w", rand((1, 9, 3), 1)),
               floats("r", rand((1, 9, 3), 2))]),
        # Positions along the last dim, as exported position encodings do.
        model("Range", [
            node("Shape", ["x"], ["s"], start=-1),
            node("Squeeze", ["s", "a0"], ["w"]),
            node("Range", ["zero", "w", "one"], ["r"]),
            node("Cast", ["r"], ["rf"], to=F32),
            node("Add", ["x", "rf"], ["y"])], x4, [tout("y")],
            [ints("a0", [0]), ints("zero", 0), ints("one", 1)]),
        # Ops outside the table: kept as opaque nodes.
        model("Opaque", [node("LpNormalization", ["x"], ["a"], axis=1),
                         node("Atan", ["a"], ["n"]),
                         node("Relu", ["n"], ["y"])], x4,
              [tout("y", shape=[2, 3, 6, 6])]),
    ]
    return cases


# Ops of Ops.def that the `ops` suite must cover (relayout: `layouts`).
def ops_def_names():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "include", "strider", "IR", "Ops.def")
    with open(path) as f:
        return re.findall(r'^STRIDER_OP\(\w+, "(\w+)"', f.read(), re.M)


# ---------------------------------------------------------------------------
# Suite "layouts": hand-written .lir with relayouts
# ---------------------------------------------------------------------------

def dense_hex(array):
    return '"0x' + np.ascontiguousarray(array).tobytes().hex().upper() + '"'


def lir_type(shape, layout=None):
    t = "tensor<" + " x ".join(str(d) for d in shape) + " x f32"
    return t + (", " + layout if layout else "") + ">"


def relayout_lir(with_layouts):
    """A conv block computed in NHWC between relayouts, with a channels-last
    weight constant, an NHWC graph input and an NHWC graph output. Without
    layouts, every relayout is an Identity and all data is logical."""
    w = rand((4, 3, 3, 3), 11)
    b = rand((1, 4, 1, 1), 12)
    L = (lambda name: name) if with_layouts else (lambda name: None)
    w_data = w.transpose(NCHW_TO_NHWC) if with_layouts else w
    relayout = "relayout" if with_layouts else "Identity"
    return f"""model {{opset_import = {{"" = 17}}}}
graph @relayouts(%x: {lir_type([1, 3, 8, 8])}, %z: {lir_type([1, 4, 8, 8], L("nhwc"))}) {{
  %x_nhwc = {relayout}(%x) : {lir_type([1, 3, 8, 8], L("nhwc"))} loc("to_nhwc")
  %w = Constant() {{value = dense<{dense_hex(w_data)}> : {lir_type([4, 3, 3, 3], L("ohwi"))}}} : {lir_type([4, 3, 3, 3], L("ohwi"))}
  %b = Constant() {{value = dense<{dense_hex(b)}> : {lir_type([1, 4, 1, 1])}}} : {lir_type([1, 4, 1, 1])}
  %c = Conv(%x_nhwc, %w) {{pads = [1, 1, 1, 1]}} : {lir_type([1, 4, 8, 8], L("nhwc"))}
  %a = Add(%c, %b) : {lir_type([1, 4, 8, 8], L("nhwc"))}
  %r = Relu(%a) : {lir_type([1, 4, 8, 8], L("nhwc"))}
  %s = Add(%r, %z) : {lir_type([1, 4, 8, 8], L("nhwc"))}
  %p = MaxPool(%s) {{kernel_shape = [2, 2], strides = [2, 2]}} : {lir_type([1, 4, 4, 4], L("nhwc"))}
  %q = {relayout}(%p) : {lir_type([1, 4, 4, 4])} loc("to_nchw")
  %q2 = {relayout}(%p) : {lir_type([1, 4, 4, 4], L("[0, 3, 2, 1]"))} loc("to_nwhc")
  %g = GlobalAveragePool(%q2) : {lir_type([1, 4, 1, 1])}
  %y = Relu(%q) : {lir_type([1, 4, 4, 4])}
  return %y, %s, %g, %q2
}}
"""


# name -> (text with layouts, text without, {input: perm}, {output: perm})
LAYOUT_CASES = {
    "relayouts": (lambda: relayout_lir(True), lambda: relayout_lir(False),
                  {"z": NCHW_TO_NHWC},
                  {"s": NCHW_TO_NHWC, "q2": (0, 3, 2, 1)}),
}


# ---------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------

NP_TYPES = {
    "tensor(float)": np.float32, "tensor(float16)": np.float16,
    "tensor(double)": np.float64, "tensor(int64)": np.int64,
    "tensor(int32)": np.int32, "tensor(int8)": np.int8,
    "tensor(uint8)": np.uint8, "tensor(bool)": np.bool_,
}


class CaseError(Exception):
    pass


class Tools:
    def __init__(self, tools_dir):
        self.translate = self._find("strider-translate", tools_dir)
        self.opt = self._find("strider-opt", tools_dir)

    @staticmethod
    def _find(name, tools_dir):
        path = (os.path.join(tools_dir, name) if tools_dir
                else shutil.which(name))
        if not path or not os.access(path, os.X_OK):
            sys.exit(f"ort_roundtrip.py: cannot find {name}"
                     + (f" in {tools_dir}" if tools_dir else " on PATH"))
        return path

    def run(self, *args):
        p = subprocess.run(args, capture_output=True, text=True)
        if p.returncode != 0:
            cmd = " ".join(os.path.basename(a) if i == 0 else a
                           for i, a in enumerate(args))
            raise CaseError(f"`{cmd}` failed: {p.stderr.strip()}")

    def to_onnx(self, lir, work, stem):
        """Text round trip of `lir`, then export; returns the model path."""
        lir2 = os.path.join(work, stem + ".opt.lir")
        out = os.path.join(work, stem + ".export.onnx")
        self.run(self.opt, lir, "-o", lir2)
        self.run(self.translate, "--export-onnx", lir2, "-o", out)
        return out


def session(path):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    try:
        return ort.InferenceSession(path, so,
                                    providers=["CPUExecutionProvider"])
    except Exception as e:  # ORT raises its own exception types
        raise CaseError(f"onnxruntime cannot load {os.path.basename(path)}: "
                        f"{str(e).strip().splitlines()[0]}")


def make_feeds(sess, name):
    rng = rng_for(name)
    feeds = {}
    for i in sess.get_inputs():
        shape = [d if isinstance(d, int) else SYMBOLIC_DIM_SIZE
                 for d in i.shape]
        dtype = NP_TYPES[i.type]
        if np.issubdtype(dtype, np.floating):
            feeds[i.name] = rng.standard_normal(shape).astype(dtype)
        elif dtype == np.bool_:
            feeds[i.name] = rng.random(shape) > 0.5
        else:
            low = -2 if np.issubdtype(dtype, np.signedinteger) else 0
            feeds[i.name] = rng.integers(low, 3, shape).astype(dtype)
    return feeds


def compare(ref_names, ref_outs, got_names, got_outs, out_perms=None):
    out_perms = out_perms or {}
    if list(ref_names) != list(got_names):
        raise CaseError(f"outputs {got_names}, expected {ref_names}")
    for name, r, g in zip(ref_names, ref_outs, got_outs):
        if name in out_perms:
            g = np.transpose(g, np.argsort(out_perms[name]))
        if r.shape != g.shape or r.dtype != g.dtype:
            raise CaseError(f"output '{name}': {g.dtype}{list(g.shape)}, "
                            f"expected {r.dtype}{list(r.shape)}")
        if r.dtype.kind in "fc":
            ok = np.allclose(g, r, rtol=RTOL, atol=ATOL, equal_nan=True)
        else:
            ok = np.array_equal(g, r)
        if not ok:
            diff = np.nanmax(np.abs(g.astype(np.float64) - r.astype(np.float64)))
            raise CaseError(f"output '{name}' differs (max abs diff {diff:g})")


def check_model(path):
    try:
        onnx.checker.check_model(onnx.load(path), full_check=True)
    except Exception as e:
        raise CaseError(f"onnx.checker rejects {os.path.basename(path)}: "
                        f"{str(e).strip().splitlines()[0]}")


def exported_opset(path):
    for o in onnx.load(path).opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return None


# Rank-4 types outside constant data: `tensor<a x b x c x d x elt>`.
RANK4_TYPE = re.compile(r"(?<!> : )tensor<((?:[^\s<>,]+ x ){4})([a-z0-9?]+)>")


def with_channels_last(text):
    """Give every rank-4 value channels-last layout, except inputs with
    default data (their data would be reinterpreted)."""
    def sub(m):
        rest = text[m.end():m.end() + 4]
        if rest.startswith(" = d"):
            return m.group(0)
        return f"tensor<{m.group(1)}{m.group(2)}, nhwc>"
    return RANK4_TYPE.sub(sub, text)


# The default-domain opset import of a printed graph's model line.
DEFAULT_OPSET = re.compile(r'(?<=opset_import = \{)"" = \d+')


def run_model_case(tools, m, work, layouts=True, opset_variants=()):
    name = m.graph.name
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, "model.onnx")
    onnx.save(m, src)
    lir = os.path.join(d, "model.lir")
    tools.run(tools.translate, "--import-onnx", src, "-o", lir)
    exported = tools.to_onnx(lir, d, "model")
    check_model(exported)

    ref = session(src)
    feeds = make_feeds(ref, name)
    ref_names = [o.name for o in ref.get_outputs()]
    ref_outs = ref.run(None, feeds)
    got = session(exported)
    compare(ref_names, ref_outs, [o.name for o in got.get_outputs()],
            got.run(None, feeds))
    notes = [f"opset {exported_opset(src)}->{exported_opset(exported)}"]
    want = EXPECTED_OPSET.get(name)
    if want is not None and exported_opset(exported) != want:
        raise CaseError(f"exported at opset {exported_opset(exported)}, "
                        f"expected {want}")
    # Opset variants: the same IR declared at older opsets must be written
    # in those opsets' forms (or at the lowest opset that can hold it).
    with open(lir) as f:
        text = f.read()
    for opset in opset_variants:
        if opset >= exported_opset(src):
            continue
        lir_old = os.path.join(d, f"opset{opset}.lir")
        with open(lir_old, "w") as f:
            f.write(DEFAULT_OPSET.sub(f'"" = {opset}', text, count=1))
        exported_old = tools.to_onnx(lir_old, d, f"opset{opset}")
        check_model(exported_old)
        got = session(exported_old)
        try:
            compare(ref_names, ref_outs, [o.name for o in got.get_outputs()],
                    got.run(None, feeds))
        except CaseError as e:
            raise CaseError(f"at opset {opset}: {e}")
        notes.append(f"{opset}->{exported_opset(exported_old)}")
    if not layouts:
        return ", ".join(notes)

    # Layout variant: rank-4 I/O is physical (NHWC) in the export.
    with open(lir) as f:
        text = with_channels_last(f.read())
    lir_nhwc = os.path.join(d, "nhwc.lir")
    with open(lir_nhwc, "w") as f:
        f.write(text)
    exported_nhwc = tools.to_onnx(lir_nhwc, d, "nhwc")
    check_model(exported_nhwc)
    got = session(exported_nhwc)
    physical_inputs = {
        i.name: (np.transpose(feeds[i.name], NCHW_TO_NHWC)
                 if feeds[i.name].ndim == 4 else feeds[i.name])
        for i in got.get_inputs()}
    out_perms = {n: NCHW_TO_NHWC for n, r in zip(ref_names, ref_outs)
                 if r.ndim == 4}
    compare(ref_names, ref_outs, [o.name for o in got.get_outputs()],
            got.run(None, physical_inputs), out_perms)
    transposes = sum(n.op_type == "Transpose"
                     for n in onnx.load(exported_nhwc).graph.node)
    notes.append(f"nhwc variant: {transposes} transposes")
    return ", ".join(notes)


def run_layout_case(tools, name, spec, work):
    text_l, text_plain, in_perms, out_perms = spec
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    paths = {}
    for stem, text in (("layouts", text_l()), ("plain", text_plain())):
        lir = os.path.join(d, stem + ".lir")
        with open(lir, "w") as f:
            f.write(text)
        paths[stem] = tools.to_onnx(lir, d, stem)
        check_model(paths[stem])
    ref = session(paths["plain"])
    feeds = make_feeds(ref, name)
    ref_names = [o.name for o in ref.get_outputs()]
    ref_outs = ref.run(None, feeds)
    got = session(paths["layouts"])
    phys = {k: (np.transpose(v, in_perms[k]) if k in in_perms else v)
            for k, v in feeds.items()}
    compare(ref_names, ref_outs, [o.name for o in got.get_outputs()],
            got.run(None, phys), out_perms)
    transposes = sum(n.op_type == "Transpose"
                     for n in onnx.load(paths["layouts"]).graph.node)
    if transposes == 0:
        raise CaseError("the export with layouts has no Transpose")
    return f"{transposes} transposes"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tools-dir", help="directory with strider-translate and "
                   "strider-opt (default: PATH)")
    p.add_argument("--work", required=True, help="scratch directory")
    p.add_argument("--suite", action="append",
                   choices=["models", "ops", "layouts"],
                   help="suites to run (default: all)")
    p.add_argument("--only", action="append", default=[],
                   help="run only cases with these names")
    p.add_argument("--no-layout-variant", action="store_true",
                   help="skip the channels-last variant of each model")
    p.add_argument("--opset-variants", default="7,9,11,13,17",
                   help="comma-separated opsets each model's IR is also "
                   "exported at (default: %(default)s; empty: none)")
    p.add_argument("-j", "--jobs", type=int, default=2)
    a = p.parse_args()
    tools = Tools(a.tools_dir)
    variants = [int(v) for v in a.opset_variants.split(",") if v]
    suites = a.suite or ["models", "ops", "layouts"]
    if os.path.isdir(a.work):
        shutil.rmtree(a.work)
    os.makedirs(a.work)

    jobs = []  # (suite, name, thunk)
    if "models" in suites:
        for fn in MODELS:
            m = fn()
            jobs.append(("models", m.graph.name,
                         lambda m=m: run_model_case(
                             tools, m, os.path.join(a.work, "models"),
                             not a.no_layout_variant, variants)))
    if "ops" in suites:
        cases = op_cases()
        covered = {n.op_type for m in cases for n in m.graph.node}
        # The internal ops have no ONNX form to start from: relayout's
        # export is the layouts suite's, lookup's and qbinary's
        # test/Transforms/fuse-quantized-{lookup,binary}.lir's.
        missing = [o for o in ops_def_names()
                   if o not in covered
                   and o not in ("relayout", "lookup", "qbinary")]
        if missing:
            print(f"FAIL ops suite: no case for {', '.join(missing)}")
            return 1
        for m in cases:
            jobs.append(("ops", m.graph.name,
                         lambda m=m: run_model_case(
                             tools, m, os.path.join(a.work, "ops"),
                             not a.no_layout_variant, variants)))
    if "layouts" in suites:
        for name, spec in LAYOUT_CASES.items():
            jobs.append(("layouts", name,
                         lambda name=name, spec=spec: run_layout_case(
                             tools, name, spec,
                             os.path.join(a.work, "layouts"))))
    if a.only:
        jobs = [j for j in jobs if j[1] in a.only]

    def run(job):
        suite, name, thunk = job
        try:
            return True, f"PASS {suite}/{name}: {thunk()}"
        except CaseError as e:
            return False, f"FAIL {suite}/{name}: {e}"

    failures = 0
    with concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as pool:
        for ok, line in pool.map(run, jobs):
            print(line, flush=True)
            failures += not ok
    print(f"{len(jobs) - failures} of {len(jobs)} cases passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
