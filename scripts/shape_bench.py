#!/usr/bin/env python3
"""Many input shapes through one session: Strider against ONNX Runtime.

Usage:
    shape_bench.py [--suite set|thirdparty] [--only NAME ...]
                   [--shapes HxW,HxW,...] [--passes P] [--threads T]
                   [--ranges] [--per-shape] [--concurrent-shape HxW] [--runs R]
                   [--trials K] [--models-dir DIR] [--work-dir DIR]
                   [--build DIR] [--site DIR]

Applications feed a model whatever shapes arrive (an OCR recognizer a width
per text line, a detector a page or frame size) through one session.

--suite set (default): each model of make_model_set.py's full set (default
resnet50 and mobilenetv2; DIR/<name>.onnx, generated into
build/cpu-bench/models when missing) as a copy whose input height and
width are symbolic, fed --shapes. --suite thirdparty: the third-party
models of scripts/real_models.py that take many shapes (fetched into its
cache), each fed the shapes its application feeds (THIRD_PARTY_SHAPES:
30 text-line widths for recognizers, 28 page or frame sizes for detectors,
1-20 s of audio, 16-256 characters).

Per model, one Strider session (strider.InferenceSession, the package
installed from BUILD into WORK/site, or the one already installed in
--site DIR: an older build's, to compare) and one ONNX Runtime session
(ORT_ENABLE_ALL, intra_op_num_threads = T, inter_op_num_threads = 1) in
this process run every shape twice in a row, --passes times over the list
(a second pass finds Strider's programs cached: its cache keeps 64
programs of at most 1 GiB of arenas). With --ranges the Strider session
is given the input ranges the shapes span (input_ranges: the model is
optimized once for them). Per model it prints:

  * new-shape cost: the first run at a shape minus the median of the
    --repeats runs right after it (default 3: one repeat alone is as noisy
    as the cost on a shared machine), median and worst over the first
    pass's shapes but the first (whose cost includes Strider's
    once-per-model preparation and weight packing), for both; and how many
    shapes cost Strider more than max(2 ms, 5% of their run);
  * the time each took to open its session (ORT optimizes the graph and
    packs the weights there, Strider on its first run), the total time of
    all runs of both (each shape's first run and one repeat, every pass),
    their ratio (Strider / ORT) and the ratio of open and runs together;
  * Strider's programs built, cache hits and build seconds (cache_info);
  * one session shared by 1 and by 2 Python threads at one shape
    (--concurrent-shape, or a third-party model's first shape; kernels on
    one thread each): runs per second of each, the 2-caller / 1-caller
    scaling of both, and whether every output of the concurrent runs is
    bit for bit the serial one (Strider; median of --trials trials of
    --runs runs per caller).

With --per-shape, each shape's steady run of both (ms, the median of its
repeats in the first pass) and their ratio follow the model's line.

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


def kernel_isa(build, work):
    """The SIMD target of this build's CPU kernels on this machine, as
    strider-run --json reports it for a one-node model."""
    import onnx
    from onnx import TensorProto, helper
    path = work / "relu.onnx"
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])
    onnx.save(helper.make_model(helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "relu", [x], [y])), str(path))
    out = subprocess.run([str(build / "bin" / "strider-run"), str(path),
                          "--random-inputs", "--json"], capture_output=True, text=True)
    try:
        return json.loads(out.stdout)["program"]["kernel_target"]
    except (ValueError, KeyError):
        return "unknown"


def feed_ranges(feeds):
    """{input: {axis: (min, max)}} over the dims that vary across FEEDS."""
    ranges = {}
    for name in feeds[0]:
        shapes = [f[name].shape for f in feeds]
        for axis in range(len(shapes[0])):
            sizes = [sh[axis] for sh in shapes]
            if min(sizes) != max(sizes):
                ranges.setdefault(name, {})[axis] = (min(sizes), max(sizes))
    return ranges


def bench(path, feeds, passes, threads, ranges=False, repeats=3):
    """Runs every feed of FEEDS twice in a row on a Strider and an ORT
    session, PASSES times over the list; in the first pass each feed's
    second run is followed by REPEATS - 1 more, not counted in the totals.
    Returns the seconds each took to open its session, the total seconds
    of each (the two runs of every feed), the first pass's new-shape costs (ms, per feed: the first run minus the
    median of its REPEATS repeats), those medians (ms, per feed) and
    Strider's cache_info. With RANGES, the Strider session is given the
    input ranges the feeds span (input_ranges)."""
    import onnxruntime as ort
    import strider
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # Opening a session is timed too: ORT optimizes the graph and packs
    # the weights there, Strider on its first run (once per model).
    opening = {
        "strider": lambda: strider.InferenceSession(
            str(path), threads=threads,
            **({"input_ranges": feed_ranges(feeds)} if ranges else {})),
        "ort": lambda: ort.InferenceSession(str(path), so,
                                            providers=["CPUExecutionProvider"]),
    }
    runners, opened = {}, {}
    for who, make in opening.items():
        t0 = time.perf_counter()
        runners[who] = make()
        opened[who] = time.perf_counter() - t0
    total = {k: 0.0 for k in runners}
    new_shape = {k: [] for k in runners}
    steady = {k: [] for k in runners}
    for p in range(passes):
        for feed in feeds:
            for who, sess in runners.items():
                t0 = time.perf_counter()
                sess.run(None, feed)
                t1 = time.perf_counter()
                sess.run(None, feed)
                t2 = time.perf_counter()
                total[who] += t2 - t0
                if p == 0:
                    again = [t2 - t1]
                    for _ in range(repeats - 1):
                        t = time.perf_counter()
                        sess.run(None, feed)
                        again.append(time.perf_counter() - t)
                    repeat = statistics.median(again)
                    new_shape[who].append(((t1 - t0) - repeat) * 1e3)
                    steady[who].append(repeat * 1e3)
    # An older package (--site) may predate cache_info.
    info = getattr(runners["strider"], "cache_info", None)
    return opened, total, new_shape, steady, info


def image_feeds(path, shapes):
    """One N x 3 x H x W feed of the model's first input per (H, W)."""
    import numpy as np
    import onnx
    name = onnx.load(str(path), load_external_data=False).graph.input[0].name
    return [{name: np.random.default_rng(h * 1000 + w).standard_normal(
        (1, 3, h, w), dtype=np.float32)} for h, w in shapes]


