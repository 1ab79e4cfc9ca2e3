#!/usr/bin/env python3
"""Generate Strider's benchmark model set: deterministic ONNX models of real
CNN architectures, with random inputs and ONNX Runtime's outputs for them.

Usage:
    make_model_set.py --out DIR [--variant small|full|both] [--only NAME ...]
                      [--list]

Models (each also as NAME_nhwc, see below):
    resnet50         bottlenecks (Conv+BN+Relu), residual Add, projection
                     shortcuts, MaxPool stem, GlobalAveragePool, Flatten, Gemm
    mobilenetv2      inverted residuals: 1x1 expand, depthwise 3x3, 1x1
                     project, Clip(0, 6) as ReLU6, residual Add
    densenet121      dense blocks (BN-Relu-Conv1x1-BN-Relu-Conv3x3 + Concat),
                     transitions with AveragePool
    unet             encoder (double conv + MaxPool), decoder (Resize x2,
                     linear and nearest, skip Concat, double conv), 1x1 head
    vgg16            conv3x3 stacks, MaxPool, Flatten, Gemm-Relu-Gemm-Relu-Gemm
    shufflenet       ShuffleNet-V2 units: Split, channel shuffle as
                     Reshape(N,g,C/g,H,W) -> Transpose(0,2,1,3,4) -> Reshape
    efficientnet_se  EfficientNet-B0 MBConv with squeeze-excite, SiLU as
                     x*Sigmoid(x)
    conv3d           R3D-style 3D CNN: Conv3D+BN+Relu, MaxPool3D, residual,
                     GlobalAveragePool, Flatten, Gemm (input N,C,D,H,W)
    layout_hostile   Softmax over channels, ReduceMean over H,W, attention over
                     HW tokens (Reshape/Transpose/MatMul/Softmax), Flatten of a
                     spatial map -> Gemm, DepthToSpace
    NAME_nhwc        same network and weights, but the graph input is
                     channels-last (N,H,W,C / N,D,H,W,C) followed by a
                     Transpose to channels-first, and every rank>=4 graph
                     output is transposed back to channels-last (the shape of
                     TensorFlow/Keras exports). Its input is the base model's
                     input transposed, and the script checks that its outputs
                     are the base model's outputs transposed.

Variants: `small` (CI: 32x32 inputs, 8x32x32 for conv3d; reduced widths and
depth; every file < 2 MB, a few ms in ORT) and `full` (the real architecture
sizes, batch 1, 224x224 inputs; conv3d uses a 16x112x112 clip as R3D does).

Everything is deterministic: weights come from numpy generators seeded by
the model name (conv/Gemm weights normal * sqrt(2/fan_in), BatchNormalization
with non-trivial scale, bias, mean and variance), node and tensor names are
fixed, so a rerun writes byte-identical .onnx files. Models are opset 17,
IR version 8 (readable by ONNX 1.12's C++ library and by onnxruntime). A
protobuf over 2 GB would be saved with its weights as ONNX external data in
DIR/<variant>/<name>.onnx.weights; no model of the set needs it (full vgg16,
the largest, is ~550 MB and is stored inline).

Output layout (per variant):
    DIR/<variant>/<name>.onnx
    DIR/<variant>/<name>.data/<input name>.npy    random input (float32)
    DIR/<variant>/<name>.data/<output name>.npy   ORT's output for it
    DIR/<variant>/manifest.json  (merged with the entries of earlier runs)
Graph inputs are named input_0, input_1, ... and graph outputs output_0,
output_1, ... (in graph order), so the .npy files are input_<i>.npy and
output_<i>.npy. Reference outputs come from onnxruntime's
CPUExecutionProvider with graph optimizations disabled.

Every model is checked with onnx.checker.check_model(full_check=True), the
shapes the builder tracked are checked against ONNX shape inference, and the
model is run under ORT. One line per model is printed with its node count,
parameter count (conv/Gemm weights and biases, BN scale and bias; BN running
statistics and shape constants are not counted, as torchvision counts), and
GFLOP = 2 * MACs / 1e9, MACs of Conv/ConvTranspose/Gemm/MatMul computed from
the inferred shapes. manifest.json holds these numbers and more per model.
"""
import argparse
import collections
import hashlib
import json
import math
import os
import sys
import time
import zlib

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8
PRODUCER = "strider-make_model_set"
# Inline weights up to this many bytes, external data beyond (protobuf limit).
EXTERNAL_DATA_THRESHOLD = 1_800_000_000
SMALL_MAX_BYTES = 2 * 1024 * 1024


def seed_of(name, salt=0):
    return zlib.crc32(name.encode()) + salt


def _tup(v, n):
    return list(v) if isinstance(v, (list, tuple)) else [v] * n


def broadcast(a, b):
    """numpy broadcasting of two static shapes."""
    n = max(len(a), len(b))
    a = [1] * (n - len(a)) + list(a)
    b = [1] * (n - len(b)) + list(b)
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            raise ValueError(f"cannot broadcast {a} and {b}")
        out.append(max(x, y))
    return out


