#!/usr/bin/env python3
"""Many input shapes through one session: Strider against ONNX Runtime.

Usage:
    shape_bench.py [--only NAME ...] [--shapes HxW,HxW,...] [--passes P]
                   [--threads T] [--concurrent-shape HxW] [--runs R]
                   [--trials K] [--models-dir DIR] [--work-dir DIR]
                   [--build DIR] [--site DIR]

Applications feed a model whatever shapes arrive (an OCR recognizer a width
per text line, a detector a page or frame size) through one session. For
each model of make_model_set.py's full set (default resnet50 and
mobilenetv2; DIR/<name>.onnx, generated into build/cpu-bench/models when
missing) this makes a copy whose input height and width are symbolic, then
opens one Strider session (strider.InferenceSession, the package installed
from BUILD into WORK/site, or the one already installed in --site DIR: an
older build's, to compare) and one ONNX Runtime session (ORT_ENABLE_ALL,
intra_op_num_threads = T, inter_op_num_threads = 1) in this process and
runs every shape of --shapes twice in a row on each, --passes times over
the list (a second pass finds Strider's programs cached: its cache keeps
64 programs of at most 1 GiB of arenas). Per model it prints:

  * new-shape cost: the first run at a shape minus the repeat right after
    it, median over the first pass's shapes, for both (the first shape's
    includes Strider's once-per-model preparation and weight packing);
  * the total time of all runs of both and their ratio (Strider / ORT);
  * Strider's programs built, cache hits and build seconds (cache_info);
  * one session shared by 1 and by 2 Python threads at one shape
    (--concurrent-shape, kernels on one thread each): runs per second of
    each, the 2-caller / 1-caller scaling of both, and whether every
    output of the concurrent runs is bit for bit the serial one (Strider;
    median of --trials trials of --runs runs per caller).

The machine (CPU, cores) and Strider's kernel ISA come first. Timings
are medians of one process on a shared machine: compare ratios, not
absolute times, across machines.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from cpu_bench import machine_line  # noqa: E402
DEFAULT_SHAPES = ("224x224,192x256,256x192,160x160,288x288,320x240,240x320,"
                  "128x128,256x256,200x300,300x200,176x176")


def install_package(build, site):
    """The strider package over BUILD's library, into SITE (as test_python.sh)."""
    env = dict(os.environ, STRIDER_BUILD_DIR=str(build))
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet",
                    "--disable-pip-version-check", "--no-build-isolation",
                    "--no-deps", "--no-index", "--upgrade", "--target", str(site),
                    str(ROOT / "python")], check=True, env=env)


def symbolic_copy(src, dst):
    """SRC with its first input's dims 2 and 3 (H, W) symbolic."""
    import onnx
    m = onnx.load(str(src))
    dims = m.graph.input[0].type.tensor_type.shape.dim
    if len(dims) != 4:
        raise SystemExit(f"shape_bench: {src}: input is not N x C x H x W")
    for i, name in ((2, "height"), (3, "width")):
        dims[i].ClearField("dim_value")
        dims[i].dim_param = name
    del m.graph.value_info[:]
    for out in m.graph.output:
        for d in out.type.tensor_type.shape.dim[2:]:
            d.ClearField("dim_value")
            d.ClearField("dim_param")
    onnx.save(m, str(dst), save_as_external_data=True,
              location=dst.name + ".data")


def kernel_isa(build, model):
    out = subprocess.run([str(build / "bin" / "strider-run"), str(model),
                          "--random-inputs", "--dim", "height=64", "--dim", "width=64",
                          "--json"], capture_output=True, text=True)
    try:
        return json.loads(out.stdout)["program"]["kernel_target"]
    except (ValueError, KeyError):
        return "unknown"


def bench(path, shapes, passes, threads):
    import numpy as np
    import onnxruntime as ort
    import strider
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    runners = {
        "strider": strider.InferenceSession(str(path), threads=threads),
        "ort": ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"]),
    }
    name = runners["ort"].get_inputs()[0].name
    total = {k: 0.0 for k in runners}
    new_shape = {k: [] for k in runners}
    for p in range(passes):
        for h, w in shapes:
            x = np.random.default_rng(h * 1000 + w).standard_normal(
                (1, 3, h, w), dtype=np.float32)
            for who, sess in runners.items():
                t0 = time.perf_counter()
                sess.run(None, {name: x})
                t1 = time.perf_counter()
                sess.run(None, {name: x})
                t2 = time.perf_counter()
                total[who] += t2 - t0
                if p == 0:
                    new_shape[who].append(((t1 - t0) - (t2 - t1)) * 1e3)
    # An older package (--site) may predate cache_info.
    info = getattr(runners["strider"], "cache_info", None)
    return total, {k: statistics.median(v) for k, v in new_shape.items()}, info


