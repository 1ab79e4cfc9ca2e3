#!/usr/bin/env python3
"""Write an ONNX test directory for one opset-6 case of make_model.py.

Usage: opset6_data.py CASE DIR

DIR gets model.onnx and test_data_set_0/{input,output}_K.pb; the outputs are
computed here with numpy from opset 6's definitions (legacy broadcasting at
an axis, per-channel PRelu, Upsample-1's scales), independently of Strider,
so `strider-run --onnx-test DIR` checks the importer's rewrites numerically.
"""

import os
import sys

import numpy as np
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_model  # noqa: E402


def signed(shape, seed):
    rng = np.random.default_rng(seed)
    return rng.uniform(-2.0, 2.0, size=shape).astype(np.float32)


def init(m, name):
    for t in m.graph.initializer:
        if t.name == name:
            return numpy_helper.to_array(t)
    raise KeyError(name)


def broadcast_v6(m):
    x = signed([2, 3, 4, 5], 1)
    # Add at axis 1, Mul on the trailing dims, Sub of equal shapes, Div at
    # axis 0, Pow at axis -2.
    y1 = x + init(m, "b34")[:, :, None]
    y2 = y1 * init(m, "b5")
    y3 = y2 - x
    y4 = y3 / init(m, "b2")[:, None, None, None]
    y = np.power(y4, init(m, "e")[:, None])
    return [x], [y]


def prelu_v6(m):
    x = signed([2, 3, 4, 5], 2)
    c = init(m, "c")[None, :, None, None]
    y = np.where(x < 0, x * c, x)
    z = np.where(y < 0, y * 0.25, y)
    return [x], [z]


def gemm_v6(m):
    x = signed([2, 3], 3)
    y = 0.5 * x @ init(m, "w").T + 2.0 * init(m, "c")
    return [x], [y]


def is_test_v6(m):
    x = signed([1, 3, 2, 2], 4)
    s, b, mean, var = (init(m, n)[None, :, None, None] for n in "sbmv")
    y = (x - mean) / np.sqrt(var + 1e-3) * s + b
    return [x], [y]


def upsample_v6(m):
    x = signed([1, 2, 2, 2], 5)
    y = np.repeat(np.repeat(x, 2, axis=2), 3, axis=3)
    return [x], [y]


REFERENCES = {
    "broadcast-v6": broadcast_v6,
    "prelu-v6": prelu_v6,
    "gemm-v6": gemm_v6,
    "is-test-v6": is_test_v6,
    "upsample-v6": upsample_v6,
}


def main(argv):
    if len(argv) != 3 or argv[1] not in REFERENCES:
        sys.stderr.write("usage: opset6_data.py CASE DIR\n")
        return 2
    m = make_model.CASES[argv[1]]()
    inputs, outputs = REFERENCES[argv[1]](m)
    data = os.path.join(argv[2], "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    with open(os.path.join(argv[2], "model.onnx"), "wb") as f:
        f.write(m.SerializeToString())
    for kind, arrays, infos in (("input", inputs, m.graph.input),
                                ("output", outputs, m.graph.output)):
        for k, (a, vi) in enumerate(zip(arrays, infos)):
            t = numpy_helper.from_array(np.asarray(a, dtype=np.float32),
                                        vi.name)
            with open(os.path.join(data, "%s_%d.pb" % (kind, k)), "wb") as f:
                f.write(t.SerializeToString())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