# ---------------------------------------------------------------------------
# Graph builder
# ---------------------------------------------------------------------------

class Builder:
    """Builds one ONNX graph, tracking every tensor's static shape.

    Methods take a tensor name and return the output tensor name. Tensor
    names are the node names (op_<k>), weights are <node>.<role>.
    """

    def __init__(self, name, seed, channels_last=False):
        self.name = name
        self.rng = np.random.default_rng(seed)
        self.channels_last = channels_last
        self.nodes = []
        self.inits = []
        self.inputs = []
        self.outputs = []
        self.shapes = {}
        self.params = 0
        self._count = collections.Counter()
        self._consts = {}

    # -- bookkeeping -------------------------------------------------------

    def shape(self, x):
        return list(self.shapes[x])

    def channels(self, x):
        return self.shapes[x][1]

    def _fresh(self, op):
        key = op.lower()
        self._count[key] += 1
        return f"{key}_{self._count[key]}"

    def node(self, op, inputs, shape, n_out=1, shapes=None, name=None,
             **attrs):
        """Add a node; returns its output name (or list when n_out > 1).
        `name` is one reserved with _fresh() (to name weights after it)."""
        name = name or self._fresh(op)
        outs = [name] if n_out == 1 else [f"{name}_{i}" for i in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=name,
                                           **attrs))
        for o, s in zip(outs, shapes or [shape]):
            self.shapes[o] = list(s)
        return outs[0] if n_out == 1 else outs

    def param(self, name, array):
        """A trainable weight (counted in the parameter count)."""
        array = np.asarray(array, dtype=np.float32)
        self.inits.append(numpy_helper.from_array(array, name))
        self.params += array.size
        return name

    def buffer(self, name, array):
        """A non-trainable initializer (BN statistics)."""
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def const(self, array, dtype):
        """A shared constant (shapes, scales, clip bounds)."""
        array = np.asarray(array, dtype=dtype)
        key = (array.dtype.str, array.shape, array.tobytes())
        if key not in self._consts:
            name = f"const_{len(self._consts) + 1}"
            self.inits.append(numpy_helper.from_array(array, name))
            self._consts[key] = name
        return self._consts[key]

    def he(self, shape, fan_in, gain=2.0):
        std = math.sqrt(gain / fan_in)
        return self.rng.standard_normal(shape).astype(np.float32) * std

    def uniform(self, lo, hi, n):
        return self.rng.uniform(lo, hi, n).astype(np.float32)

    # -- graph inputs and outputs -----------------------------------------

    def input(self, shape):
        """A graph input of logical (channels-first) shape; in the nhwc
        variant the graph input is channels-last, followed by a Transpose."""
        name = f"input_{len(self.inputs)}"
        rank = len(shape)
        if self.channels_last and rank >= 3:
            perm = [0] + list(range(2, rank)) + [1]
            phys = [shape[p] for p in perm]
            self.inputs.append(helper.make_tensor_value_info(
                name, TensorProto.FLOAT, phys))
            self.shapes[name] = phys
            inv = [0, rank - 1] + list(range(1, rank - 1))
            return self.transpose(name, inv)
        self.inputs.append(helper.make_tensor_value_info(
            name, TensorProto.FLOAT, list(shape)))
        self.shapes[name] = list(shape)
        return name

    def output(self, x):
        """Make x the next graph output (output_<i>)."""
        rank = len(self.shapes[x])
        if self.channels_last and rank >= 4:
            x = self.transpose(x, [0] + list(range(2, rank)) + [1])
        new = f"output_{len(self.outputs)}"
        for n in self.nodes:
            for i, v in enumerate(n.input):
                if v == x:
                    n.input[i] = new
            for i, v in enumerate(n.output):
                if v == x:
                    n.output[i] = new
        self.shapes[new] = self.shapes.pop(x)
        self.outputs.append(helper.make_tensor_value_info(
            new, TensorProto.FLOAT, self.shapes[new]))
        return new

    def model(self):
        graph = helper.make_graph(self.nodes, self.name, self.inputs,
                                  self.outputs, self.inits)
        m = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", OPSET)],
            producer_name=PRODUCER, producer_version="1")
        m.ir_version = IR_VERSION
        return m

    # -- convolution and normalization ------------------------------------

    def conv(self, x, cout, k, stride=1, pad=None, group=1, dilation=1,
             bias=True, bias_scale=0.1):
        n, cin, *sp = self.shapes[x]
        nd = len(sp)
        k, s, d = _tup(k, nd), _tup(stride, nd), _tup(dilation, nd)
        p = [(kk - 1) * dd // 2 for kk, dd in zip(k, d)] if pad is None \
            else _tup(pad, nd)
        assert cin % group == 0 and cout % group == 0, (cin, cout, group)
        out_sp = [(i + 2 * pp - dd * (kk - 1) - 1) // ss + 1
                  for i, pp, dd, kk, ss in zip(sp, p, d, k, s)]
        name = self._fresh("Conv")
        fan_in = cin // group * math.prod(k)
        ins = [x, self.param(f"{name}.weight",
                             self.he([cout, cin // group] + k, fan_in))]
        if bias:
            ins.append(self.param(f"{name}.bias",
                                  self.uniform(-bias_scale, bias_scale, cout)))
        return self.node("Conv", ins, [n, cout] + out_sp, name=name,
                         kernel_shape=k, strides=s, pads=p + p, dilations=d,
                         group=group)

    def bn(self, x, gamma=(0.5, 1.5)):
        c = self.channels(x)
        name = self._fresh("BatchNormalization")
        ins = [x,
               self.param(f"{name}.scale", self.uniform(*gamma, c)),
               self.param(f"{name}.bias", self.uniform(-0.2, 0.2, c)),
               self.buffer(f"{name}.mean", self.uniform(-0.2, 0.2, c)),
               self.buffer(f"{name}.var", self.uniform(0.5, 2.0, c))]
        return self.node("BatchNormalization", ins, self.shapes[x], name=name,
                         epsilon=1e-5)

    def conv_bn(self, x, cout, k, stride=1, group=1, gamma=(0.5, 1.5),
                pad=None):
        return self.bn(self.conv(x, cout, k, stride, pad=pad, group=group,
                                 bias=False), gamma)

    def conv_bn_relu(self, x, cout, k, stride=1, group=1, pad=None):
        return self.relu(self.conv_bn(x, cout, k, stride, group, pad=pad))

    def conv_bn_relu6(self, x, cout, k, stride=1, group=1):
        return self.relu6(self.conv_bn(x, cout, k, stride, group))

    def conv_bn_silu(self, x, cout, k, stride=1, group=1):
        return self.silu(self.conv_bn(x, cout, k, stride, group))

    def bn_relu_conv(self, x, cout, k, stride=1):
        return self.conv(self.relu(self.bn(x)), cout, k, stride, bias=False)

    # -- elementwise -------------------------------------------------------

    def _unary(self, op, x, **attrs):
        return self.node(op, [x], self.shapes[x], **attrs)

    def relu(self, x):
        return self._unary("Relu", x)

    def sigmoid(self, x):
        return self._unary("Sigmoid", x)

    def relu6(self, x):
        return self.node("Clip", [x, self.const(0.0, np.float32),
                                  self.const(6.0, np.float32)],
                         self.shapes[x])

    def silu(self, x):
        return self.mul(x, self.sigmoid(x))

    def _binary(self, op, a, b):
        return self.node(op, [a, b], broadcast(self.shapes[a],
                                               self.shapes[b]))

    def add(self, a, b):
        return self._binary("Add", a, b)

    def mul(self, a, b):
        return self._binary("Mul", a, b)

    def scale(self, x, value):
        return self.node("Mul", [x, self.const(value, np.float32)],
                         self.shapes[x])

    def softmax(self, x, axis):
        return self._unary("Softmax", x, axis=axis)

    # -- pooling and shape ops ---------------------------------------------

    def _pool(self, op, x, k, stride, pad):
        n, c, *sp = self.shapes[x]
        nd = len(sp)
        k, s, p = _tup(k, nd), _tup(stride, nd), _tup(pad, nd)
        out_sp = [(i + 2 * pp - kk) // ss + 1
                  for i, pp, kk, ss in zip(sp, p, k, s)]
        return self.node(op, [x], [n, c] + out_sp, kernel_shape=k, strides=s,
                         pads=p + p)

    def maxpool(self, x, k, stride, pad=0):
        return self._pool("MaxPool", x, k, stride, pad)

    def avgpool(self, x, k, stride, pad=0):
        return self._pool("AveragePool", x, k, stride, pad)

    def gap(self, x):
        s = self.shapes[x]
        return self.node("GlobalAveragePool", [x], s[:2] + [1] * (len(s) - 2))

    def reduce_mean(self, x, axes, keepdims=1):
        s = self.shapes[x]
        axes = [a % len(s) for a in axes]
        out = [1 if i in axes else d for i, d in enumerate(s)] if keepdims \
            else [d for i, d in enumerate(s) if i not in axes]
        return self.node("ReduceMean", [x], out, axes=axes,
                         keepdims=keepdims)

    def flatten(self, x, axis=1):
        s = self.shapes[x]
        return self.node("Flatten", [x], [math.prod(s[:axis]),
                                          math.prod(s[axis:])], axis=axis)

    def reshape(self, x, shape):
        assert math.prod(shape) == math.prod(self.shapes[x]), (shape, x)
        return self.node("Reshape", [x, self.const(shape, np.int64)], shape)

    def transpose(self, x, perm):
        s = self.shapes[x]
        return self.node("Transpose", [x], [s[p] for p in perm], perm=perm)

    def concat(self, xs, axis=1):
        s = self.shape(xs[0])
        s[axis] = sum(self.shapes[x][axis] for x in xs)
        return self.node("Concat", xs, s, axis=axis)

    def split(self, x, sizes, axis=1):
        s = self.shapes[x]
        assert sum(sizes) == s[axis]
        shapes = [s[:axis] + [n] + s[axis + 1:] for n in sizes]
        return self.node("Split", [x, self.const(sizes, np.int64)], None,
                         n_out=len(sizes), shapes=shapes, axis=axis)

    def resize(self, x, factor, mode):
        s = self.shapes[x]
        scales = [1.0, 1.0] + [float(factor)] * (len(s) - 2)
        attrs = dict(mode=mode)
        if mode == "nearest":   # what PyTorch exports for nn.Upsample
            attrs.update(coordinate_transformation_mode="asymmetric",
                         nearest_mode="floor")
        else:
            attrs.update(coordinate_transformation_mode="half_pixel")
        return self.node("Resize", [x, "", self.const(scales, np.float32)],
                         [int(math.floor(d * f)) for d, f in zip(s, scales)],
                         **attrs)

    def depth_to_space(self, x, block):
        n, c, h, w = self.shapes[x]
        return self.node("DepthToSpace", [x],
                         [n, c // (block * block), h * block, w * block],
                         blocksize=block, mode="DCR")

    def matmul(self, a, b):
        sa, sb = self.shapes[a], self.shapes[b]
        assert sa[-1] == sb[-2], (sa, sb)
        batch = broadcast(sa[:-2], sb[:-2])
        return self.node("MatMul", [a, b], batch + [sa[-2], sb[-1]])

    def gemm(self, x, cout, gain=1.0):
        m, k = self.shapes[x]
        name = self._fresh("Gemm")
        w = self.param(f"{name}.weight", self.he([cout, k], k, gain))
        b = self.param(f"{name}.bias", self.uniform(-0.1, 0.1, cout))
        return self.node("Gemm", [x, w, b], [m, cout], name=name, transB=1)


# ---------------------------------------------------------------------------
# Architectures
# ---------------------------------------------------------------------------

# BN scale of the last BN of a residual branch: keeps the sum of many
# residual branches in a sane range without random data-driven statistics.
RESIDUAL_GAMMA = (0.2, 0.5)


def make_divisible(v, divisor=8):
    new = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new + divisor if new < 0.9 * v else new


def build_resnet50(b, size, stem, widths, blocks, classes, expansion=4):
    x = b.input([1, 3, size, size])
    x = b.conv_bn_relu(x, stem, 7, stride=2)
    x = b.maxpool(x, 3, 2, 1)
    for i, (width, n) in enumerate(zip(widths, blocks)):
        for j in range(n):
            x = bottleneck(b, x, width, width * expansion,
                           2 if i > 0 and j == 0 else 1)
    b.output(b.gemm(b.flatten(b.gap(x)), classes))


def bottleneck(b, x, width, cout, stride):
    cin = b.channels(x)
    y = b.conv_bn_relu(x, width, 1)
    y = b.conv_bn_relu(y, width, 3, stride)      # stride on the 3x3 (v1.5)
    y = b.conv_bn(y, cout, 1, gamma=RESIDUAL_GAMMA)
    if stride != 1 or cin != cout:
        x = b.conv_bn(x, cout, 1, stride)        # projection shortcut
    return b.relu(b.add(y, x))


def build_mobilenetv2(b, size, width, last, classes, settings, divisor=8):
    x = b.input([1, 3, size, size])
    x = b.conv_bn_relu6(x, make_divisible(32 * width, divisor), 3, 2)
    for t, c, n, s in settings:
        cout = make_divisible(c * width, divisor)
        for j in range(n):
            x = inverted_residual(b, x, cout, s if j == 0 else 1, t)
    x = b.conv_bn_relu6(x, last, 1)
    b.output(b.gemm(b.flatten(b.gap(x)), classes))


def inverted_residual(b, x, cout, stride, expand):
    cin = b.channels(x)
    hidden = cin * expand
    y = x
    if expand != 1:
        y = b.conv_bn_relu6(y, hidden, 1)
    y = b.conv_bn_relu6(y, hidden, 3, stride, group=hidden)    # depthwise
    if stride == 1 and cin == cout:
        return b.add(x, b.conv_bn(y, cout, 1, gamma=RESIDUAL_GAMMA))
    return b.conv_bn(y, cout, 1)


def build_densenet121(b, size, growth, blocks, init, bn_size, classes):
    x = b.input([1, 3, size, size])
    x = b.conv_bn_relu(x, init, 7, stride=2)
    x = b.maxpool(x, 3, 2, 1)
    for i, n in enumerate(blocks):
        for _ in range(n):
            y = b.bn_relu_conv(x, bn_size * growth, 1)
            y = b.bn_relu_conv(y, growth, 3)
            x = b.concat([x, y])
        if i != len(blocks) - 1:                  # transition
            x = b.bn_relu_conv(x, b.channels(x) // 2, 1)
            x = b.avgpool(x, 2, 2)
    x = b.relu(b.bn(x))
    b.output(b.gemm(b.flatten(b.gap(x)), classes))


def build_unet(b, size, widths, classes):
    x = b.input([1, 3, size, size])
    skips = []
    for i, w in enumerate(widths):
        if i:
            skips.append(x)
            x = b.maxpool(x, 2, 2)
        x = b.conv_bn_relu(b.conv_bn_relu(x, w, 3), w, 3)
    for i, (w, skip) in enumerate(zip(reversed(widths[:-1]),
                                      reversed(skips))):
        x = b.resize(x, 2, "linear" if i % 2 == 0 else "nearest")
        x = b.concat([skip, x])
        x = b.conv_bn_relu(b.conv_bn_relu(x, w, 3), w, 3)
    b.output(b.conv(x, classes, 1))


def build_vgg16(b, size, cfg, hidden, classes):
    x = b.input([1, 3, size, size])
    for v in cfg:
        x = b.maxpool(x, 2, 2) if v == "M" else b.relu(b.conv(x, v, 3))
    x = b.flatten(x)
    x = b.relu(b.gemm(x, hidden, gain=2.0))
    x = b.relu(b.gemm(x, hidden, gain=2.0))
    b.output(b.gemm(x, classes))


def build_shufflenet(b, size, stem, stages, repeats, last, classes):
    x = b.input([1, 3, size, size])
    x = b.conv_bn_relu(x, stem, 3, 2)
    x = b.maxpool(x, 3, 2, 1)
    for c, n in zip(stages, repeats):
        for j in range(n):
            x = shuffle_unit(b, x, c, 2 if j == 0 else 1)
    x = b.conv_bn_relu(x, last, 1)
    b.output(b.gemm(b.flatten(b.gap(x)), classes))


def shuffle_unit(b, x, cout, stride):
    half = cout // 2
    if stride == 1:
        c = b.channels(x)
        x1, x2 = b.split(x, [c // 2, c // 2])
    else:
        x1 = b.conv_bn(x, b.channels(x), 3, stride, group=b.channels(x))
        x1 = b.conv_bn_relu(x1, half, 1)
        x2 = x
    y = b.conv_bn_relu(x2, half, 1)
    y = b.conv_bn(y, half, 3, stride, group=half)
    y = b.conv_bn_relu(y, half, 1)
    return channel_shuffle(b, b.concat([x1, y]), 2)


def channel_shuffle(b, x, groups):
    n, c, h, w = b.shape(x)
    x = b.reshape(x, [n, groups, c // groups, h, w])
    x = b.transpose(x, [0, 2, 1, 3, 4])
    return b.reshape(x, [n, c, h, w])


def build_efficientnet_se(b, size, width, settings, last, classes,
                          divisor=8):
    x = b.input([1, 3, size, size])
    x = b.conv_bn_silu(x, make_divisible(32 * width, divisor), 3, 2)
    for e, k, s, c, n in settings:
        cout = make_divisible(c * width, divisor)
        for j in range(n):
            x = mbconv(b, x, cout, k, s if j == 0 else 1, e)
    x = b.conv_bn_silu(x, last, 1)
    b.output(b.gemm(b.flatten(b.gap(x)), classes))


def mbconv(b, x, cout, k, stride, expand):
    cin = b.channels(x)
    hidden = cin * expand
    y = b.conv_bn_silu(x, hidden, 1) if expand != 1 else x
    y = b.conv_bn_silu(y, hidden, k, stride, group=hidden)
    y = squeeze_excite(b, y, max(1, cin // 4))
    if stride == 1 and cin == cout:
        return b.add(x, b.conv_bn(y, cout, 1, gamma=RESIDUAL_GAMMA))
    return b.conv_bn(y, cout, 1)


def squeeze_excite(b, x, squeeze):
    s = b.gap(x)
    s = b.silu(b.conv(s, squeeze, 1))
    s = b.sigmoid(b.conv(s, b.channels(x), 1))
    return b.mul(x, s)                      # broadcast over H, W


def build_conv3d(b, frames, size, stem, stages, blocks, classes):
    x = b.input([1, 3, frames, size, size])
    x = b.conv_bn_relu(x, stem, [3, 7, 7], stride=[1, 2, 2], pad=[1, 3, 3])
    x = b.maxpool(x, 3, 2, 1)
    for i, (c, n) in enumerate(zip(stages, blocks)):
        for j in range(n):
            x = basic_block(b, x, c, 2 if i > 0 and j == 0 else 1)
    b.output(b.gemm(b.flatten(b.gap(x)), classes))


def basic_block(b, x, cout, stride):
    y = b.conv_bn_relu(x, cout, 3, stride)
    y = b.conv_bn(y, cout, 3, gamma=RESIDUAL_GAMMA)
    if stride != 1 or b.channels(x) != cout:
        x = b.conv_bn(x, cout, 1, stride)
    return b.relu(b.add(y, x))


def build_layout_hostile(b, size, width, dim, pool, classes, seg):
    x = b.input([1, 3, size, size])
    x = b.conv_bn_relu(x, width, 4, stride=4, pad=0)     # patchify
    # Softmax over the channel axis as a gate.
    g = b.softmax(b.conv(x, width, 1), axis=1)
    x = b.add(x, b.mul(x, g))
    # ReduceMean over the spatial axes (keepdims) as a channel scale.
    m = b.reduce_mean(x, [2, 3], keepdims=1)
    x = b.mul(x, b.sigmoid(b.conv(m, width, 1)))
    x = attention(b, x, dim)
    x = b.conv_bn_relu(x, width, 3)
    # Head 1: Flatten of a (pooled) spatial map -> Gemm: element order C,H,W.
    p = b.avgpool(x, pool, pool)
    b.output(b.gemm(b.flatten(p), classes))
    # Head 2: DepthToSpace upsampling, then Softmax over channels.
    d = b.depth_to_space(b.conv(x, 4 * seg, 3), 2)
    b.output(b.softmax(d, axis=1))


def attention(b, x, dim):
    """Single-head self-attention over the HW tokens of an NCHW map."""
    n, c, h, w = b.shape(x)
    q = b.reshape(b.conv(x, dim, 1), [n, dim, h * w])
    k = b.reshape(b.conv(x, dim, 1), [n, dim, h * w])
    v = b.reshape(b.conv(x, c, 1), [n, c, h * w])
    s = b.matmul(b.transpose(q, [0, 2, 1]), k)           # N, HW, HW
    a = b.softmax(b.scale(s, 1.0 / math.sqrt(dim)), axis=-1)
    o = b.matmul(a, b.transpose(v, [0, 2, 1]))           # N, HW, C
    o = b.reshape(b.transpose(o, [0, 2, 1]), [n, c, h, w])
    return b.add(x, b.conv(o, c, 1))


MBV2_SETTINGS = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                 (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
EFFNET_B0 = [(1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2),
             (6, 3, 2, 80, 3), (6, 5, 1, 112, 3), (6, 5, 2, 192, 4),
             (6, 3, 1, 320, 1)]
VGG16 = [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M",
         512, 512, 512, "M"]

# name -> (builder, {variant: config})
MODELS = {
    "resnet50": (build_resnet50, {
        "full": dict(size=224, stem=64, widths=[64, 128, 256, 512],
                     blocks=[3, 4, 6, 3], classes=1000),
        "small": dict(size=32, stem=16, widths=[16, 16, 32, 64],
                      blocks=[3, 4, 6, 3], classes=10),
    }),
    "mobilenetv2": (build_mobilenetv2, {
        "full": dict(size=224, width=1.0, last=1280, classes=1000,
                     settings=MBV2_SETTINGS),
        "small": dict(size=32, width=0.5, last=320, classes=10, divisor=16,
                      settings=[(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 2, 2),
                                (6, 64, 2, 2), (6, 96, 1, 1), (6, 160, 2, 2),
                                (6, 320, 1, 1)]),
    }),
    "densenet121": (build_densenet121, {
        "full": dict(size=224, growth=32, blocks=[6, 12, 24, 16], init=64,
                     bn_size=4, classes=1000),
        "small": dict(size=32, growth=32, blocks=[2, 4, 4, 2], init=64,
                      bn_size=2, classes=10),
    }),
    "unet": (build_unet, {
        "full": dict(size=224, widths=[64, 128, 256, 512, 1024], classes=2),
        "small": dict(size=32, widths=[16, 32, 48, 64], classes=2),
    }),
    "vgg16": (build_vgg16, {
        "full": dict(size=224, cfg=VGG16, hidden=4096, classes=1000),
        "small": dict(size=32, cfg=[16, 16, "M", 32, 32, "M", 48, 48, 48, "M",
                                    64, 64, 64, "M", 64, 64, 64, "M"],
                      hidden=128, classes=10),
    }),
    "shufflenet": (build_shufflenet, {
        "full": dict(size=224, stem=24, stages=[116, 232, 464],
                     repeats=[4, 8, 4], last=1024, classes=1000),
        "small": dict(size=32, stem=16, stages=[32, 64, 128],
                      repeats=[2, 3, 2], last=256, classes=10),
    }),
    "efficientnet_se": (build_efficientnet_se, {
        "full": dict(size=224, width=1.0, settings=EFFNET_B0, last=1280,
                     classes=1000),
        "small": dict(size=32, width=0.5, last=256, classes=10, divisor=16,
                      settings=[(1, 3, 1, 16, 1), (6, 3, 2, 24, 2),
                                (6, 5, 2, 40, 1), (6, 3, 2, 80, 2),
                                (6, 5, 1, 112, 1), (6, 5, 2, 192, 1),
                                (6, 3, 1, 320, 1)]),
    }),
    "conv3d": (build_conv3d, {
        "full": dict(frames=16, size=112, stem=64, stages=[64, 128, 256, 512],
                     blocks=[1, 1, 1, 1], classes=400),
        "small": dict(frames=8, size=32, stem=16, stages=[16, 32, 64],
                      blocks=[1, 1, 1], classes=10),
    }),
    "layout_hostile": (build_layout_hostile, {
        "full": dict(size=224, width=64, dim=32, pool=8, classes=1000,
                     seg=21),
        "small": dict(size=32, width=16, dim=16, pool=4, classes=10, seg=4),
    }),
}


def all_names():
    return [n for base in MODELS for n in (base, base + "_nhwc")]


def split_name(name):
    return (name[:-5], True) if name.endswith("_nhwc") else (name, False)


def build(name, variant):
    base, nhwc = split_name(name)
    fn, configs = MODELS[base]
    b = Builder(name, seed_of(base), channels_last=nhwc)
    fn(b, **configs[variant])
    return b


# ---------------------------------------------------------------------------
# Checks, MACs, reference data
# ---------------------------------------------------------------------------

def inferred_shapes(model):
    inf = onnx.shape_inference.infer_shapes(model, strict_mode=True,
                                            data_prop=True)
    shapes = {}
    for vi in list(inf.graph.value_info) + list(inf.graph.input) + \
            list(inf.graph.output):
        t = vi.type.tensor_type
        if t.HasField("shape"):
            shapes[vi.name] = [d.dim_value if d.HasField("dim_value") else None
                               for d in t.shape.dim]
    for init in model.graph.initializer:
        shapes[init.name] = list(init.dims)
    return shapes


def count_macs(model, shapes):
    macs = collections.Counter()
    for n in model.graph.node:
        if n.op_type == "Conv":
            w, y = shapes[n.input[1]], shapes[n.output[0]]
            macs[n.op_type] += math.prod(y) * math.prod(w[1:])
        elif n.op_type == "ConvTranspose":
            x, w = shapes[n.input[0]], shapes[n.input[1]]
            macs[n.op_type] += math.prod(x) * math.prod(w[1:])
        elif n.op_type == "Gemm":
            a, y = shapes[n.input[0]], shapes[n.output[0]]
            trans_a = any(at.name == "transA" and at.i for at in n.attribute)
            macs[n.op_type] += math.prod(y) * (a[0] if trans_a else a[1])
        elif n.op_type == "MatMul":
            a, y = shapes[n.input[0]], shapes[n.output[0]]
            macs[n.op_type] += math.prod(y) * a[-1]
    return macs


def reference_inputs(model, base, nhwc):
    """Seeded standard-normal inputs; the nhwc variant gets the base
    model's inputs transposed to channels-last."""
    rng = np.random.default_rng(seed_of(base, salt=1))
    feeds = {}
    for vi in model.graph.input:
        shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        if nhwc and len(shape) >= 3:
            logical = [shape[0], shape[-1]] + shape[1:-1]
            a = rng.standard_normal(logical).astype(np.float32)
            feeds[vi.name] = np.ascontiguousarray(
                a.transpose([0] + list(range(2, len(shape))) + [1]))
        else:
            feeds[vi.name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


def run_ort(path, feeds, repeats):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    outs = sess.run(names, feeds)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        sess.run(names, feeds)
        times.append(time.perf_counter() - t0)
    ms = 1e3 * (float(np.median(times)) if times else float("nan"))
    return dict(zip(names, outs)), ms


def to_channels_first(a):
    r = a.ndim
    return a.transpose([0, r - 1] + list(range(1, r - 1))) if r >= 4 else a


def save_model(model, path):
    """Save inline, or with external data when the protobuf would be too
    large. Returns the external data file name or None."""
    size = sum(len(t.raw_data) for t in model.graph.initializer)
    for f in (path, path + ".weights"):
        if os.path.exists(f):
            os.remove(f)
    if size < EXTERNAL_DATA_THRESHOLD:
        onnx.save_model(model, path)
        return None
    location = os.path.basename(path) + ".weights"
    onnx.save_model(model, path, save_as_external_data=True,
                    all_tensors_to_one_file=True, location=location,
                    size_threshold=1024)
    return location


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def generate(name, variant, out_dir, base_outputs):
    base, nhwc = split_name(name)
    t0 = time.perf_counter()
    b = build(name, variant)
    model = b.model()
    path = os.path.join(out_dir, name + ".onnx")
    ext = save_model(model, path)   # external data strips the weights
    onnx.checker.check_model(path if ext else model, full_check=True)
    shapes = inferred_shapes(model)
    for t, s in b.shapes.items():
        if shapes.get(t) != s:
            raise AssertionError(f"{name}: {t}: builder shape {s}, "
                                 f"inferred {shapes.get(t)}")
    macs = count_macs(model, shapes)
    build_s = time.perf_counter() - t0

    feeds = reference_inputs(model, base, nhwc)
    outs, ms = run_ort(path, feeds, repeats=5 if variant == "small" else 1)
    data_dir = os.path.join(out_dir, name + ".data")
    os.makedirs(data_dir, exist_ok=True)
    for k, v in list(feeds.items()) + list(outs.items()):
        np.save(os.path.join(data_dir, k + ".npy"), v)

    problems = []
    for k, v in outs.items():
        if not np.all(np.isfinite(v)):
            problems.append(f"{k} has non-finite values")
        elif np.abs(v).max() > 1e4:
            problems.append(f"{k} max |x| = {np.abs(v).max():.3g}")
    if nhwc:
        ref = base_outputs.get(base)
        if ref is not None:
            for k, v in outs.items():
                if not np.allclose(to_channels_first(v), ref[k], rtol=1e-4,
                                   atol=1e-4):
                    problems.append(f"{k} differs from {base}'s (transposed)")
    else:
        base_outputs[base] = outs

    file_bytes = os.path.getsize(path)
    if ext:
        file_bytes += os.path.getsize(os.path.join(out_dir, ext))
    if variant == "small" and file_bytes > SMALL_MAX_BYTES:
        problems.append(f"file is {file_bytes} bytes (> 2 MB)")
    total_macs = sum(macs.values())
    return dict(
        name=name, variant=variant, file=name + ".onnx", external_data=ext,
        file_bytes=file_bytes, sha256=sha256(path),
        nodes=len(model.graph.node),
        ops=dict(sorted(collections.Counter(
            n.op_type for n in model.graph.node).items())),
        params=b.params, macs=total_macs,
        macs_by_op=dict(sorted(macs.items())),
        gflop=round(2 * total_macs / 1e9, 6),
        inputs=[dict(name=k, shape=list(v.shape), dtype=str(v.dtype),
                     file=f"{name}.data/{k}.npy") for k, v in feeds.items()],
        outputs=[dict(name=k, shape=list(v.shape), dtype=str(v.dtype),
                      file=f"{name}.data/{k}.npy",
                      absmax=float(np.abs(v).max()), std=float(v.std()))
                 for k, v in outs.items()],
        ort_ms=round(ms, 3), build_s=round(build_s, 3),
        config=MODELS[base][1][variant], problems=problems)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", help="output directory")
    p.add_argument("--variant", choices=["small", "full", "both"],
                   default="small")
    p.add_argument("--only", nargs="+", metavar="NAME",
                   help="generate only these models")
    p.add_argument("--list", action="store_true",
                   help="list the model names and exit")
    a = p.parse_args()
    if a.list:
        print("\n".join(all_names()))
        return 0
    if not a.out:
        p.error("--out is required")
    names = all_names()
    if a.only:
        bad = [n for n in a.only if n not in names]
        if bad:
            p.error(f"unknown model(s) {', '.join(bad)}; see --list")
        names = [n for n in names if n in a.only]
    variants = ["small", "full"] if a.variant == "both" else [a.variant]

    failed = 0
    for variant in variants:
        out_dir = os.path.join(a.out, variant)
        os.makedirs(out_dir, exist_ok=True)
        manifest_path = os.path.join(out_dir, "manifest.json")
        manifest = {}
        if os.path.exists(manifest_path):      # keep entries of other runs
            with open(manifest_path) as f:
                manifest = json.load(f).get("models", {})
        base_outputs = {}
        print(f"{variant}: {out_dir}")
        print(f"  {'model':24} {'nodes':>6} {'params':>12} {'GFLOP':>10} "
              f"{'MB':>8} {'ORT ms':>9}")
        for name in names:
            try:
                e = generate(name, variant, out_dir, base_outputs)
            except Exception as ex:   # report and continue with the rest
                failed += 1
                print(f"  {name:24} FAILED: {type(ex).__name__}: {ex}")
                continue
            manifest[name] = e
            line = (f"  {name:24} {e['nodes']:6d} {e['params']:12,d} "
                    f"{e['gflop']:10.4g} {e['file_bytes'] / 1e6:8.2f} "
                    f"{e['ort_ms']:9.2f}")
            if e["problems"]:
                failed += 1
                line += "  PROBLEM: " + "; ".join(e["problems"])
            print(line, flush=True)
        with open(manifest_path, "w") as f:
            json.dump(dict(generator=PRODUCER, opset=OPSET,
                           ir_version=IR_VERSION, variant=variant,
                           onnx=onnx.__version__,
                           onnxruntime=ort.__version__,
                           models=dict(sorted(manifest.items()))),
                      f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
