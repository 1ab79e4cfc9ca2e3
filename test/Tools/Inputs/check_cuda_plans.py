#!/usr/bin/env python3
"""Plans ONNX's light model zoo (in the onnx wheel) for the CUDA backend.

Usage: check_cuda_plans.py --out DIR [--precision fp32|fp16|bf16]

Each model is specialized to its declared input shape and compiled with
`strider-compile --target=cuda-sm90`, which plans the CUDA program (and
writes cuda-plan.txt) without a GPU. Prints one line per model, sorted:
"<model>: <strider-compile's kernels line>", so that a test can require
every node to run on CUDA kernels. Exits 1 if a compile fails.
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys

import onnx


def input_shape_flag(path):
    m = onnx.load(path, load_external_data=False)
    inits = {t.name for t in m.graph.initializer}
    first = next(i for i in m.graph.input if i.name not in inits)
    dims = [d.dim_value if d.dim_value > 0 else 1
            for d in first.type.tensor_type.shape.dim]
    return f"--shape={first.name}=" + "x".join(map(str, dims))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--precision", default="fp16")
    args = ap.parse_args()
    tool = shutil.which("strider-compile")
    if not tool:
        sys.exit("check_cuda_plans: strider-compile is not on PATH")
    light = os.path.join(os.path.dirname(onnx.__file__), "backend", "test",
                         "data", "light")
    models = sorted(glob.glob(os.path.join(light, "*.onnx")))
    if not models:
        sys.exit(f"check_cuda_plans: no models in {light}")
    failed = False
    for path in models:
        name = os.path.basename(path)[:-len(".onnx")]
        out = os.path.join(args.out, name)
        p = subprocess.run([tool, path, "-o", out, "--target=cuda-sm90",
                            f"--precision={args.precision}", "--svg=false",
                            input_shape_flag(path)],
                           capture_output=True, text=True)
        lines = [l for l in p.stdout.splitlines() if l.startswith("kernels:")]
        if p.returncode != 0 or not lines:
            failed = True
            tail = (p.stderr.strip().splitlines() or ["no output"])[-1]
            print(f"{name}: compile failed: {tail}")
            continue
        print(f"{name}: {lines[0]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