def spread(lo, hi, n, step=1):
    """N sizes from LO to HI, multiples of STEP, in a shuffled but fixed
    order (applications do not feed sizes sorted)."""
    sizes = [round((lo + (hi - lo) * i / (n - 1)) / step) * step for i in range(n)]
    return [sizes[(i * 7) % n] for i in range(n)] if n % 7 else sizes


def pages(lo, hi, n):
    """N (H, W) page or frame sizes, multiples of 32 between LO and HI."""
    hs, ws = spread(lo, hi, n, 32), spread(lo, hi, n, 32)
    return [(hs[i], ws[(i * 5 + 3) % n]) for i in range(n)]


# Third-party models (scripts/real_models.py's suite) and the shapes their
# applications feed: {input: shape or (shape, value)} per call, as
# real_models.random_feeds takes them.
def _rec(w):
    return {"x": [1, 3, 48, w]}


def _page(hw):
    return {"x": [1, 3, *hw]}


def _audio(n):
    return {"waveforms": [1, n], "waveforms_lens": ([1], n)}


THIRD_PARTY_SHAPES = {
    # A text line resized to height 48, its width kept in proportion.
    "ppocr-v4-rec": [_rec(w) for w in spread(100, 1000, 30)],
    "ppocr-v5-rec": [_rec(w) for w in spread(100, 1000, 30)],
    "ppocr-v6-rec": [_rec(w) for w in spread(100, 1000, 30)],
    "ddddocr-ocr-lstm": [{"input1": [1, 1, 64, w]} for w in spread(64, 640, 30)],
    # A page resized to multiples of 32 (the detectors' limit side 960).
    "ppocr-v4-det": [_page(hw) for hw in pages(320, 960, 28)],
    "ppocr-v5-det": [_page(hw) for hw in pages(320, 960, 28)],
    "ppocr-v6-det": [_page(hw) for hw in pages(320, 960, 28)],
    "nudenet-yolov8n": [{"images": [1, 3, *hw]} for hw in pages(256, 640, 28)],
    # 1 to 20 s of 16 kHz audio.
    "asr-nemo80-features": [_audio(n) for n in spread(16000, 320000, 30, 160)],
    "asr-kaldi-features": [_audio(n) for n in spread(16000, 320000, 30, 160)],
    # faster-whisper's VAD over 3 to 30 s (frames of 576 samples).
    "silero-vad-v6": [{"input": [s, 576]} for s in spread(94, 938, 30)],
    # Sentences of 16 to 256 characters.
    "piper-tashkeel": [{"char_inputs": [1, s], "diac_inputs": [1, s],
                        "input_lengths": ([1], s)} for s in spread(16, 256, 30)],
}


