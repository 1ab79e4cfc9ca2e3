#!/usr/bin/env python3
"""End-to-end check of strider-compile on the benchmark model set.

Usage: check_compiled_models.py --work DIR [--variant small|full]
                                [--only NAME ...] [--bin DIR] [--emulate]
                                [--rtol R] [--atol A]

Generates the models with scripts/make_model_set.py into DIR/<variant>,
compiles each with strider-compile (default flags; the NCHW models also
with --io-layout=nhwc and with --layout=nhwc), one at a time, and runs ONNX Runtime on the compiled
model and on the original (same inputs; graph inputs/outputs that report.json
lays out non-identically are transposed) within --rtol/--atol (default 1e-4,
1e-5). Prints one line per compile:

    PASS <model>[:io-nhwc|:layout-nhwc] relayouts=N body_relayouts=B bytes=R copies=C copy_bytes=D reference=match cpu=match

(reference: strider-run's reference interpreter on the compiled graph,
OUT/model.lir with its chosen layouts, against ONNX Runtime's outputs on the
original, same tolerances; cpu: the same through strider-run
--backend=cpu; the original model is run through both once too,
`PASS <model>:original reference=match cpu=match`)

(bytes: relayout bytes; body relayouts: relayouts other than the one reading
a graph input and the one writing a graph output), then `N models passed`,
or FAIL lines (details on stderr; the compile output is kept in
DIR/compiled/) and exit status 1.

strider-compile is taken from --bin, else from PATH (lit puts build/bin
there), else build/bin. --emulate runs strider-translate + strider-opt
instead. The shared logic lives in scripts/layout_bench.py.
"""
import argparse
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import layout_bench as lb  # noqa: E402


def run_reference(out_dir, data_dir, inputs, rtol, atol, backend="reference"):
    """strider-run (--backend) on a model or a strider-compile output dir
    against the stored ORT outputs; returns (ok, text)."""
    tool = shutil.which("strider-run") or os.path.join(ROOT, "build", "bin",
                                                      "strider-run")
    cmd = [tool, out_dir, "--compare", data_dir, f"--rtol={rtol}",
           f"--atol={atol}", f"--backend={backend}"]
    for name in inputs:
        cmd += ["--input", f"{name}={os.path.join(data_dir, name + '.npy')}"]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    return r.returncode == 0, r.stdout.strip()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--work", required=True, metavar="DIR")
    p.add_argument("--variant", choices=["small", "full"], default="small")
    p.add_argument("--only", nargs="+", metavar="NAME")
    p.add_argument("--bin", metavar="DIR")
    p.add_argument("--emulate", action="store_true")
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--atol", type=float, default=1e-5)
    a = p.parse_args()

    names = [n for n in lb.ALL_MODELS if not a.only or n in a.only]
    if a.only and len(names) != len(set(a.only)):
        p.error(f"unknown model in {a.only}; known: {' '.join(lb.ALL_MODELS)}")
    bin_dir = a.bin
    if not bin_dir:
        tool = shutil.which("strider-opt" if a.emulate else "strider-compile")
        bin_dir = os.path.dirname(tool) if tool else None
    try:
        compiler = lb.Compiler(bin_dir, a.emulate)
    except lb.BenchError as ex:
        print(f"check_compiled_models: {ex}", file=sys.stderr)
        return 1

    os.makedirs(a.work, exist_ok=True)
    gen = [sys.executable, os.path.join(ROOT, "scripts", "make_model_set.py"),
           "--out", a.work, "--variant", a.variant, "--only"] + names
    r = subprocess.run(gen, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if r.returncode != 0:
        print(r.stdout, file=sys.stderr)
        print("check_compiled_models: make_model_set.py failed",
              file=sys.stderr)
        return 1
    model_dir = os.path.join(a.work, a.variant)
    out_root = os.path.join(a.work, "compiled")

    passed, failed = set(), set()
    for name in names:
        path = os.path.join(model_dir, name + ".onnx")
        runs = [("model", "auto", name)]
        if not name.endswith("_nhwc"):
            runs.append(("nhwc", "auto", name + ":io-nhwc"))
            runs.append(("model", "nhwc", name + ":layout-nhwc"))
        inputs, outputs = lb.graph_io(path)
        if not a.emulate:
            data_dir = os.path.join(model_dir, name + ".data")
            ok, text = run_reference(path, data_dir, inputs, a.rtol, a.atol)
            cpu_ok, cpu_text = run_reference(path, data_dir, inputs, a.rtol,
                                             a.atol, backend="cpu")
            print(f"{'PASS' if ok and cpu_ok else 'FAIL'} {name}:original "
                  f"reference={'match' if ok else 'MISMATCH'} "
                  f"cpu={'match' if cpu_ok else 'MISMATCH'}")
            if not ok:
                print(f"{name}:original: strider-run: {text}", file=sys.stderr)
            if not cpu_ok:
                print(f"{name}:original: strider-run --backend=cpu: "
                      f"{cpu_text}", file=sys.stderr)
            if not (ok and cpu_ok):
                failed.add(name)
        for io_layout, layout, label in runs:
            out_dir = os.path.join(out_root, label.replace(":", "."))
            try:
                c = compiler.compile(path, out_dir, layout=layout,
                                     io_layout=io_layout)
                s = lb.summarize(c["report"], inputs, outputs, c["model"])
                n = lb.check_numerics(path, c["model"], c["report"],
                                      a.rtol, a.atol)
            except Exception as ex:   # a crash, an unreadable output ...
                print(f"FAIL {label}")
                print(f"{label}: {type(ex).__name__}: {ex}", file=sys.stderr)
                failed.add(name)
                continue
            stats = (f"relayouts={s['relayouts']} "
                     f"body_relayouts={s['body_relayouts']} "
                     f"bytes={s['relayout_bytes']} copies={s['copies']} "
                     f"copy_bytes={s['copy_bytes']}")
            ref_ok, ref_text = (True, "")
            cpu_ok, cpu_text = (True, "")
            if not a.emulate:
                data_dir = os.path.join(model_dir, name + ".data")
                ref_ok, ref_text = run_reference(out_dir, data_dir, inputs,
                                                 a.rtol, a.atol)
                cpu_ok, cpu_text = run_reference(out_dir, data_dir, inputs,
                                                 a.rtol, a.atol, "cpu")
            stats += " reference=" + ("match" if ref_ok else "MISMATCH")
            stats += " cpu=" + ("match" if cpu_ok else "MISMATCH")
            if n["ok"] and ref_ok and cpu_ok:
                print(f"PASS {label} {stats} max_rel={n['max_rel']:.1e}")
                shutil.rmtree(out_dir, ignore_errors=True)   # kept on FAIL
            else:
                print(f"FAIL {label} {stats}")
                for line in ([n["error"]] if n["error"] else n["lines"]):
                    print(f"{label}: {line}", file=sys.stderr)
                if not ref_ok:
                    print(f"{label}: strider-run: {ref_text}", file=sys.stderr)
                if not cpu_ok:
                    print(f"{label}: strider-run --backend=cpu: {cpu_text}",
                          file=sys.stderr)
                failed.add(name)
            sys.stdout.flush()
        if name not in failed:
            passed.add(name)
    if failed:
        print(f"{len(failed)} of {len(names)} models FAILED: "
              f"{' '.join(n for n in names if n in failed)}")
        return 1
    print(f"{len(passed)} models passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
