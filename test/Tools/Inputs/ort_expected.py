#!/usr/bin/env python3
"""Write seeded random inputs of an ONNX model and ONNX Runtime's outputs.

Usage: ort_expected.py MODEL.onnx OUTDIR [--seed S] [--dim NAME=SIZE ...]
                       [--shape INPUT=AxBxC ...]

Writes OUTDIR/inputs/<input name>.npy (floats uniform in [-1, 1); inputs
that are initializers keep their data) and OUTDIR/expected/<output
name>.npy (ONNX Runtime, CPU, optimizations off; an output name that is no
valid file name is sanitized as strider-run does), and prints one
`--input NAME=PATH` argument per line for strider-run. Used by the
strider-run lit tests.
"""
import argparse
import os
import sys

import onnx

# The output file naming rule of strider-run lives in one Python place.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "scripts"))
from real_models import file_name  # noqa: E402

import numpy as np
import onnxruntime as ort

TYPES = {"tensor(float)": np.float32, "tensor(double)": np.float64,
         "tensor(int64)": np.int64, "tensor(int32)": np.int32}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model")
    p.add_argument("out")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dim", action="append", default=[])
    p.add_argument("--shape", action="append", default=[])
    a = p.parse_args()
    dims = dict(d.split("=") for d in a.dim)
    shapes = {s.split("=")[0]: [int(d) for d in s.split("=")[1].split("x")]
              for s in a.shape}
    inits = {t.name for t in
             onnx.load(a.model, load_external_data=False).graph.initializer}
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(a.model, opts,
                                providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(a.seed)
    os.makedirs(os.path.join(a.out, "inputs"), exist_ok=True)
    os.makedirs(os.path.join(a.out, "expected"), exist_ok=True)
    feeds = {}
    for i in sess.get_inputs():
        if i.name in inits:
            continue
        shape = shapes.get(i.name) or [
            d if isinstance(d, int) else int(dims.get(d, 1)) for d in i.shape]
        x = rng.uniform(-1, 1, shape).astype(TYPES[i.type])
        feeds[i.name] = x
        path = os.path.join(a.out, "inputs", i.name + ".npy")
        np.save(path, x)
        print(f"--input {i.name}={path}")
    for meta, y in zip(sess.get_outputs(), sess.run(None, feeds)):
        np.save(os.path.join(a.out, "expected", file_name(meta.name) + ".npy"),
                y)
    return 0


if __name__ == "__main__":
    sys.exit(main())
