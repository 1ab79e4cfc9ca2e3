#!/usr/bin/env python3
"""Benchmark Strider's CPU backend against ONNX Runtime on the same machine,
in one run, on the full-size model set of make_model_set.py.

Usage:
    cpu_bench.py [--only NAME ...] [--threads 1 2] [--runs N] [--warmup W]
                 [--rounds R] [--tuned] [--models-dir DIR] [--work-dir DIR] [--bin DIR]
                 [--peak-gflops-per-core P] [--json OUT] [--write-docs [FILE]]

Models: DIR/<name>.onnx (with the manifest.json make_model_set.py writes and
each model's <name>.data/ inputs and ONNX Runtime outputs); default
build/cpu-bench/models, generated there (full variant) when missing.
Default: the base models of the set (no *_nhwc variants).

Per model:
  * strider-compile MODEL (--layout=auto, the default) and once more with
    --layout=nchw, into the work directory.
  * With --tuned, once more with --tune --tuning-file=WORK/cpu.tune (one
    table for every model, timed on one thread; entries already there are
    reused): layouts chosen by measured kernel times.
  * The auto (and tuned) program's outputs are checked against the stored ONNX Runtime
    outputs (--compare, rtol 1e-4, atol 1e-4 of the largest magnitude of
    the model's outputs: float32 sums over thousands of terms differ by
    that much near zero); a mismatch fails the run.
  * Per thread count, --rounds rounds, each running in turn: strider-run
    --backend=cpu on the auto compile, ONNX Runtime (a worker process:
    ORT_ENABLE_ALL, intra_op_num_threads = T, inter_op_num_threads = 1,
    sequential execution), strider-run on the nchw compile (and on the
    tuned one). Each process
    runs --warmup untimed runs and --runs timed runs on the model's stored
    inputs and reports the median; a system's latency is the median of its
    round medians. Peak memory is each process's maximum resident set size
    (Strider: the IR with its weights, the program's packed weights and the
    activation arena; ORT: the Python interpreter, numpy and the session).

Printed per model and thread count: median latencies, Strider/ORT (below 1:
Strider is faster), GFLOP/s (the model's FLOPs from the manifest, 2 per
multiply-add) and percent of peak (--peak-gflops-per-core times the
threads; default 214, measured on the development machine with a loop of
independent AVX-512 FMAs), Strider --layout=nchw and nchw/auto, with
--tuned the tuned latency and tuned/auto, peak RSS.

--write-docs puts the table into docs/Benchmarks.md between
<!-- cpu-bench:begin --> and <!-- cpu-bench:end -->, with the machine and
the date. Exit 1 when a compile, a run or a numeric check fails.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARK_BEGIN = "<!-- cpu-bench:begin -->"
MARK_END = "<!-- cpu-bench:end -->"
BASE_MODELS = ["resnet50", "mobilenetv2", "densenet121", "unet", "vgg16",
               "shufflenet", "efficientnet_se", "conv3d", "layout_hostile"]


def child_peak_rss(cmd, env=None):
    """Runs cmd with wait4; returns (returncode, stdout, stderr, rss MB)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return (proc.returncode, out.read().decode(), err.read().decode(),
                usage.ru_maxrss / 1024.0)


def ort_worker(args):
    """--ort-worker: time one ONNX Runtime session, print one JSON line."""
    import resource

    import numpy as np
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = args.threads_one
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    sess = ort.InferenceSession(args.model, so,
                                providers=["CPUExecutionProvider"])
    feeds = {}
    for spec in args.inputs:
        name, path = spec.split("=", 1)
        feeds[name] = np.load(path)
    for _ in range(args.warmup):
        sess.run(None, feeds)
    times = []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        times.append((time.perf_counter() - t0) * 1e3)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(json.dumps({"median_ms": statistics.median(times),
                      "min_ms": min(times), "rss_mb": rss}))


def ensure_models(models_dir, names):
    manifest = os.path.join(models_dir, "manifest.json")
    missing = [n for n in names
               if not os.path.exists(os.path.join(models_dir, n + ".onnx"))]
    if missing or not os.path.exists(manifest):
        print(f"cpu-bench: generating {' '.join(missing or names)} in "
              f"{models_dir}", file=sys.stderr)
        tmp = models_dir + ".gen"
        subprocess.run([sys.executable,
                        os.path.join(ROOT, "scripts", "make_model_set.py"),
                        "--out", tmp, "--variant", "full", "--only",
                        *names], check=True)
        os.makedirs(models_dir, exist_ok=True)
        gen = os.path.join(tmp, "full")
        for entry in os.listdir(gen):
            os.replace(os.path.join(gen, entry),
                       os.path.join(models_dir, entry))
    with open(manifest) as f:
        return json.load(f)["models"]


