#!/usr/bin/env python3
"""Write small ONNX models for the importer's lit tests.

Usage: make_model.py CASE OUT.onnx

Each case builds one model (valid or deliberately broken) and writes it to
OUT.onnx; external-data cases also write their data files next to it.
`make_model.py --list` prints the case names.
"""

import os
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

CASES = {}


def case(name):
    def register(fn):
        CASES[name] = fn
        return fn

    return register


def model(nodes, inputs, outputs, initializers=(), opset=17, value_info=(),
          extra_opsets=(), name="g"):
    graph = helper.make_graph(list(nodes), name, list(inputs), list(outputs),
                              initializer=list(initializers),
                              value_info=list(value_info))
    opsets = [helper.make_opsetid("", opset)]
    opsets += [helper.make_opsetid(d, v) for d, v in extra_opsets]
    m = helper.make_model(graph, opset_imports=opsets,
                          producer_name="make_model.py")
    m.ir_version = 8 if opset <= 17 else 10
    return m


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


F32 = TensorProto.FLOAT


def raw(name, array, elem):
    t = TensorProto()
    t.name = name
    t.data_type = elem
    t.dims.extend(array.shape)
    t.raw_data = array.tobytes()
    return t


def f32(name, shape, values=None):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    if values is not None:
        a = np.array(values, dtype=np.float32).reshape(shape)
    return raw(name, a, F32)


def i64(name, values):
    return raw(name, np.array(values, dtype=np.int64), TensorProto.INT64)


# --- Valid models -------------------------------------------------------------


@case("conv-relu")
def conv_relu():
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv1",
                              pads=[1, 1, 1, 1], doc_string="first conv"),
             helper.make_node("Relu", ["c"], ["y"], name="relu1")]
    m = model(nodes, [vi("x", F32, ["N", 3, 8, 8])],
              [vi("y", F32, ["N", 4, 8, 8])],
              [f32("w", [4, 3, 3, 3]), f32("b", [4])])
    m.doc_string = "model doc"
    m.domain = "org.example"
    m.model_version = 3
    helper.set_model_props(m, {"author": "tests"})
    return m


@case("unsorted")
def unsorted():
    nodes = [helper.make_node("Relu", ["a"], ["y"], name="second"),
             helper.make_node("Sigmoid", ["x"], ["a"], name="first")]
    return model(nodes, [vi("x", F32, [2, 3])], [vi("y", F32, [2, 3])])


@case("symbolic-dims")
def symbolic_dims():
    x = helper.make_tensor_value_info("x", F32, ["batch", None, 5])
    u = helper.make_tensor_value_info("u", F32, None)
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="r"),
             helper.make_node("Relu", ["u"], ["v"], name="r2")]
    return model(nodes, [x, u],
                 [vi("y", F32, ["batch", None, 5]), vi("v", F32, None)])


@case("storage-forms")
def storage_forms():
    inits = []

    def typed(name, elem, dims, field, values):
        t = TensorProto()
        t.name = name
        t.data_type = elem
        t.dims.extend(dims)
        getattr(t, field).extend(values)
        inits.append(t)

    inits.append(f32("raw_f32", [2], [1.5, -2.0]))
    typed("float_data", F32, [2], "float_data", [0.25, 4.0])
    typed("int32_data", TensorProto.INT32, [2], "int32_data", [-7, 9])
    typed("int64_data", TensorProto.INT64, [2], "int64_data", [-(2**40), 3])
    typed("double_data", TensorProto.DOUBLE, [2], "double_data", [0.5, -1.25])
    typed("uint64_data", TensorProto.UINT64, [2], "uint64_data", [2**63, 1])
    typed("uint32_data", TensorProto.UINT32, [2], "uint64_data", [2**32 - 1, 5])
    typed("f16_data", TensorProto.FLOAT16, [2], "int32_data",
          [int(np.float16(1.0).view(np.uint16)),
           int(np.float16(-0.5).view(np.uint16))])
    typed("bf16_data", TensorProto.BFLOAT16, [2], "int32_data",
          [0x3F80, 0xC000])  # 1.0, -2.0
    typed("bool_data", TensorProto.BOOL, [3], "int32_data", [1, 0, 1])
    typed("i8_data", TensorProto.INT8, [2], "int32_data", [-128, 127])
    typed("u8_data", TensorProto.UINT8, [2], "int32_data", [0, 255])
    typed("i16_data", TensorProto.INT16, [2], "int32_data", [-300, 300])
    typed("u16_data", TensorProto.UINT16, [2], "int32_data", [65535, 1])
    typed("scalar", TensorProto.INT64, [], "int64_data", [42])
    typed("empty", F32, [0, 3], "float_data", [])
    outs = [helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
            for t in inits]
    return model([], [], outs, inits)


@case("fp16-initializer")
def fp16_initializer():
    w = raw("w", np.array([1.0, 2.0, 0.5], dtype=np.float16), TensorProto.FLOAT16)
    nodes = [helper.make_node("Add", ["x", "w"], ["y"], name="add")]
    return model(nodes, [vi("x", TensorProto.FLOAT16, [3])],
                 [vi("y", TensorProto.FLOAT16, [3])], [w])


@case("initializer-as-input")
def initializer_as_input():
    nodes = [helper.make_node("Mul", ["x", "scale"], ["y"], name="mul")]
    return model(nodes, [vi("x", F32, [2]), vi("scale", F32, [2])],
                 [vi("y", F32, [2])], [f32("scale", [2], [3.0, 4.0])])


@case("missing-optional")
def missing_optional():
    # Empty input names are missing operands; trailing empty outputs vanish.
    nodes = [helper.make_node("Clip", ["x", "", "hi"], ["c"], name="clip"),
             helper.make_node("Dropout", ["c", "", ""], ["y", ""],
                              name="drop")]
    return model(nodes, [vi("x", F32, [4])], [vi("y", F32, [4])],
                 [f32("hi", [], [6.0])], opset=13)


@case("opaque-op")
def opaque_op():
    nodes = [helper.make_node("MyOp", ["x"], ["t"], name="custom",
                              domain="com.example", alpha=0.5, mode="fast",
                              sizes=[1, 2], names=["a", "b"]),
             helper.make_node("RandomUniformLike", ["t"], ["y"], name="rl",
                              seed=1.0)]
    return model(nodes, [vi("x", F32, [2, 3])], [vi("y", F32, [2, 3])],
                 value_info=[vi("t", F32, [2, 3])],
                 extra_opsets=[("com.example", 1)])


