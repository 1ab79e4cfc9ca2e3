#!/usr/bin/env python3
"""Check the canonicalization folds numerically with ONNX Runtime.

For every case, a small model built here with onnx.helper goes through

    strider-translate --import-onnx M.onnx -o M.lir
    strider-opt M.lir --canonicalize -o C.lir
    strider-translate --export-onnx C.lir -o E.onnx

and E.onnx must compute what M.onnx computes under ONNX Runtime on the same
random inputs (numpy allclose, rtol 1e-4, atol 1e-5), with the same output
names, after the ops the case expects to fold are gone from C.lir. Each case
runs twice: as imported, and with every rank-4 value of M.lir made
channels-last (constant data keeps its own layout, so the folds must convert
it; rank-4 graph inputs and outputs are then NHWC in E.onnx).

Usage: canonicalize_ort.py --work DIR [--tools-dir DIR]
Prints one line per case and variant; exits 1 if any fails.
"""
import argparse
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

RTOL = 1e-4
ATOL = 1e-5
NCHW_TO_NHWC = (0, 2, 3, 1)


class CaseError(Exception):
    pass


def rand(shape, seed, positive=False):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return np.abs(a) + 0.5 if positive else a


def floats(name, array):
    return numpy_helper.from_array(np.asarray(array, dtype=np.float32), name)


def ints(name, values):
    return numpy_helper.from_array(np.asarray(values, dtype=np.int64), name)


def bn_params(prefix, channels, seed):
    """Scale, bias, mean and (positive) variance initializers."""
    names = [f"{prefix}_{k}" for k in ("scale", "bias", "mean", "var")]
    inits = [floats(names[0], rand(channels, seed)),
             floats(names[1], rand(channels, seed + 1)),
             floats(names[2], rand(channels, seed + 2)),
             floats(names[3], rand(channels, seed + 3, positive=True))]
    return names, inits


def model(name, nodes, inputs, outputs, inits, opset=13):
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(graph,
                          opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="canonicalize_ort")
    m.ir_version = 7
    return m


def tin(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def tout(name):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, None)


# ---------------------------------------------------------------------------
# Cases: (model, ops that must be gone after --canonicalize)
# ---------------------------------------------------------------------------

def conv_bn_relu():
    bn, inits = bn_params("bn", 8, 10)
    return model("conv_bn_relu", [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c"] + bn, ["n"],
                         epsilon=1e-3),
        helper.make_node("Relu", ["n"], ["y"]),
    ], [tin("x", [2, 3, 9, 9])], [tout("y")],
        [floats("w", rand((8, 3, 3, 3), 1)), floats("b", rand(8, 2))] + inits)


def conv_group2_bn_no_bias():
    # The normalization's result is the graph output: it keeps its name.
    bn, inits = bn_params("bn", 6, 20)
    return model("conv_group2_bn_no_bias", [
        helper.make_node("Conv", ["x", "w"], ["c"], group=2, strides=[2, 2]),
        helper.make_node("BatchNormalization", ["c"] + bn, ["y"]),
    ], [tin("x", [1, 4, 8, 8])], [tout("y")],
        [floats("w", rand((6, 2, 3, 3), 3))] + inits)


def conv_transpose_group2_bn():
    # W: [C_in = 4, C_out / group = 3, 3, 3]; C_out = 6.
    bn, inits = bn_params("bn", 6, 30)
    return model("conv_transpose_group2_bn", [
        helper.make_node("ConvTranspose", ["x", "w", "b"], ["c"], group=2,
                         strides=[2, 2], output_padding=[1, 1]),
        helper.make_node("BatchNormalization", ["c"] + bn, ["y"]),
    ], [tin("x", [2, 4, 5, 5])], [tout("y")],
        [floats("w", rand((4, 3, 3, 3), 4)), floats("b", rand(6, 5))] + inits)


def conv_transpose_bn_no_bias():
    bn, inits = bn_params("bn", 4, 40)
    return model("conv_transpose_bn_no_bias", [
        helper.make_node("ConvTranspose", ["x", "w"], ["c"], pads=[1, 1, 0, 0]),
        helper.make_node("BatchNormalization", ["c"] + bn, ["n"]),
        helper.make_node("Sigmoid", ["n"], ["y"]),
    ], [tin("x", [1, 3, 6, 6])], [tout("y")],
        [floats("w", rand((3, 4, 2, 2), 6))] + inits)


def conv1d_group3_bn():
    bn, inits = bn_params("bn", 6, 50)
    return model("conv1d_group3_bn", [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], group=3,
                         pads=[1, 1]),
        helper.make_node("BatchNormalization", ["c"] + bn, ["y"]),
    ], [tin("x", [2, 6, 10])], [tout("y")],
        [floats("w", rand((6, 2, 3), 7)), floats("b", rand(6, 8))] + inits)


def shape_chain():
    # Identity, inference Dropout, a cancelling Transpose pair and the
    # exporter's Shape -> Gather -> Unsqueeze -> Concat -> Reshape target.
    return model("shape_chain", [
        helper.make_node("Identity", ["x"], ["xi"]),
        helper.make_node("Transpose", ["xi"], ["t1"], perm=[0, 2, 3, 1]),
        helper.make_node("Transpose", ["t1"], ["t2"], perm=[0, 3, 1, 2]),
        helper.make_node("Dropout", ["t2"], ["d"]),
        helper.make_node("Shape", ["d"], ["s"]),
        helper.make_node("Gather", ["s", "i0"], ["d0"], axis=0),
        helper.make_node("Unsqueeze", ["d0", "axes"], ["u0"]),
        helper.make_node("Concat", ["u0", "minus1"], ["target"], axis=0),
        helper.make_node("Reshape", ["d", "target"], ["r"]),
        helper.make_node("Relu", ["r"], ["rr"]),
        helper.make_node("Identity", ["rr"], ["y"]),
    ], [tin("x", [2, 3, 4, 5])], [tout("y")],
        [ints("i0", 0), ints("axes", [0]), ints("minus1", [-1])])