def concurrent(path, shape, runs, trials):
    """Runs per second of one session fed by 1 and by 2 threads, for
    Strider and ORT (kernels on one thread), and whether Strider's
    concurrent outputs equal its serial ones bit for bit."""
    import threading
    import numpy as np
    import onnxruntime as ort
    import strider
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    runners = {
        "strider": strider.InferenceSession(str(path), threads=1),
        "ort": ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"]),
    }
    name = runners["ort"].get_inputs()[0].name
    h, w = shape
    feeds = [{name: np.random.default_rng(7 + i).standard_normal((1, 3, h, w), dtype=np.float32)}
             for i in range(2)]
    want = [runners["strider"].run(None, f)[0] for f in feeds]
    identical = True
    rate = {}
    for who, sess in runners.items():
        sess.run(None, feeds[0])
        for callers in (1, 2):
            got = []
            for _ in range(trials):
                start = threading.Barrier(callers + 1)
                mismatch = []

                def work(i):
                    start.wait()
                    for _ in range(runs):
                        out = sess.run(None, feeds[i])[0]
                        if who == "strider" and not np.array_equal(out, want[i]):
                            mismatch.append(i)

                threads = [threading.Thread(target=work, args=(i,)) for i in range(callers)]
                for t in threads:
                    t.start()
                start.wait()
                t0 = time.perf_counter()
                for t in threads:
                    t.join()
                got.append(callers * runs / (time.perf_counter() - t0))
                identical = identical and not mismatch
            rate[(who, callers)] = statistics.median(got)
    return rate, identical


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="+", default=["resnet50", "mobilenetv2"])
    ap.add_argument("--shapes", default=DEFAULT_SHAPES)
    ap.add_argument("--passes", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--concurrent-shape", default="224x224")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--models-dir", type=Path, default=ROOT / "build/cpu-bench/models")
    ap.add_argument("--work-dir", type=Path, default=ROOT / "build/shape-bench")
    ap.add_argument("--build", type=Path, default=ROOT / "build")
    ap.add_argument("--site", type=Path,
                    help="an installed strider package to run instead of BUILD's")
    args = ap.parse_args()
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")]
    build = args.build.resolve()
    args.work_dir.mkdir(parents=True, exist_ok=True)
    site = args.site
    if not site:
        site = args.work_dir / "site"
        install_package(build, site)
    sys.path.insert(0, str(site.resolve()))
    missing = [n for n in args.only if not (args.models_dir / f"{n}.onnx").exists()]
    if missing:
        # As cpu_bench.py: generated beside DIR, then moved into it.
        tmp = Path(str(args.models_dir) + ".gen")
        subprocess.run([sys.executable, str(ROOT / "scripts/make_model_set.py"),
                        "--out", str(tmp), "--variant", "full", "--only", *missing],
                       check=True)
        args.models_dir.mkdir(parents=True, exist_ok=True)
        for entry in (tmp / "full").iterdir():
            if entry.name != "manifest.json":
                os.replace(entry, args.models_dir / entry.name)
    print(f"machine: {machine_line()}; threads {args.threads}; "
          f"{len(shapes)} shapes x {args.passes} passes, each run twice")
    print(f"{'model':14} {'ISA':6} {'new shape ms':>21} {'total ms':>19} "
          f"{'ratio':>6} {'built':>6} {'hits':>5} {'build s':>8}")
    print(f"{'':21} {'strider':>10} {'ort':>10} {'strider':>9} {'ort':>9}")
    results = []
    for name in args.only:
        dyn = args.work_dir / f"{name}_hw.onnx"
        symbolic_copy(args.models_dir / f"{name}.onnx", dyn)
        isa = kernel_isa(build, dyn)
        total, new_shape, info = bench(dyn, shapes, args.passes, args.threads)
        cache = (f"{info['programs_built']:6d} {info['cache_hits']:5d} "
                 f"{info['build_seconds']:8.2f}" if info else f"{'-':>6} {'-':>5} {'-':>8}")
        print(f"{name:14} {isa:6} {new_shape['strider']:10.1f} {new_shape['ort']:10.1f} "
              f"{total['strider'] * 1e3:9.0f} {total['ort'] * 1e3:9.0f} "
              f"{total['strider'] / total['ort']:6.2f} {cache}", flush=True)
        results.append((name, dyn))
    ch, cw = (int(v) for v in args.concurrent_shape.split("x"))
    print(f"\none session, 1 and 2 calling threads, {ch}x{cw}, kernels on 1 thread "
          f"(runs/s, median of {args.trials} x {args.runs} runs per caller)")
    print(f"{'model':14} {'strider 1':>10} {'strider 2':>10} {'scale':>6} "
          f"{'ort 1':>8} {'ort 2':>8} {'scale':>6} {'2: s/o':>7} {'identical':>10}")
    for name, dyn in results:
        rate, same = concurrent(dyn, (ch, cw), args.runs, args.trials)
        s1, s2 = rate[("strider", 1)], rate[("strider", 2)]
        o1, o2 = rate[("ort", 1)], rate[("ort", 2)]
        print(f"{name:14} {s1:10.1f} {s2:10.1f} {s2 / s1:6.2f} {o1:8.1f} {o2:8.1f} "
              f"{o2 / o1:6.2f} {s2 / o2:7.2f} {'yes' if same else 'NO':>10}", flush=True)


if __name__ == "__main__":
    main()