@case("opaque-untyped")
def opaque_untyped():
    nodes = [helper.make_node("MyOp", ["x"], ["t"], name="custom",
                              domain="com.example"),
             helper.make_node("Relu", ["t"], ["y"], name="r")]
    return model(nodes, [vi("x", F32, [2, 3])], [vi("y", F32, [2, 3])],
                 extra_opsets=[("com.example", 1)])


@case("external-data")
def external_data(out):
    data = np.arange(6, dtype=np.float32)
    prefix = np.zeros(4, dtype=np.uint8).tobytes()
    base = os.path.basename(out) + ".bin"
    with open(os.path.join(os.path.dirname(out) or ".", base), "wb") as f:
        f.write(prefix + data.tobytes() + data[:2].tobytes())
    t = TensorProto()
    t.name = "w"
    t.data_type = F32
    t.dims.extend([2, 3])
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", base), ("offset", "4"), ("length", "24")):
        e = t.external_data.add()
        e.key, e.value = k, v
    t2 = TensorProto()
    t2.name = "tail"
    t2.data_type = F32
    t2.dims.extend([2])
    t2.data_location = TensorProto.EXTERNAL
    for k, v in (("location", base), ("offset", "28")):
        e = t2.external_data.add()
        e.key, e.value = k, v
    nodes = [helper.make_node("Add", ["x", "w"], ["y"], name="add"),
             helper.make_node("Identity", ["tail"], ["z"], name="id")]
    return model(nodes, [vi("x", F32, [2, 3])],
                 [vi("y", F32, [2, 3]), vi("z", F32, [2])], [t, t2])


def external_model(location, offset=None, length=None, dims=(2,)):
    t = TensorProto()
    t.name = "w"
    t.data_type = F32
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    entries = [("location", location)]
    if offset is not None:
        entries.append(("offset", str(offset)))
    if length is not None:
        entries.append(("length", str(length)))
    for k, v in entries:
        e = t.external_data.add()
        e.key, e.value = k, v
    nodes = [helper.make_node("Identity", ["w"], ["y"], name="id")]
    return model(nodes, [], [vi("y", F32, list(dims))], [t])


def write_bin(out, name, nbytes):
    with open(os.path.join(os.path.dirname(out) or ".", name), "wb") as f:
        f.write(bytes(nbytes))


@case("external-absolute")
def external_absolute(out):
    return external_model("/etc/passwd")


@case("external-dotdot")
def external_dotdot(out):
    return external_model("../escape.bin")


@case("external-symlink")
def external_symlink(out):
    d = os.path.dirname(os.path.abspath(out))
    link = os.path.join(d, os.path.basename(out) + ".link")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink("/etc/hostname", link)
    return external_model(os.path.basename(link))


@case("external-offset-beyond")
def external_offset_beyond(out):
    name = os.path.basename(out) + ".bin"
    write_bin(out, name, 8)
    return external_model(name, offset=16)


@case("external-length-beyond")
def external_length_beyond(out):
    name = os.path.basename(out) + ".bin"
    write_bin(out, name, 8)
    return external_model(name, offset=4, length=8)


@case("external-size-mismatch")
def external_size_mismatch(out):
    name = os.path.basename(out) + ".bin"
    write_bin(out, name, 16)
    return external_model(name, offset=0, length=12)


@case("external-missing")
def external_missing(out):
    return external_model(os.path.basename(out) + ".nonexistent")


# --- Opset upgrades -----------------------------------------------------------


@case("clip-attrs")
def clip_attrs():
    nodes = [helper.make_node("Clip", ["x"], ["y"], name="clip", min=0.0,
                              max=6.0),
             helper.make_node("Clip", ["y"], ["z"], name="clip_lo", min=1.0)]
    return model(nodes, [vi("x", F32, [2, 3])], [vi("z", F32, [2, 3])],
                 opset=10)


@case("clip-attrs-i8")
def clip_attrs_i8():
    # Found by the onnx fuzzer: float bounds past the data type's range (a
    # plain cast of 1.8e34 to an integer is undefined).
    nodes = [helper.make_node("Clip", ["x"], ["y"], name="clip", min=-1e30,
                              max=1.8e34)]
    return model(nodes, [vi("x", TensorProto.INT8, [3])],
                 [vi("y", TensorProto.INT8, [3])], opset=10)


@case("clip-attrs-f16")
def clip_attrs_f16():
    nodes = [helper.make_node("Clip", ["x"], ["y"], name="clip", max=6.0)]
    return model(nodes, [vi("x", TensorProto.FLOAT16, [3])],
                 [vi("y", TensorProto.FLOAT16, [3])], opset=7)


@case("pad-attrs")
def pad_attrs():
    nodes = [helper.make_node("Pad", ["x"], ["y"], name="pad",
                              pads=[0, 0, 1, 2, 0, 0, 1, 2], value=1.5)]
    return model(nodes, [vi("x", F32, [1, 1, 2, 2])],
                 [vi("y", F32, [1, 1, 4, 6])], opset=10)


@case("slice-attrs")
def slice_attrs():
    nodes = [helper.make_node("Slice", ["x"], ["y"], name="slice",
                              starts=[1], ends=[3], axes=[1])]
    return model(nodes, [vi("x", F32, [2, 4])], [vi("y", F32, [2, 2])],
                 opset=9)


@case("split-attr")
def split_attr():
    nodes = [helper.make_node("Split", ["x"], ["a", "b"], name="split",
                              axis=1, split=[1, 3])]
    return model(nodes, [vi("x", F32, [2, 4])],
                 [vi("a", F32, [2, 1]), vi("b", F32, [2, 3])], opset=11)


@case("split-equal")
def split_equal():
    nodes = [helper.make_node("Split", ["x"], ["a", "b"], name="split",
                              axis=1)]
    return model(nodes, [vi("x", F32, [2, 4])],
                 [vi("a", F32, [2, 2]), vi("b", F32, [2, 2])], opset=13)


@case("squeeze-attrs")
def squeeze_attrs():
    nodes = [helper.make_node("Squeeze", ["x"], ["s"], name="sq", axes=[0]),
             helper.make_node("Unsqueeze", ["s"], ["y"], name="unsq",
                              axes=[2])]
    return model(nodes, [vi("x", F32, [1, 3, 4])], [vi("y", F32, [3, 4, 1])],
                 opset=11)