def compile_model(bin_dir, model, out, layout, tuning_file=None):
    cmd = [os.path.join(bin_dir, "strider-compile"), model, "-o", out,
           "--svg=false", "--quiet", f"--layout={layout}"]
    if tuning_file:
        cmd += ["--tune", f"--tuning-file={tuning_file}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{r.stderr}")


def strider_run(bin_dir, compiled, inputs, threads, runs, warmup,
                compare=None, atol=1e-5):
    cmd = [os.path.join(bin_dir, "strider-run"), compiled, "--backend=cpu",
           f"--threads={threads}", "--json"]
    for name, path in inputs:
        cmd += ["--input", f"{name}={path}"]
    if compare:
        cmd += ["--compare", compare, "--rtol", "1e-4", "--atol", str(atol)]
    else:
        cmd += ["--bench", str(runs), "--warmup", str(warmup)]
    rc, out, err, rss = child_peak_rss(cmd)
    if rc:
        raise RuntimeError(f"{' '.join(cmd)} failed (exit {rc}):\n{err}"
                           f"{out[-2000:]}")
    return json.loads(out), rss


def ort_run(model, inputs, threads, runs, warmup):
    cmd = [sys.executable, os.path.abspath(__file__), "--ort-worker",
           "--model", model, "--threads-one", str(threads), "--runs",
           str(runs), "--warmup", str(warmup)]
    for name, path in inputs:
        cmd += ["--inputs", f"{name}={path}"]
    rc, out, err, rss = child_peak_rss(cmd)
    if rc:
        raise RuntimeError(f"ORT worker failed (exit {rc}):\n{err}")
    return json.loads(out.strip().splitlines()[-1]), rss


def machine_line():
    model = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (f"{model}, {os.cpu_count()} cores, "
            f"{platform.system()} {platform.release()}")