CASES = [
    (conv_bn_relu, ["BatchNormalization"]),
    (conv_group2_bn_no_bias, ["BatchNormalization"]),
    (conv_transpose_group2_bn, ["BatchNormalization"]),
    (conv_transpose_bn_no_bias, ["BatchNormalization"]),
    (conv1d_group3_bn, ["BatchNormalization"]),
    (shape_chain, ["Identity", "Dropout", "Transpose", "Shape", "Gather",
                   "Unsqueeze", "Concat"]),
]


# ---------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------

# Rank-4 types outside constant data (`> : tensor<...>` is data's type).
RANK4_TYPE = re.compile(r"(?<!> : )tensor<((?:[^\s<>,]+ x ){4})([a-z0-9?]+)>")


def with_channels_last(text):
    return RANK4_TYPE.sub(lambda m: f"tensor<{m.group(1)}{m.group(2)}, nhwc>",
                          text)


class Tools:
    def __init__(self, tools_dir):
        self.translate = self.find("strider-translate", tools_dir)
        self.opt = self.find("strider-opt", tools_dir)

    @staticmethod
    def find(name, tools_dir):
        path = (os.path.join(tools_dir, name) if tools_dir
                else shutil.which(name))
        if not path or not os.access(path, os.X_OK):
            sys.exit(f"canonicalize_ort.py: cannot find {name}")
        return path

    @staticmethod
    def run(*args):
        p = subprocess.run(args, capture_output=True, text=True)
        if p.returncode != 0:
            raise CaseError(f"`{os.path.basename(args[0])} "
                            f"{' '.join(args[1:])}` failed: {p.stderr.strip()}")


def session(path):
    so = ort.SessionOptions()
    # ORT's own fusions would hide whether Strider's export is right.
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    try:
        return ort.InferenceSession(path, so,
                                    providers=["CPUExecutionProvider"])
    except Exception as e:  # ORT raises its own exception types
        raise CaseError(f"onnxruntime cannot load {os.path.basename(path)}: "
                        f"{str(e).strip().splitlines()[0]}")


def compare(ref_sess, ref_feeds, got_sess, got_feeds, physical):
    ref_names = [o.name for o in ref_sess.get_outputs()]
    got_names = [o.name for o in got_sess.get_outputs()]
    if ref_names != got_names:
        raise CaseError(f"outputs {got_names}, expected {ref_names}")
    refs = ref_sess.run(None, ref_feeds)
    gots = got_sess.run(None, got_feeds)
    for name, r, g in zip(ref_names, refs, gots):
        if physical and r.ndim == 4:
            g = np.transpose(g, np.argsort(NCHW_TO_NHWC))
        if r.shape != g.shape:
            raise CaseError(f"output '{name}' has shape {list(g.shape)}, "
                            f"expected {list(r.shape)}")
        if not np.allclose(g, r, rtol=RTOL, atol=ATOL):
            diff = np.max(np.abs(g.astype(np.float64) - r))
            raise CaseError(f"output '{name}' differs (max abs diff {diff:g})")


def run_case(tools, build, absent, work):
    m = build()
    name = m.graph.name
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, "model.onnx")
    onnx.save(m, src)
    lir = os.path.join(d, "model.lir")
    tools.run(tools.translate, "--import-onnx", src, "-o", lir)
    with open(lir) as f:
        text = f.read()
    ref = session(src)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    feeds = {i.name: rng.standard_normal(i.shape).astype(np.float32)
             for i in ref.get_inputs()}

    lines = []
    for variant, variant_text in (("", text),
                                  (" (nhwc)", with_channels_last(text))):
        stem = "nhwc" if variant else "nchw"
        inp = os.path.join(d, stem + ".lir")
        with open(inp, "w") as f:
            f.write(variant_text)
        out = os.path.join(d, stem + ".canonical.lir")
        exported = os.path.join(d, stem + ".canonical.onnx")
        tools.run(tools.opt, inp, "--canonicalize", "-o", out)
        with open(out) as f:
            canonical = f.read()
        left = [op for op in absent if re.search(rf"\b{op}\(", canonical)]
        if left:
            raise CaseError(f"{name}{variant}: not folded: {', '.join(left)}")
        tools.run(tools.translate, "--export-onnx", out, "-o", exported)
        got = session(exported)
        got_feeds = {k: (np.transpose(v, NCHW_TO_NHWC)
                         if variant and v.ndim == 4 else v)
                     for k, v in feeds.items()}
        try:
            compare(ref, feeds, got, got_feeds, physical=bool(variant))
        except CaseError as e:
            raise CaseError(f"{name}{variant}: {e}")
        lines.append(f"PASS {name}{variant}")
    return lines


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--work", required=True, help="directory for the models")
    p.add_argument("--tools-dir", help="directory with strider-translate and "
                   "strider-opt (default: PATH)")
    a = p.parse_args()
    tools = Tools(a.tools_dir)
    os.makedirs(a.work, exist_ok=True)
    failures = 0
    for build, absent in CASES:
        try:
            for line in run_case(tools, build, absent, a.work):
                print(line, flush=True)
        except CaseError as e:
            print(f"FAIL {e}", flush=True)
            failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