@case("reduce-attrs")
def reduce_attrs():
    nodes = [helper.make_node("ReduceMean", ["x"], ["m"], name="mean",
                              axes=[2, 3]),
             helper.make_node("ReduceMax", ["m"], ["mx"], name="max",
                              axes=[1], keepdims=0),
             helper.make_node("ReduceSum", ["mx"], ["y"], name="sum")]
    return model(nodes, [vi("x", F32, [2, 3, 4, 5])],
                 [vi("y", F32, [1, 1, 1])], opset=12)


@case("batchnorm-v7")
def batchnorm_v7():
    inits = [f32(n, [3], [1, 2, 3]) for n in ("s", "b", "m")]
    inits.append(f32("v", [3], [1, 1, 1]))
    nodes = [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"],
                              ["y"], name="bn", spatial=1, epsilon=1e-3)]
    return model(nodes, [vi("x", F32, [1, 3, 2, 2])],
                 [vi("y", F32, [1, 3, 2, 2])], inits, opset=7)


@case("batchnorm-spatial0")
def batchnorm_spatial0():
    m = batchnorm_v7()
    m.graph.node[0].attribute[1].i = 0  # spatial (attributes sorted by name)
    assert m.graph.node[0].attribute[1].name == "spatial"
    return m


@case("dropout-ratio")
def dropout_ratio():
    nodes = [helper.make_node("Dropout", ["x"], ["y"], name="drop",
                              ratio=0.25)]
    return model(nodes, [vi("x", F32, [2, 3])], [vi("y", F32, [2, 3])],
                 opset=10)


@case("softmax-old-last")
def softmax_old_last():
    nodes = [helper.make_node("Softmax", ["x"], ["y"], name="sm")]
    return model(nodes, [vi("x", F32, [2, 5])], [vi("y", F32, [2, 5])],
                 opset=11)


@case("softmax-old-flatten")
def softmax_old_flatten():
    nodes = [helper.make_node("Softmax", ["x"], ["y"], name="sm", axis=1),
             helper.make_node("LogSoftmax", ["x"], ["z"], name="lsm", axis=2)]
    return model(nodes, [vi("x", F32, [2, 3, 4])],
                 [vi("y", F32, [2, 3, 4]), vi("z", F32, [2, 3, 4])], opset=11)


@case("upsample-v7")
def upsample_v7():
    nodes = [helper.make_node("Upsample", ["x"], ["y"], name="up",
                              scales=[1.0, 1.0, 2.0, 2.0])]
    return model(nodes, [vi("x", F32, [1, 1, 2, 2])],
                 [vi("y", F32, [1, 1, 4, 4])], opset=7)


@case("upsample-v9")
def upsample_v9():
    nodes = [helper.make_node("Upsample", ["x", "scales"], ["y"], name="up",
                              mode="linear")]
    return model(nodes, [vi("x", F32, [1, 1, 2, 2])],
                 [vi("y", F32, [1, 1, 4, 4])],
                 [f32("scales", [4], [1, 1, 2, 2])], opset=9)


@case("resize-v10")
def resize_v10():
    nodes = [helper.make_node("Resize", ["x", "scales"], ["y"], name="rs",
                              mode="nearest")]
    return model(nodes, [vi("x", F32, [1, 1, 2, 2])],
                 [vi("y", F32, [1, 1, 4, 4])],
                 [f32("scales", [4], [1, 1, 2, 2])], opset=10)


@case("resize-v11")
def resize_v11():
    nodes = [helper.make_node("Resize", ["x", "roi", "scales", "sizes"], ["y"],
                              name="rs", mode="linear",
                              coordinate_transformation_mode="align_corners")]
    inits = [f32("roi", [0]), f32("scales", [0]), i64("sizes", [1, 1, 3, 3])]
    return model(nodes, [vi("x", F32, [1, 1, 2, 2])],
                 [vi("y", F32, [1, 1, 3, 3])], inits, opset=11)


@case("constant-forms")
def constant_forms():
    nodes = [helper.make_node("Constant", [], ["cf"], name="c_float",
                              value_float=2.5),
             helper.make_node("Constant", [], ["cfs"], name="c_floats",
                              value_floats=[1.0, 2.0]),
             helper.make_node("Constant", [], ["ci"], name="c_int",
                              value_int=7),
             helper.make_node("Constant", [], ["cis"], name="c_ints",
                              value_ints=[1, 2, 3]),
             helper.make_node("Constant", [], ["ct"], name="c_tensor",
                              value=helper.make_tensor("t", TensorProto.INT32,
                                                       [2], [5, 6]))]
    outs = [vi("cf", F32, []), vi("cfs", F32, [2]), vi("ci", TensorProto.INT64, []),
            vi("cis", TensorProto.INT64, [3]), vi("ct", TensorProto.INT32, [2])]
    return model(nodes, [], outs, opset=13)


@case("constant-string")
def constant_string():
    nodes = [helper.make_node("Constant", [], ["s"], name="c_str",
                              value_string="hello")]
    # The output has no declared type: the Constant itself is refused.
    return model(nodes, [], [onnx.ValueInfoProto(name="s")], opset=13)


@case("cast")
def cast():
    nodes = [helper.make_node("Cast", ["x"], ["y"], name="cast",
                              to=TensorProto.FLOAT16)]
    return model(nodes, [vi("x", F32, [2])], [vi("y", TensorProto.FLOAT16, [2])],
                 opset=13)


# --- Opset 6 forms ------------------------------------------------------------
# Opset 6 models carry legacy broadcasting, Gemm's broadcast, is_test and
# Upsample-1; opset-6 checks compute their expected outputs with numpy.


@case("broadcast-v6")
def broadcast_v6():
    inits = [f32("b34", [3, 4]), f32("b5", [5], [1, 2, 3, 4, 5]),
             f32("b2", [2], [2, 4]), f32("e", [4], [1, 2, 3, 2])]
    nodes = [helper.make_node("Add", ["x", "b34"], ["y1"], name="add",
                              broadcast=1, axis=1),
             helper.make_node("Mul", ["y1", "b5"], ["y2"], name="mul",
                              broadcast=1),
             helper.make_node("Sub", ["y2", "x"], ["y3"], name="sub"),
             helper.make_node("Div", ["y3", "b2"], ["y4"], name="div",
                              broadcast=1, axis=0),
             helper.make_node("Pow", ["y4", "e"], ["y"], name="pow",
                              broadcast=1, axis=-2)]
    return model(nodes, [vi("x", F32, [2, 3, 4, 5])],
                 [vi("y", F32, [2, 3, 4, 5])], inits, opset=6)