def third_party_models(names):
    """[(name, model path, [feed])] for NAMES (all when empty), fetched
    into real_models.py's cache."""
    import real_models
    cache = os.path.expanduser("~/.cache/strider/models")
    out = []
    for name, req, member, *_ in real_models.THIRD_PARTY:
        if name not in THIRD_PARTY_SHAPES or (names and name not in names):
            continue
        path = real_models.fetch_third_party(cache, req, member)
        feeds = [real_models.random_feeds(path, spec, seed=i)
                 for i, spec in enumerate(THIRD_PARTY_SHAPES[name])]
        out.append((name, Path(path), feeds))
    return out


def concurrent(path, feeds, runs, trials):
    """Runs per second of one session fed by 1 and by 2 threads, for
    Strider and ORT (kernels on one thread), the 2 callers feeding FEEDS'
    two inputs of one shape, and whether Strider's concurrent outputs equal
    its serial ones bit for bit."""
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
    want = [runners["strider"].run(None, f) for f in feeds]
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
                        out = sess.run(None, feeds[i])
                        if who == "strider" and not all(
                                np.array_equal(a, b) for a, b in zip(out, want[i])):
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
    ap.add_argument("--suite", choices=["set", "thirdparty"], default="set")
    ap.add_argument("--only", nargs="+")
    ap.add_argument("--shapes", default=DEFAULT_SHAPES)
    ap.add_argument("--passes", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--concurrent-shape", default="224x224")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=3,
                    help="runs after a new shape's first, whose median the "
                         "new-shape cost is measured against")
    ap.add_argument("--per-shape", action="store_true",
                    help="also print each shape's steady run (median of the "
                         "repeats) of both and their ratio")
    ap.add_argument("--ranges", action="store_true",
                    help="give Strider's session the input ranges the shapes span")
    ap.add_argument("--models-dir", type=Path, default=ROOT / "build/cpu-bench/models")
    ap.add_argument("--work-dir", type=Path, default=ROOT / "build/shape-bench")
    ap.add_argument("--build", type=Path, default=ROOT / "build")
    ap.add_argument("--site", type=Path,
                    help="an installed strider package to run instead of BUILD's")
    args = ap.parse_args()
    build = args.build.resolve()
    args.work_dir.mkdir(parents=True, exist_ok=True)
    site = args.site
    if not site:
        site = args.work_dir / "site"
        install_package(build, site)
    sys.path.insert(0, str(site.resolve()))
    if args.suite == "set":
        models = set_models(args, build)
    else:
        unknown = set(args.only or []) - set(THIRD_PARTY_SHAPES)
        if unknown:
            raise SystemExit(f"shape_bench: no shape profile for {sorted(unknown)}; "
                             f"there are {sorted(THIRD_PARTY_SHAPES)}")
        models = third_party_models(args.only)
    print(f"machine: {machine_line()}; kernels {kernel_isa(build, args.work_dir)}; "
          f"threads {args.threads}; {'input ranges; ' if args.ranges else ''}"
          f"{args.passes} passes over each model's shapes, each run twice")
    print(f"new shape: first run minus the median of {max(1, args.repeats)} repeats (ms), "
          "median and worst; over: shapes costing more than max(2 ms, 5% of their run)")
    print("open: opening the session (ms); total: the runs; ratio: Strider / ORT of "
          "the runs, and of the session's open and runs together")
    print(f"{'model':20} {'shapes':>6} {'new shape ms':>23} {'over':>4} "
          f"{'open ms':>15} {'total ms':>19} {'ratio':>6} {'+open':>6} "
          f"{'built':>6} {'hits':>5} {'build s':>8}")
    print(f"{'':28} {'strider':>7} {'worst':>7} {'ort':>7} {'':>4} {'strider':>7} "
          f"{'ort':>7} {'strider':>9} {'ort':>9}")
    for name, path, feeds in models:
        opened, total, new_shape, steady, info = bench(path, feeds, args.passes, args.threads,
                                               args.ranges, max(1, args.repeats))
        over = sum(1 for c, t in zip(new_shape["strider"], steady["strider"])
                   if c > max(2.0, 0.05 * t))
        cache = (f"{info['programs_built']:6d} {info['cache_hits']:5d} "
                 f"{info['build_seconds']:8.2f}" if info else f"{'-':>6} {'-':>5} {'-':>8}")
        # The first shape's cost includes the once-per-model preparation.
        later = new_shape["strider"][1:] or new_shape["strider"]
        print(f"{name:20} {len(feeds):6d} "
              f"{statistics.median(later):7.1f} {max(later):7.1f} "
              f"{statistics.median(new_shape['ort'][1:] or new_shape['ort']):7.1f} "
              f"{over:4d} {opened['strider'] * 1e3:7.0f} {opened['ort'] * 1e3:7.0f} "
              f"{total['strider'] * 1e3:9.0f} {total['ort'] * 1e3:9.0f} "
              f"{total['strider'] / total['ort']:6.2f} "
              f"{(total['strider'] + opened['strider']) / (total['ort'] + opened['ort']):6.2f} "
              f"{cache}", flush=True)
        if args.per_shape:
            for feed, s_ms, o_ms in zip(feeds, steady["strider"], steady["ort"]):
                shape = ",".join("x".join(str(d) for d in v.shape) for v in feed.values())
                print(f"    {shape:>30} {s_ms:9.2f} {o_ms:9.2f} {s_ms / o_ms:6.2f}")
    print(f"\none session, 1 and 2 calling threads, kernels on 1 thread "
          f"(runs/s, median of {args.trials} x {args.runs} runs per caller)")
    print(f"{'model':20} {'shape':>14} {'strider 1':>10} {'strider 2':>10} {'scale':>6} "
          f"{'ort 1':>8} {'ort 2':>8} {'scale':>6} {'2: s/o':>7} {'identical':>10}")
    for name, path, feeds in models:
        pair = concurrent_feeds(args, name, path, feeds)
        rate, same = concurrent(path, pair, args.runs, args.trials)
        s1, s2 = rate[("strider", 1)], rate[("strider", 2)]
        o1, o2 = rate[("ort", 1)], rate[("ort", 2)]
        shape = "x".join(str(d) for d in next(iter(pair[0].values())).shape)
        print(f"{name:20} {shape:>14} {s1:10.1f} {s2:10.1f} {s2 / s1:6.2f} {o1:8.1f} "
              f"{o2:8.1f} {o2 / o1:6.2f} {s2 / o2:7.2f} {'yes' if same else 'NO':>10}",
              flush=True)


def set_models(args, build):
    """[(name, model path, [feed])] of the model set, each a copy with
    a symbolic input height and width, fed --shapes."""
    names = args.only or ["resnet50", "mobilenetv2"]
    missing = [n for n in names if not (args.models_dir / f"{n}.onnx").exists()]
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
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")]
    out = []
    for name in names:
        dyn = args.work_dir / f"{name}_hw.onnx"
        symbolic_copy(args.models_dir / f"{name}.onnx", dyn)
        out.append((name, dyn, image_feeds(dyn, shapes)))
    return out


def concurrent_feeds(args, name, path, feeds):
    """Two feeds of one shape for the concurrency table: the model set's at
    --concurrent-shape, a third-party model's at its first shape (the
    second with other random values)."""
    import real_models
    if args.suite == "set":
        h, w = (int(v) for v in args.concurrent_shape.split("x"))
        first = image_feeds(path, [(h, w)])[0]
        return [first, {k: v * -0.5 for k, v in first.items()}]
    spec = THIRD_PARTY_SHAPES[name][0]
    return [real_models.random_feeds(str(path), spec, seed=s) for s in (100, 101)]


if __name__ == "__main__":
    main()