def fmt(x, digits=2):
    return f"{x:.{digits}f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="+", default=None)
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--tuned", action="store_true",
                    help="also compile with --tune and time that program")
    ap.add_argument("--models-dir",
                    default=os.path.join(ROOT, "build", "cpu-bench", "models"))
    ap.add_argument("--work-dir",
                    default=os.path.join(ROOT, "build", "cpu-bench", "work"))
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--peak-gflops-per-core", type=float, default=214.0)
    ap.add_argument("--json", default=None)
    ap.add_argument("--write-docs", nargs="?", const=os.path.join(
        ROOT, "docs", "Benchmarks.md"), default=None)
    # Internal: the ONNX Runtime worker.
    ap.add_argument("--ort-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    ap.add_argument("--threads-one", type=int, default=1,
                    help=argparse.SUPPRESS)
    ap.add_argument("--inputs", action="append", default=[],
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.ort_worker:
        ort_worker(args)
        return 0

    for tool in ("strider-compile", "strider-run"):
        if not os.path.exists(os.path.join(args.bin, tool)):
            print(f"cpu-bench: {args.bin}/{tool} not found: run "
                  "scripts/build.sh first", file=sys.stderr)
            return 1
    names = args.only or BASE_MODELS
    manifest = ensure_models(args.models_dir, names)
    os.makedirs(args.work_dir, exist_ok=True)

    rows = []
    failed = False
    for name in names:
        info = manifest[name]
        model = os.path.join(args.models_dir, info["file"])
        data = os.path.join(args.models_dir, name + ".data")
        inputs = [(i["name"], os.path.join(args.models_dir, i["file"]))
                  for i in info["inputs"]]
        gflop = info["gflop"]
        try:
            auto = os.path.join(args.work_dir, name + ".auto")
            nchw = os.path.join(args.work_dir, name + ".nchw")
            compile_model(args.bin, model, auto, "auto")
            compile_model(args.bin, model, nchw, "nchw")
            tuned = None
            if args.tuned:
                tuned = os.path.join(args.work_dir, name + ".tuned")
                compile_model(args.bin, model, tuned, "auto",
                              os.path.join(args.work_dir, "cpu.tune"))
            absmax = max([o.get("absmax", 0.0) for o in info["outputs"]] +
                         [0.0])
            for compiled in [auto] + ([tuned] if tuned else []):
                check, _ = strider_run(args.bin, compiled, inputs, 1, 0, 0,
                                       compare=data,
                                       atol=max(1e-5, 1e-4 * absmax))
                if not check.get("match", False):
                    raise RuntimeError(f"{name}: outputs differ from ONNX "
                                       f"Runtime's: {json.dumps(check)}")
                if compiled == auto:
                    program = check.get("program", {})
            for threads in args.threads:
                s_med, o_med, n_med, t_med = [], [], [], []
                s_rss = o_rss = n_rss = 0.0
                for _ in range(args.rounds):
                    r, rss = strider_run(args.bin, auto, inputs, threads,
                                         args.runs, args.warmup)
                    s_med.append(r["bench"]["median_ms"])
                    s_rss = max(s_rss, rss)
                    r, rss = ort_run(model, inputs, threads, args.runs,
                                     args.warmup)
                    o_med.append(r["median_ms"])
                    o_rss = max(o_rss, r["rss_mb"], rss)
                    r, rss = strider_run(args.bin, nchw, inputs, threads,
                                         args.runs, args.warmup)
                    n_med.append(r["bench"]["median_ms"])
                    n_rss = max(n_rss, rss)
                    if tuned:
                        r, _ = strider_run(args.bin, tuned, inputs, threads,
                                           args.runs, args.warmup)
                        t_med.append(r["bench"]["median_ms"])
                s, o, n = (statistics.median(s_med), statistics.median(o_med),
                           statistics.median(n_med))
                peak = args.peak_gflops_per_core * threads
                row = {
                    "model": name, "gflop": gflop, "threads": threads,
                    "strider_ms": s, "ort_ms": o, "ratio": s / o,
                    "strider_gflops": gflop / (s / 1e3),
                    "strider_peak_pct": 100 * gflop / (s / 1e3) / peak,
                    "ort_gflops": gflop / (o / 1e3),
                    "ort_peak_pct": 100 * gflop / (o / 1e3) / peak,
                    "strider_nchw_ms": n, "nchw_over_auto": n / s,
                    "strider_rss_mb": s_rss, "ort_rss_mb": o_rss,
                    "strider_nchw_rss_mb": n_rss,
                    "arena_mb": program.get("arena_bytes", 0) / 2**20,
                    "fallbacks": program.get("fallbacks", 0),
                    "round_medians": {"strider": s_med, "ort": o_med,
                                      "strider_nchw": n_med},
                }
                if t_med:
                    t = statistics.median(t_med)
                    row["strider_tuned_ms"] = t
                    row["tuned_over_auto"] = t / s
                    row["round_medians"]["strider_tuned"] = t_med
                rows.append(row)
                print(f"{name} T={threads}: strider {fmt(s)} ms, ort "
                      f"{fmt(o)} ms, ratio {fmt(s / o)}, nchw {fmt(n)} ms" +
                      (f", tuned {fmt(row['strider_tuned_ms'])} ms"
                       if t_med else ""), file=sys.stderr)
        except (RuntimeError, subprocess.CalledProcessError) as e:
            print(f"cpu-bench: {name}: {e}", file=sys.stderr)
            failed = True

    header = ("| model | GFLOP | threads | ORT ms | Strider ms | Strider/ORT "
              "| Strider GFLOP/s (% peak) | ORT GFLOP/s (% peak) "
              "| Strider nchw ms | nchw/auto | fallbacks "
              "| peak RSS Strider / ORT MB | arena MB |")
    if args.tuned:
        header += " Strider tuned ms | tuned/auto |"
    lines = [header, "|" + "---|" * (15 if args.tuned else 13)]
    for r in rows:
        tuned_cols = (f" {fmt(r['strider_tuned_ms'])} "
                      f"| {fmt(r['tuned_over_auto'])} |"
                      if "strider_tuned_ms" in r else
                      (" - | - |" if args.tuned else ""))
        lines.append(
            f"| {r['model']} | {fmt(r['gflop'])} | {r['threads']} "
            f"| {fmt(r['ort_ms'])} | {fmt(r['strider_ms'])} "
            f"| {fmt(r['ratio'])} "
            f"| {fmt(r['strider_gflops'], 0)} ({fmt(r['strider_peak_pct'], 0)}%) "
            f"| {fmt(r['ort_gflops'], 0)} ({fmt(r['ort_peak_pct'], 0)}%) "
            f"| {fmt(r['strider_nchw_ms'])} | {fmt(r['nchw_over_auto'])} "
            f"| {r['fallbacks']} "
            f"| {fmt(r['strider_rss_mb'], 0)} / {fmt(r['ort_rss_mb'], 0)} "
            f"| {fmt(r['arena_mb'], 1)} |" + tuned_cols)
    table = "\n".join(lines)
    print(table)

    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    if args.write_docs and rows:
        date = datetime.date.today().isoformat()
        body = (f"Measured {date} on {machine_line()}: "
                f"{args.rounds} rounds x {args.runs} runs (after "
                f"{args.warmup} warm-up runs) per system, alternating; "
                f"medians. Peak: {args.peak_gflops_per_core:g} GFLOP/s per "
                f"core.\n\n{table}\n")
        path = args.write_docs
        doc = open(path).read() if os.path.exists(path) else ""
        if MARK_BEGIN in doc and MARK_END in doc:
            pre, rest = doc.split(MARK_BEGIN, 1)
            _, post = rest.split(MARK_END, 1)
        else:
            pre, post = doc + "\n## CPU backend vs ONNX Runtime\n\n", "\n"
        with open(path, "w") as f:
            f.write(pre + MARK_BEGIN + "\n" + body + MARK_END + post)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