@case("prelu-v6")
def prelu_v6():
    inits = [f32("c", [3], [0.1, 0.2, 0.3]), f32("one", [1], [0.25])]
    nodes = [helper.make_node("PRelu", ["x", "c"], ["y"], name="per_channel"),
             helper.make_node("PRelu", ["y", "one"], ["z"], name="shared")]
    return model(nodes, [vi("x", F32, [2, 3, 4, 5])],
                 [vi("z", F32, [2, 3, 4, 5])], inits, opset=6)


@case("gemm-v6")
def gemm_v6():
    inits = [f32("w", [4, 3]), f32("c", [4], [1, 2, 3, 4])]
    nodes = [helper.make_node("Gemm", ["x", "w", "c"], ["y"], name="gemm",
                              broadcast=1, transB=1, alpha=0.5, beta=2.0)]
    return model(nodes, [vi("x", F32, [2, 3])], [vi("y", F32, [2, 4])],
                 inits, opset=6)


@case("is-test-v6")
def is_test_v6():
    inits = [f32("s", [3], [1, 2, 3]), f32("b", [3], [0.5, 0, -0.5]),
             f32("m", [3], [1, 0, -1]), f32("v", [3], [1, 4, 9])]
    nodes = [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"],
                              ["n"], name="bn", is_test=1, epsilon=1e-3,
                              momentum=0.9),
             helper.make_node("Dropout", ["n"], ["y"], name="drop", is_test=1,
                              ratio=0.5)]
    return model(nodes, [vi("x", F32, [1, 3, 2, 2])],
                 [vi("y", F32, [1, 3, 2, 2])], inits, opset=6)


@case("upsample-v6")
def upsample_v6():
    nodes = [helper.make_node("Upsample", ["x"], ["y"], name="up",
                              height_scale=2.0, width_scale=3.0)]
    return model(nodes, [vi("x", F32, [1, 2, 2, 2])],
                 [vi("y", F32, [1, 2, 4, 6])], opset=6)


@case("broadcast-v6-unset")
def broadcast_v6_unset():
    nodes = [helper.make_node("Add", ["x", "b"], ["y"], name="add")]
    return model(nodes, [vi("x", F32, [2, 3]), vi("b", F32, [3])],
                 [vi("y", F32, [2, 3])], opset=6)


@case("broadcast-v6-axis")
def broadcast_v6_axis():
    nodes = [helper.make_node("Mul", ["x", "b"], ["y"], name="mul",
                              broadcast=1, axis=2)]
    return model(nodes, [vi("x", F32, [2, 3]), vi("b", F32, [3])],
                 [vi("y", F32, [2, 3])], opset=6)


@case("broadcast-v6-dims")
def broadcast_v6_dims():
    nodes = [helper.make_node("Sub", ["x", "b"], ["y"], name="sub",
                              broadcast=1)]
    return model(nodes, [vi("x", F32, [2, 3]), vi("b", F32, [2])],
                 [vi("y", F32, [2, 3])], opset=6)


@case("prelu-v6-slope")
def prelu_v6_slope():
    nodes = [helper.make_node("PRelu", ["x", "s"], ["y"], name="prelu")]
    return model(nodes, [vi("x", F32, [2, 3, 5]), vi("s", F32, [5])],
                 [vi("y", F32, [2, 3, 5])], opset=6)


@case("batchnorm-v6-training")
def batchnorm_v6_training():
    m = is_test_v6()
    del m.graph.node[1:]
    m.graph.node[0].output[0] = "y"
    m.graph.node[0].attribute[1].i = 0
    assert m.graph.node[0].attribute[1].name == "is_test"
    return m


@case("dropout-v6-training")
def dropout_v6_training():
    nodes = [helper.make_node("Dropout", ["x"], ["y"], name="drop")]
    nodes[0].attribute.append(helper.make_attribute("is_test", 0))
    return model(nodes, [vi("x", F32, [2])], [vi("y", F32, [2])], opset=6)


@case("batchnorm-v6-spatial0")
def batchnorm_v6_spatial0():
    m = is_test_v6()
    m.graph.node[0].attribute.append(helper.make_attribute("spatial", 0))
    return m


# --- Broken models ------------------------------------------------------------


@case("truncated")
def truncated():
    return conv_relu().SerializeToString()[:-37]


@case("garbage")
def garbage():
    # Field 1 with wire type 7 (invalid) right away, then noise.
    return bytes([0x0F, 0xFF, 0xFE, 0x00]) + bytes(range(256)) * 4


@case("empty-file")
def empty_file():
    return b""


@case("undefined-input")
def undefined_input():
    nodes = [helper.make_node("Add", ["x", "nowhere"], ["y"], name="add")]
    return model(nodes, [vi("x", F32, [2])], [vi("y", F32, [2])])


@case("undefined-output")
def undefined_output():
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="r")]
    return model(nodes, [vi("x", F32, [2])], [vi("zz", F32, [2])])


@case("cycle")
def cycle():
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="pre"),
             helper.make_node("Add", ["a", "c"], ["b"], name="add"),
             helper.make_node("Relu", ["b"], ["c"], name="loop")]
    return model(nodes, [vi("x", F32, [2])], [vi("c", F32, [2])])


@case("duplicate-name")
def duplicate_name():
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="first"),
             helper.make_node("Sigmoid", ["x"], ["y"], name="second")]
    return model(nodes, [vi("x", F32, [2])], [vi("y", F32, [2])])


@case("duplicate-input-output")
def duplicate_input_output():
    nodes = [helper.make_node("Relu", ["x"], ["x"], name="self")]
    return model(nodes, [vi("x", F32, [2])], [vi("x", F32, [2])])


@case("wrong-rank")
def wrong_rank():
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], name="conv1")]
    return model(nodes, [vi("x", F32, [1, 3, 8, 8])], [vi("y", F32, None)],
                 [f32("w", [4, 3, 3])])


