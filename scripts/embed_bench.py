#!/usr/bin/env python3
"""Strider as a library, measured: the compiled artifact's load time, a run
through the C API against strider-run, and peak memory against ONNX
Runtime, in one run on the same machine.

Usage:
    embed_bench.py [--only NAME ...] [--threads T] [--runs N] [--warmup W]
                   [--rounds R] [--models-dir DIR] [--work-dir DIR]
                   [--bin DIR] [--write-docs [FILE]]

Models: the full-size resnet50 and vgg16 of make_model_set.py (generated
into build/cpu-bench/models when missing, as cpu_bench.py does). Each is
compiled with strider-compile into WORK/<name> (which writes
model.strider, with the constants packed for this machine). Then, per
round, in turn:
  * strider-embed-bench WORK/<name>/model.strider (bench/embed-bench.c:
    libstrider only): strider_model_load time, first
    strider_session_prepare time (lowering with the packed constants
    taken from the mapping), median run latency, the process's peak RSS;
  * strider-run WORK/<name> --backend=cpu --bench (the same artifact):
    median latency and peak RSS;
  * ONNX Runtime on the .onnx file (cpu_bench.py's worker process).
Reported: medians over rounds; C API / strider-run latency; peak RSS of
the three. --write-docs puts the table into docs/Benchmarks.md between
<!-- embed-bench:begin --> and <!-- embed-bench:end -->.
"""
import argparse
import datetime
import importlib.util
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARK_BEGIN = "<!-- embed-bench:begin -->"
MARK_END = "<!-- embed-bench:end -->"


def load_cpu_bench():
    spec = importlib.util.spec_from_file_location(
        "cpu_bench", os.path.join(ROOT, "scripts", "cpu_bench.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="+", default=["resnet50", "vgg16"])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--models-dir",
                    default=os.path.join(ROOT, "build", "cpu-bench", "models"))
    ap.add_argument("--work-dir",
                    default=os.path.join(ROOT, "build", "embed-bench"))
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--write-docs", nargs="?", const=os.path.join(
        ROOT, "docs", "Benchmarks.md"), default=None)
    args = ap.parse_args()
    cb = load_cpu_bench()
    manifest = cb.ensure_models(args.models_dir, args.only)
    rows = []
    for name in args.only:
        info = manifest[name]
        model = os.path.join(args.models_dir, info["file"])
        out = os.path.join(args.work_dir, name)
        cb.compile_model(args.bin, model, out, "auto")
        artifact = os.path.join(out, "model.strider")
        inputs = [(i["name"], os.path.join(args.models_dir, i["file"]))
                  for i in info["inputs"]]
        r = {"name": name, "artifact_mb": os.path.getsize(artifact) / 2**20,
             "load": [], "prepare": [], "capi": [], "capi_rss": [],
             "run": [], "run_rss": [], "ort": [], "ort_rss": []}
        for _ in range(args.rounds):
            cmd = [os.path.join(args.bin, "strider-embed-bench"), artifact,
                   "--threads", str(args.threads), "--runs", str(args.runs),
                   "--warmup", str(args.warmup)]
            rc, so, se, rss = cb.child_peak_rss(cmd)
            if rc:
                sys.exit(f"embed-bench: {' '.join(cmd)} failed:\n{se}")
            j = json.loads(so.strip().splitlines()[-1])
            r["load"].append(j["load_ms"])
            r["prepare"].append(j["prepare_ms"])
            r["capi"].append(j["median_ms"])
            r["capi_rss"].append(rss)
            j, rss = cb.strider_run(args.bin, out, inputs, args.threads,
                                    args.runs, args.warmup)
            r["run"].append(j["bench"]["median_ms"])
            r["run_rss"].append(rss)
            j, rss = cb.ort_run(model, inputs, args.threads, args.runs,
                                args.warmup)
            r["ort"].append(j["median_ms"])
            r["ort_rss"].append(rss)
        rows.append({k: (statistics.median(v) if isinstance(v, list) else v)
                     for k, v in r.items()})
        print(json.dumps(rows[-1]), file=sys.stderr)

    lines = [
        f"Measured {datetime.date.today().isoformat()} on "
        f"{cb.machine_line()}; {args.threads} thread(s), medians of "
        f"{args.rounds} rounds of {args.runs} runs.",
        "",
        "| Model | model.strider | load | first prepare | C API run | "
        "strider-run | C API / strider-run | peak RSS: C API | strider-run "
        "| ONNX Runtime | ORT run |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['name']} | {r['artifact_mb']:.0f} MB | "
            f"{r['load']:.1f} ms | {r['prepare']:.1f} ms | "
            f"{r['capi']:.2f} ms | {r['run']:.2f} ms | "
            f"{r['capi'] / r['run']:.3f} | {r['capi_rss']:.0f} MB | "
            f"{r['run_rss']:.0f} MB | {r['ort_rss']:.0f} MB | "
            f"{r['ort']:.2f} ms |")
    table = "\n".join(lines)
    print(table)
    if args.write_docs:
        with open(args.write_docs) as f:
            doc = f.read()
        block = f"{MARK_BEGIN}\n{table}\n{MARK_END}"
        if MARK_BEGIN in doc:
            pre = doc.split(MARK_BEGIN)[0]
            post = doc.split(MARK_END, 1)[1]
            doc = pre + block + post
        else:
            doc += "\n## Strider as a library (`scripts/embed_bench.py`)\n\n" \
                   + block + "\n"
        with open(args.write_docs, "w") as f:
            f.write(doc)


if __name__ == "__main__":
    main()
