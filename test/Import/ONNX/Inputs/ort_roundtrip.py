#!/usr/bin/env python3
"""Check that importing a model keeps its meaning.

Usage: ort_roundtrip.py WORKDIR CASE [CASE ...]

For each make_model.py CASE: write the model, import it with
`strider-translate --import-onnx`, export the IR again with `--export-onnx`,
and run both models under ONNX Runtime on the same random inputs
(scripts/compare_ort.py). Exits 1 on the first difference or failure.
"""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
COMPARE = os.path.join(HERE, "..", "..", "..", "..", "scripts", "compare_ort.py")


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        sys.stderr.write(f"failed: {' '.join(cmd)}\n{r.stdout}{r.stderr}")
        sys.exit(1)
    return r.stdout


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    work = argv[1]
    os.makedirs(work, exist_ok=True)
    for case in argv[2:]:
        base = os.path.join(work, case)
        run([sys.executable, os.path.join(HERE, "make_model.py"), case,
             base + ".onnx"])
        run(["strider-translate", "--import-onnx", base + ".onnx", "-o",
             base + ".lir"])
        run(["strider-translate", "--export-onnx", base + ".lir", "-o",
             base + ".out.onnx"])
        run([sys.executable, COMPARE, base + ".onnx", base + ".out.onnx",
             "--dim", "N=2", "--dim", "batch=2"])
        print(f"{case}: same outputs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