@case("wrong-dtype")
def wrong_dtype():
    nodes = [helper.make_node("Add", ["x", "k"], ["y"], name="add")]
    return model(nodes, [vi("x", F32, [2])], [vi("y", F32, [2])],
                 [i64("k", [1, 2])])


@case("initializer-input-mismatch")
def initializer_input_mismatch():
    nodes = [helper.make_node("Mul", ["x", "scale"], ["y"], name="mul")]
    return model(nodes, [vi("x", F32, [2]), vi("scale", TensorProto.INT64, [2])],
                 [vi("y", F32, [2])], [f32("scale", [2], [3.0, 4.0])])


@case("negative-dim")
def negative_dim():
    x = vi("x", F32, [2, 3])
    x.type.tensor_type.shape.dim[1].dim_value = -3
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="r")]
    return model(nodes, [x], [vi("y", F32, [2, 3])])


@case("huge-input")
def huge_input():
    # ONNX Runtime loads it and fails at run time; 2^64 f32 elements.
    x = vi("x", F32, [1, 3, 2**62, 2**62])
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="r")]
    return model(nodes, [x], [vi("y", F32, None)])


@case("huge-input-dynamic")
def huge_input_dynamic():
    # A 2^62 dim beside a dynamic one (found by the lowering fuzzer): the
    # declared type is within the limit until the dynamic dim is bound.
    x = vi("x", F32, [1, 3, "H", 2**62])
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="r")]
    return model(nodes, [x], [vi("y", F32, None)])


@case("huge-expand")
def huge_expand():
    nodes = [helper.make_node("Expand", ["x", "s"], ["y"], name="e")]
    return model(nodes, [vi("x", F32, [1, 4])], [vi("y", F32, None)],
                 [i64("s", [2**31, 2**31, 4])])


@case("huge-resize")
def huge_resize():
    nodes = [helper.make_node("Resize", ["x", "", "sc"], ["y"], name="rs")]
    return model(nodes, [vi("x", F32, [1, 1, 4, 4])], [vi("y", F32, None)],
                 [f32("sc", [4], [1, 1, 1e9, 1e9])])


@case("huge-empty-resize")
def huge_empty_resize():
    # Found by the onnx fuzzer: scales that make an empty tensor whose other
    # dims span 1.6e19 elements (its strides overflowed int64).
    nodes = [helper.make_node("Resize", ["x", "", "sc"], ["y"], name="rs")]
    return model(nodes, [vi("x", F32, [1, 1, 4, 4])], [vi("y", F32, None)],
                 [f32("sc", [4], [1e-45, 1e-45, 1e9, 1e9])])


@case("empty-resize-long-dim")
def empty_resize_long_dim():
    # Found by the onnx fuzzer: an empty result with a dim of 8.4e14; the
    # sampling tables of that dim took 20 PB before anything noticed the
    # result has no elements.
    nodes = [helper.make_node("Resize", ["x", "", "", "sz"], ["y"], name="rs",
                              mode="linear")]
    return model(nodes, [vi("x", F32, [1, 1, 2, 2])], [vi("y", F32, None)],
                 [i64("sz", [1, 844424930131969, 0, 3])])


@case("resize-channels")
def resize_channels():
    # Found by the lowering fuzzer: 65 channels resized to 1 (one tap of
    # weight 1) were written whole into the result's one channel.
    nodes = [helper.make_node("Resize", ["x", "", "", "sz"], ["y"], name="rs",
                              mode="linear",
                              coordinate_transformation_mode="align_corners")]
    return model(nodes, [vi("x", F32, [1, 65, 2, 2])], [vi("y", F32, None)],
                 [i64("sz", [1, 1, 3, 3])])


# Sizes a tensor may have but no machine here can hold (below the 2^62-byte
# limit of shape inference): each is refused by the memory budget.
@case("huge-constant-of-shape")
def huge_constant_of_shape():
    # 2^38 f32 elements: 1 TiB, from a 3-element shape.
    nodes = [helper.make_node("ConstantOfShape", ["s"], ["c"], name="cos"),
             helper.make_node("Add", ["c", "x"], ["y"], name="add")]
    return model(nodes, [vi("x", F32, [1])], [vi("y", F32, None)],
                 [i64("s", [2**18, 2**10, 2**10])])


@case("huge-tile")
def huge_tile():
    nodes = [helper.make_node("Tile", ["x", "r"], ["y"], name="tile")]
    return model(nodes, [vi("x", F32, [1, 4])], [vi("y", F32, None)],
                 [i64("r", [2**40, 1])])


@case("huge-range")
def huge_range():
    nodes = [helper.make_node("Range", ["a", "b", "d"], ["r"], name="range"),
             helper.make_node("Add", ["r", "x"], ["y"], name="add")]
    f = lambda n, v: raw(n, np.array(v, dtype=np.float32), F32)
    return model(nodes, [vi("x", F32, [1])], [vi("y", F32, None)],
                 [f("a", 0.0), f("b", 1e15), f("d", 1.0)])


@case("huge-pad")
def huge_pad():
    nodes = [helper.make_node("Pad", ["x", "p"], ["y"], name="pad")]
    return model(nodes, [vi("x", F32, [1, 4])], [vi("y", F32, None)],
                 [i64("p", [0, 0, 0, 2**40])])


@case("huge-onehot")
def huge_onehot():
    nodes = [helper.make_node("OneHot", ["i", "d", "v"], ["y"], name="onehot")]
    return model(nodes, [vi("i", TensorProto.INT64, [4])],
                 [vi("y", F32, None)],
                 [i64("d", [2**40]), f32("v", [2], [0.0, 1.0])])


@case("huge-arena-sum")
def huge_arena_sum():
    # Four live 2^61-byte tensors: each within the 2^62-byte limit, their
    # sum 2^63 bytes, past int64.
    n = 2**58
    nodes = [helper.make_node("Tile", [f"x{i}", "r"], [f"t{i}"], name=f"tile{i}")
             for i in range(4)]
    nodes += [helper.make_node("Add", ["t0", "t1"], ["a"], name="add0"),
              helper.make_node("Add", ["t2", "t3"], ["b"], name="add1"),
              helper.make_node("Add", ["a", "b"], ["y"], name="add2")]
    return model(nodes, [vi(f"x{i}", F32, [1, 4]) for i in range(4)],
                 [vi("y", F32, None)], [i64("r", [n, 1])])


