#!/usr/bin/env python3
"""Run two ONNX models under ONNX Runtime on the same random inputs and
compare their outputs.

Usage: compare_ort.py ORIGINAL.onnx CANDIDATE.onnx [--rtol R] [--atol A]
                      [--dim NAME=SIZE ...] [--seed S]

Symbolic dims are bound with --dim (default 1). Prints one line per output
and a summary of both graphs; exits 1 when any output differs.
"""
import argparse
import collections
import sys

import numpy as np
import onnx
import onnxruntime as ort

NP_TYPES = {
    "tensor(float)": np.float32, "tensor(float16)": np.float16,
    "tensor(double)": np.float64, "tensor(int64)": np.int64,
    "tensor(int32)": np.int32, "tensor(int8)": np.int8,
    "tensor(uint8)": np.uint8, "tensor(bool)": np.bool_,
}


def make_inputs(sess, dims, rng):
    feeds = {}
    for i in sess.get_inputs():
        shape = [d if isinstance(d, int) else dims.get(d, 1) for d in i.shape]
        dtype = NP_TYPES[i.type]
        if np.issubdtype(dtype, np.floating):
            feeds[i.name] = rng.standard_normal(shape).astype(dtype)
        elif dtype == np.bool_:
            feeds[i.name] = rng.random(shape) > 0.5
        else:
            feeds[i.name] = rng.integers(0, 4, shape).astype(dtype)
    return feeds


def op_counts(path):
    model = onnx.load(path, load_external_data=False)
    return collections.Counter(n.op_type for n in model.graph.node)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("original")
    p.add_argument("candidate")
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--atol", type=float, default=1e-5)
    p.add_argument("--dim", action="append", default=[])
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    dims = {k: int(v) for k, v in (d.split("=", 1) for d in a.dim)}

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    ref = ort.InferenceSession(a.original, so, providers=["CPUExecutionProvider"])
    cand = ort.InferenceSession(a.candidate, so, providers=["CPUExecutionProvider"])
    feeds = make_inputs(ref, dims, np.random.default_rng(a.seed))
    want = ref.run(None, feeds)
    got = cand.run(None, {k: v for k, v in feeds.items()
                          if k in {i.name for i in cand.get_inputs()}})
    ok = len(want) == len(got)
    for meta, w, g in zip(ref.get_outputs(), want, got):
        if w.shape != g.shape:
            print(f"output {meta.name}: shape {g.shape}, expected {w.shape}")
            ok = False
            continue
        err = float(np.max(np.abs(w.astype(np.float64) - g.astype(np.float64)))) if w.size else 0.0
        match = np.allclose(g, w, rtol=a.rtol, atol=a.atol)
        ok &= bool(match)
        print(f"output {meta.name} {list(w.shape)}: max abs error {err:.3g} "
              f"({'match' if match else 'MISMATCH'})")
    for label, path in (("original", a.original), ("candidate", a.candidate)):
        counts = op_counts(path)
        ops = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        print(f"{label}: {sum(counts.values())} nodes ({ops})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