@case("negative-initializer-dim")
def negative_initializer_dim():
    t = TensorProto()
    t.name = "w"
    t.data_type = F32
    t.dims.extend([2, -1])
    nodes = [helper.make_node("Relu", ["w"], ["y"], name="r")]
    return model(nodes, [], [vi("y", F32, None)], [t])


@case("initializer-size-mismatch")
def initializer_size_mismatch():
    t = f32("w", [2, 2])
    t.raw_data = t.raw_data[:12]
    nodes = [helper.make_node("Relu", ["w"], ["y"], name="r")]
    return model(nodes, [], [vi("y", F32, [2, 2])], [t])


@case("typed-size-mismatch")
def typed_size_mismatch():
    t = TensorProto()
    t.name = "w"
    t.data_type = TensorProto.INT64
    t.dims.extend([3])
    t.int64_data.extend([1, 2])
    nodes = [helper.make_node("Identity", ["w"], ["y"], name="id")]
    return model(nodes, [], [vi("y", TensorProto.INT64, [3])], [t])


@case("bad-attr-type")
def bad_attr_type():
    nodes = [helper.make_node("Concat", ["x", "x"], ["y"], name="cat",
                              axis="one")]
    return model(nodes, [vi("x", F32, [2])], [vi("y", F32, [4])])


@case("bad-upgrade-attr-type")
def bad_upgrade_attr_type():
    nodes = [helper.make_node("Clip", ["x"], ["y"], name="clip", min="low")]
    return model(nodes, [vi("x", F32, [2])], [vi("y", F32, [2])], opset=10)


@case("unknown-attr")
def unknown_attr():
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="r", slope=0.1)]
    return model(nodes, [vi("x", F32, [2])], [vi("y", F32, [2])])


@case("unknown-domain")
def unknown_domain():
    nodes = [helper.make_node("Frob", ["x"], ["y"], name="frob",
                              domain="com.unknown")]
    return model(nodes, [vi("x", F32, [2])], [vi("y", F32, [2])])


@case("opset-too-old")
def opset_too_old():
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="r")]
    return model(nodes, [vi("x", F32, [2])], [vi("y", F32, [2])], opset=5)


@case("opset-too-new")
def opset_too_new():
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="r")]
    return model(nodes, [vi("x", F32, [2])], [vi("y", F32, [2])], opset=99)


@case("no-default-opset")
def no_default_opset():
    m = opset_too_old()
    del m.opset_import[:]
    m.opset_import.append(helper.make_opsetid("com.example", 1))
    return m


@case("string-input")
def string_input():
    nodes = [helper.make_node("Identity", ["x"], ["y"], name="id")]
    return model(nodes, [vi("x", TensorProto.STRING, [2])],
                 [vi("y", TensorProto.STRING, [2])])


@case("float8-initializer")
def float8_initializer():
    t = TensorProto()
    t.name = "w"
    t.data_type = 17  # FLOAT8E4M3FN
    t.dims.extend([2])
    t.raw_data = b"\x00\x01"
    nodes = [helper.make_node("Identity", ["w"], ["y"], name="id")]
    return model(nodes, [], [vi("y", F32, [2])], [t], opset=21)


@case("complex-output")
def complex_output():
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="r")]
    return model(nodes, [vi("x", F32, [2])],
                 [vi("y", TensorProto.COMPLEX64, [2])])


@case("cast-to-string")
def cast_to_string():
    nodes = [helper.make_node("Cast", ["x"], ["y"], name="cast",
                              to=TensorProto.STRING)]
    return model(nodes, [vi("x", F32, [2])], [vi("y", TensorProto.STRING, [2])],
                 opset=13)


@case("subgraph-if")
def subgraph_if():
    then_g = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["t"])], "then", [],
        [vi("t", F32, [2])])
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["e"])], "else", [],
        [vi("e", F32, [2])])
    nodes = [helper.make_node("If", ["c"], ["y"], name="branch",
                              then_branch=then_g, else_branch=else_g)]
    return model(nodes, [vi("c", TensorProto.BOOL, []), vi("x", F32, [2])],
                 [vi("y", F32, [2])])


@case("subgraph-loop")
def subgraph_loop():
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("Identity", ["v_in"], ["v_out"])], "body",
        [vi("i", TensorProto.INT64, []), vi("c_in", TensorProto.BOOL, []),
         vi("v_in", F32, [2])],
        [vi("c_out", TensorProto.BOOL, []), vi("v_out", F32, [2])])
    nodes = [helper.make_node("Loop", ["n", "", "x"], ["y"], name="loop",
                              body=body)]
    return model(nodes, [vi("n", TensorProto.INT64, []), vi("x", F32, [2])],
                 [vi("y", F32, [2])])


@case("if-nested")
def if_nested():
    # y = c ? (d ? x + w : x * w) : -w, where w is computed outside both
    # Ifs: the inner If reads x and w from two levels out, the else branch
    # reads w only (a value only one branch reads is passed to both).
    inner_then = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["s"])], "inner_then", [],
        [vi("s", F32, [2])])
    inner_else = helper.make_graph(
        [helper.make_node("Mul", ["x", "w"], ["p"])], "inner_else", [],
        [vi("p", F32, [2])])
    then_g = helper.make_graph(
        [helper.make_node("If", ["d"], ["t"], name="inner",
                          then_branch=inner_then, else_branch=inner_else)],
        "outer_then", [], [vi("t", F32, [2])])
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["w"], ["e"])], "outer_else", [],
        [vi("e", F32, [2])])
    nodes = [helper.make_node("Exp", ["x"], ["w"], name="w"),
             helper.make_node("If", ["c"], ["y"], name="outer",
                              then_branch=then_g, else_branch=else_g)]
    return model(nodes, [vi("c", TensorProto.BOOL, []),
                         vi("d", TensorProto.BOOL, []), vi("x", F32, [2])],
                 [vi("y", F32, [2])])


@case("if-on-shape")
def if_on_shape():
    # The condition folds once x's dim is known: Shape -> Gather -> Equal.
    then_g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"])], "then", [],
        [vi("r", F32, ["N"])])
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["n"])], "else", [],
        [vi("n", F32, ["N"])])
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Constant", [], ["zero"],
                              value=helper.make_tensor("zero", TensorProto.INT64,
                                                       [], [0])),
             helper.make_node("Gather", ["s", "zero"], ["n0"]),
             helper.make_node("Constant", [], ["four"],
                              value=helper.make_tensor("four", TensorProto.INT64,
                                                       [], [4])),
             helper.make_node("Equal", ["n0", "four"], ["c"]),
             helper.make_node("If", ["c"], ["y"], name="on_shape",
                              then_branch=then_g, else_branch=else_g)]
    return model(nodes, [vi("x", F32, ["N"])], [vi("y", F32, ["N"])])


@case("if-on-data")
def if_on_data():
    # The condition depends on a float input's values: not compilable.
    then_g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"])], "then", [],
        [vi("r", F32, [2])])
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["n"])], "else", [],
        [vi("n", F32, [2])])
    nodes = [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
             helper.make_node("Constant", [], ["zero"],
                              value=helper.make_tensor("zero", F32, [], [0.0])),
             helper.make_node("Greater", ["s", "zero"], ["c"]),
             helper.make_node("If", ["c"], ["y"], name="on_data",
                              then_branch=then_g, else_branch=else_g)]
    return model(nodes, [vi("x", F32, [2])], [vi("y", F32, [2])])


@case("if-branch-input")
def if_branch_input():
    then_g = helper.make_graph(
        [helper.make_node("Identity", ["a"], ["t"])], "then",
        [vi("a", F32, [2])], [vi("t", F32, [2])])
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["e"])], "else", [],
        [vi("e", F32, [2])])
    nodes = [helper.make_node("If", ["c"], ["y"], name="bad",
                              then_branch=then_g, else_branch=else_g)]
    return model(nodes, [vi("c", TensorProto.BOOL, []), vi("x", F32, [2])],
                 [vi("y", F32, [2])])


@case("onehot-axis")
def onehot_axis():
    # Depth a constant, as exporters write it; float indices, a negative
    # one and two outside [-depth, depth).
    nodes = [helper.make_node("OneHot", ["i", "depth", "values"], ["y"],
                              name="oh", axis=1)]
    inits = [helper.make_tensor("depth", F32, [], [5.0]),
             helper.make_tensor("values", F32, [2], [-1.0, 3.0])]
    return model(nodes, [vi("i", F32, [2, 3])], [vi("y", F32, [2, 5, 3])],
                 initializers=inits)


@case("eyelike-hardmax")
def eyelike_hardmax():
    nodes = [helper.make_node("EyeLike", ["x"], ["e"], name="eye", k=1,
                              dtype=TensorProto.INT32),
             helper.make_node("Hardmax", ["x"], ["h"], name="hm", axis=0)]
    return model(nodes, [vi("x", F32, [3, 4])],
                 [vi("e", TensorProto.INT32, [3, 4]), vi("h", F32, [3, 4])],
                 opset=17)


@case("quantized-operators")
def quantized_operators():
    # The forms ORT's quantizer writes: QuantizeLinear, a QLinearConv with
    # per-channel s8 weights and an int32 bias (its y_scale and zero point
    # as the next QLinearMatMul's input ones), a QLinearMatMul, and the
    # dynamic form: DynamicQuantizeLinear feeding a ConvInteger and a
    # MatMulInteger, their int32 sums scaled back to float.
    rng = np.random.default_rng(31)
    w = rng.integers(-127, 128, (8, 3, 3, 3)).astype(np.int8)
    wu = rng.integers(0, 256, (8, 3, 3, 3)).astype(np.uint8)
    mw = rng.integers(-127, 128, (6, 5)).astype(np.int8)
    mu = rng.integers(0, 256, (6, 5)).astype(np.uint8)
    inits = [
        f32("xs", [], [0.02]), raw("xz", np.array(128, np.uint8), TensorProto.UINT8),
        raw("w", w, TensorProto.INT8),
        f32("ws", [8], np.linspace(0.005, 0.02, 8)),
        raw("wz", np.zeros(8, np.int8), TensorProto.INT8),
        raw("b", rng.integers(-500, 500, 8).astype(np.int32), TensorProto.INT32),
        f32("ys", [], [0.05]), raw("yz", np.array(120, np.uint8), TensorProto.UINT8),
        raw("mw", mw, TensorProto.INT8), f32("mws", [5], np.linspace(0.01, 0.03, 5)),
        raw("mwz", np.zeros(5, np.int8), TensorProto.INT8),
        f32("ms", [], [0.1]), raw("mz", np.array(100, np.uint8), TensorProto.UINT8),
        raw("wu", wu, TensorProto.UINT8),
        raw("wuz", np.array(128, np.uint8), TensorProto.UINT8),
        raw("mu", mu, TensorProto.UINT8),
        raw("muz", np.array(128, np.uint8), TensorProto.UINT8),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("QLinearConv", ["xq", "xs", "xz", "w", "ws", "wz",
                                         "ys", "yz", "b"], ["cq"],
                         pads=[1, 1, 1, 1]),
        helper.make_node("DequantizeLinear", ["cq", "ys", "yz"], ["c"]),
        helper.make_node("QLinearMatMul", ["cq", "ys", "yz", "mw", "mws",
                                           "mwz", "ms", "mz"], ["mq"]),
        helper.make_node("DequantizeLinear", ["mq", "ms", "mz"], ["m"]),
        helper.make_node("DynamicQuantizeLinear", ["x"], ["dq", "ds", "dz"]),
        helper.make_node("ConvInteger", ["dq", "wu", "dz", "wuz"], ["ci"],
                         pads=[1, 1, 1, 1]),
        helper.make_node("MatMulInteger", ["dq", "mu", "dz", "muz"], ["mi"]),
    ]
    return model(nodes, [vi("x", F32, [1, 3, 5, 6])],
                 [vi("c", F32, [1, 8, 5, 6]), vi("m", F32, [1, 8, 5, 5]),
                  vi("ci", TensorProto.INT32, [1, 8, 5, 6]),
                  vi("mi", TensorProto.INT32, [1, 3, 5, 5])],
                 inits, opset=13)


@case("quantized-microsoft-ops")
def quantized_microsoft_ops():
    # ONNX Runtime's com.microsoft quantized ops, as its quantizer writes
    # them for channels-first models: elementwise, concat and pools on u8
    # (each op's output scale and zero point the next one's input ones),
    # and the matmuls of dynamic quantization with a float result.
    rng = np.random.default_rng(33)
    u8 = TensorProto.UINT8
    ms = "com.microsoft"

    def q(name, scale, zero):
        return [f32(name + "s", [], [scale]),
                raw(name + "z", np.array(zero, np.uint8), u8)]
    inits = (q("x", 0.01, 128) + q("y", 0.004, 0) + q("l", 0.008, 40) +
             q("a", 0.01, 10) + q("m", 0.003, 5) + q("c", 0.012, 3) +
             q("p", 0.01, 2) + q("g", 0.009, 1) + q("t", 0.02, 128))
    bw = rng.integers(-127, 128, (5, 4)).astype(np.int8)
    inits += [raw("bw", bw, TensorProto.INT8),
              f32("bws", [4], [0.01, 0.02, 0.015, 0.03]),
              raw("bwz", np.array([0, 3, -2, 1], np.int8), TensorProto.INT8),
              f32("bias", [4], [0.5, -0.25, 1.0, 0.0])]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("QLinearSigmoid", ["xq", "xs", "xz", "ys", "yz"],
                         ["sq"], domain=ms),
        helper.make_node("QLinearLeakyRelu", ["xq", "xs", "xz", "ls", "lz"],
                         ["lq"], domain=ms, alpha=0.2),
        helper.make_node("QLinearAdd", ["sq", "ys", "yz", "lq", "ls", "lz",
                                        "as", "az"], ["aq"], domain=ms),
        helper.make_node("QLinearMul", ["sq", "ys", "yz", "lq", "ls", "lz",
                                        "ms", "mz"], ["mq"], domain=ms),
        helper.make_node("QLinearConcat", ["cs", "cz", "aq", "as", "az",
                                           "mq", "ms", "mz"], ["cq"],
                         domain=ms, axis=1),
        helper.make_node("QLinearAveragePool", ["cq", "cs", "cz", "ps", "pz"],
                         ["pq"], domain=ms, kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1], channels_last=0),
        helper.make_node("QLinearGlobalAveragePool",
                         ["pq", "ps", "pz", "gs", "gz"], ["gq"], domain=ms,
                         channels_last=0),
        helper.make_node("DequantizeLinear", ["pq", "ps", "pz"], ["p"]),
        helper.make_node("DequantizeLinear", ["gq", "gs", "gz"], ["g"]),
        helper.make_node("QuantizeLinear", ["t", "ts", "tz"], ["tq"]),
        helper.make_node("MatMulIntegerToFloat",
                         ["tq", "bw", "ts", "bws", "tz", "bwz", "bias"],
                         ["mif"], domain=ms),
        helper.make_node("DynamicQuantizeMatMul",
                         ["t", "bw", "bws", "bwz", "bias"], ["dqm"],
                         domain=ms),
        # QGemm of B [N, K] (transB) with an int32 bias, quantized, and at
        # half alpha with a float result.
        helper.make_node("QGemm", ["tq", "ts", "tz", "gw", "bws", "bwz",
                                   "gc", "qs", "qz"], ["qgq"], domain=ms,
                         transB=1),
        helper.make_node("DequantizeLinear", ["qgq", "qs", "qz"], ["qg"]),
        helper.make_node("QGemm", ["tq", "ts", "tz", "bw", "bws", "bwz",
                                   "gc"], ["qgf"], domain=ms, alpha=0.5),
        helper.make_node("QLinearSoftmax", ["tq", "ts", "tz", "ss", "sz"],
                         ["smq"], domain=ms, axis=-1, opset=13),
        helper.make_node("DequantizeLinear", ["smq", "ss", "sz"], ["sm"]),
    ]
    inits += [raw("gw", np.ascontiguousarray(bw.T), TensorProto.INT8),
              raw("gc", rng.integers(-300, 300, 4).astype(np.int32),
                  TensorProto.INT32)]
    inits += q("q", 0.05, 100) + q("s", 1.0 / 256, 0)
    return model(nodes, [vi("x", F32, [1, 4, 6, 6]), vi("t", F32, [3, 5])],
                 [vi("p", F32, [1, 8, 6, 6]), vi("g", F32, [1, 8, 1, 1]),
                  vi("mif", F32, [3, 4]), vi("dqm", F32, [3, 4]),
                  vi("qg", F32, [3, 4]), vi("qgf", F32, [3, 4]),
                  vi("sm", F32, [3, 5])],
                 inits, opset=13, extra_opsets=[(ms, 1)])


@case("if-errors")
def if_errors(out):
    # A branch output nothing defines (OUT itself), a missing else_branch
    # (OUT.missing.onnx), a branch reading an undefined value
    # (OUT.read.onnx).
    then_g = helper.make_graph([], "then", [], [vi("nowhere", F32, [2])])
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["e"])], "else", [],
        [vi("e", F32, [2])])
    io = ([vi("c", TensorProto.BOOL, []), vi("x", F32, [2])],
          [vi("y", F32, [2])])
    models = {
        "output": [helper.make_node("If", ["c"], ["y"], name="undefined_out",
                                    then_branch=then_g,
                                    else_branch=else_g)],
        "missing": [helper.make_node("If", ["c"], ["y"], name="one_branch",
                                     then_branch=else_g)],
        "read": [helper.make_node(
            "If", ["c"], ["y"], name="bad_read",
            then_branch=helper.make_graph(
                [helper.make_node("Neg", ["ghost"], ["t"])], "then", [],
                [vi("t", F32, [2])]),
            else_branch=else_g)],
    }
    for suffix in ("missing", "read"):
        onnx.save(model(models[suffix], *io), out + "." + suffix + ".onnx")
    return model(models["output"], *io)


@case("no-graph")
def no_graph():
    m = onnx.ModelProto()
    m.ir_version = 8
    m.opset_import.append(helper.make_opsetid("", 17))
    return m


def main(argv):
    if len(argv) == 2 and argv[1] == "--list":
        print("\n".join(sorted(CASES)))
        return 0
    if len(argv) != 3 or argv[1] not in CASES:
        sys.stderr.write("usage: make_model.py CASE OUT.onnx (--list for cases)\n")
        return 2
    fn = CASES[argv[1]]
    out = argv[2]
    result = fn(out) if fn.__code__.co_argcount == 1 else fn()
    data = result if isinstance(result, bytes) else result.SerializeToString()
    with open(out, "wb") as f:
        f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
