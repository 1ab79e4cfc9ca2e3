#!/usr/bin/env python3
"""Benchmark Strider's layout choice against ONNX Runtime's graph optimizer on
the model set of make_model_set.py: data moved by layout conversions, compile
time, and the numerics of the compiled model.

Usage:
    layout_bench.py [--variant small|full] [--only NAME ...]
                    [--models-dir DIR] [--cache-dir DIR] [--work-dir DIR]
                    [--bin DIR] [--emulate] [--target T] [--repeat N]
                    [--no-ort] [--json OUT] [--write-docs [FILE]]
                    [--rtol R] [--atol A]

Models: DIR/<variant>/<name>.onnx (or DIR/<name>.onnx) with --models-dir,
else the ones cached in --cache-dir (default build/layout-bench/models),
generated there with make_model_set.py when missing. Default: every model
of the set (bases and *_nhwc) in the `full` variant.

Per model:
  * strider-compile MODEL -o OUT --target=T --layout=auto, run --repeat times
    (default 3); "compile ms" is the median of the times strider-compile
    prints ("compile time: X ms": import, passes, export, reports), the
    median wall time of the process is kept in the JSON as well. Its
    report.json gives the relayouts (count and bytes, raw and excluding the
    relayouts whose source is a graph input) and the copies (Transposes and
    Reshapes that still move data).
  * once more with --io-layout=nhwc.
  * ONNX Runtime's layout stats (ort_layout_stats.py) at levels basic,
    extended and all: Transpose + ReorderInput/ReorderOutput nodes and the
    bytes they write; "ORT all ms" is the best of --repeat session
    creations at `all` (graph optimization plus kernel set-up).
  * numerics: ONNX Runtime (optimizations off, 1 thread) on OUT/model.onnx
    vs on the original, on the model's .npy inputs (random ones if absent),
    for both compiles. Graph inputs/outputs that report.json lays out
    non-identically (its values, or the relayout that writes a graph output)
    are transposed in/out; one the report does not name whose shape differs
    is tried as channels-last. Passes when every output is
    np.allclose(rtol, atol) (default 1e-4, 1e-5). "max rel err" is
    max|got - want| / max|want| over all outputs.

"Strider ≤ ORT best?" compares everything Strider moves (relayout bytes +
copy bytes, raw) with the smallest byte count over ORT's levels (and, when
Strider relayouts a graph input, the same without that relayout).
"Body relayouts" are relayouts other than the one reading a graph input and
the one producing a graph output (by report.json: source value is a graph
input / reason names a graph output, or model.onnx has the relayout's
Transpose write a graph output).

Without build/bin/strider-compile the script stops and asks for
scripts/build.sh; --emulate runs the same pipeline with strider-translate +
strider-opt instead (import, --pass-pipeline=infer-shapes,canonicalize,
infer-shapes,layout-assignment, export; the time is the sum of the three
processes' wall times).

Output: a Markdown table on stdout, the body-relayout counts of resnet50,
mobilenetv2, densenet121, unet and vgg16, and with --write-docs the table
in docs/Benchmarks.md between <!-- layout-bench:begin --> and
<!-- layout-bench:end --> (one section per variant; the file is created
when absent). Exit 1 when any compile or numeric check fails.
"""
import argparse
import datetime
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import ort_layout_stats  # noqa: E402

BODY_MODELS = ("resnet50", "mobilenetv2", "densenet121", "unet", "vgg16")
ALL_BASES = ("resnet50", "mobilenetv2", "densenet121", "unet", "vgg16",
             "shufflenet", "efficientnet_se", "conv3d", "layout_hostile")
ALL_MODELS = tuple(n for b in ALL_BASES for n in (b, b + "_nhwc"))
PIPELINE = "infer-shapes,canonicalize,infer-shapes,layout-assignment"
MARK_BEGIN = "<!-- layout-bench:begin -->"
MARK_END = "<!-- layout-bench:end -->"


class BenchError(Exception):
    """A failure with a message meant for the user."""


# --------------------------------------------------------------------------
# Tools

class Compiler:
    """Runs strider-compile, or its strider-translate + strider-opt
    emulation, and reads what it wrote."""

    def __init__(self, bin_dir=None, emulate=False):
        self.emulate = emulate
        names = (["strider-translate", "strider-opt"] if emulate
                 else ["strider-compile"])
        self.tools = {}
        for name in names:
            path = find_tool(name, bin_dir)
            if not path:
                where = bin_dir or os.path.join(ROOT, "build", "bin")
                raise BenchError(
                    f"{name} not found in {where}"
                    f"{'' if bin_dir else ' (nor on PATH)'}; build it "
                    f"with scripts/build.sh"
                    + ("" if emulate else
                       ", or pass --emulate to use strider-translate + "
                       "strider-opt"))
            self.tools[name] = path

    def stamp(self):
        """Modification times of the tools (to see a rebuild mid-run)."""
        out = {}
        for name, path in self.tools.items():
            try:
                out[name] = os.stat(path).st_mtime
            except OSError:
                out[name] = None
        return out

    def built(self):
        times = [t for t in self.stamp().values() if t]
        if not times:
            return "?"
        return datetime.datetime.fromtimestamp(max(times)).strftime(
            "%Y-%m-%d %H:%M")

    def describe(self):
        return ("strider-translate + strider-opt (emulation)" if self.emulate
                else self.tools["strider-compile"])

    def compile(self, model, out_dir, target="cpu-avx512", layout="auto",
                io_layout="model", dims=()):
        """One compile into out_dir. Returns dict(report, model, wall_s,
        self_ms, stdout)."""
        if os.path.isdir(out_dir):
            shutil.rmtree(out_dir)
        # strider-compile creates OUT but not its parents.
        os.makedirs(os.path.dirname(os.path.abspath(out_dir)), exist_ok=True)
        flags = [f"--target={target}", f"--layout={layout}",
                 f"--io-layout={io_layout}"] + [f"--dim={d}" for d in dims]
        if self.emulate:
            os.makedirs(out_dir)
            lir_in = os.path.join(out_dir, "input.lir")
            lir_out = os.path.join(out_dir, "model.lir")
            cmds = [
                [self.tools["strider-translate"], "--import-onnx", model,
                 "-o", lir_in],
                [self.tools["strider-opt"], lir_in,
                 f"--pass-pipeline={PIPELINE}"] + flags +
                [f"--layout-report={os.path.join(out_dir, 'report.json')}",
                 "--layout-report-format=json", "-o", lir_out],
                [self.tools["strider-translate"], "--export-onnx", lir_out,
                 "-o", os.path.join(out_dir, "model.onnx")],
            ]
        else:
            # No Graphviz rendering: not needed here, and slow on big graphs.
            cmds = [[self.tools["strider-compile"], model, "-o", out_dir,
                     "--svg=false"] + flags]
        wall, out = 0.0, ""
        for cmd in cmds:
            t0 = time.perf_counter()
            p = subprocess.run(cmd, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            wall += time.perf_counter() - t0
            out += p.stdout
            if p.returncode != 0:
                raise BenchError(f"{shlex.join(cmd)} failed (exit "
                                 f"{p.returncode}):\n{p.stdout.strip()}")
        m = re.search(r"compile time:\s*([0-9.]+)\s*ms", out)
        self_ms = float(m.group(1)) if m else wall * 1e3
        report_path = os.path.join(out_dir, "report.json")
        with open(report_path) as f:
            report = json.load(f)
        return dict(report=report, model=os.path.join(out_dir, "model.onnx"),
                    wall_s=wall, self_ms=self_ms, stdout=out)


def find_tool(name, bin_dir=None):
    if bin_dir:
        p = os.path.join(bin_dir, name)
        return p if os.access(p, os.X_OK) else None
    p = os.path.join(ROOT, "build", "bin", name)
    if os.access(p, os.X_OK):
        return p
    return shutil.which(name)


# --------------------------------------------------------------------------
# Reports

NAMED_LAYOUTS = {
    "ncw": 3, "oiw": 3, "nchw": 4, "oihw": 4, "ncdhw": 5, "oidhw": 5,
    "nwc": -3, "owi": -3, "nhwc": -4, "ohwi": -4, "ndhwc": -5, "odhwi": -5,
}


def layout_perm(layout, rank):
    """Permutation (memory order, major to minor) of a report layout
    string; None for identity or unknown."""
    if not layout:
        return None
    s = layout.strip().lower()
    if s in NAMED_LAYOUTS:
        r = NAMED_LAYOUTS[s]
        if r > 0 or -r != rank:
            return None
        return [0] + list(range(2, rank)) + [1]
    if s.startswith("["):
        try:
            perm = [int(x) for x in s.strip("[]").split(",") if x.strip()]
        except ValueError:
            return None
        if sorted(perm) == list(range(rank)) and perm != list(range(rank)):
            return perm
    return None


def report_layouts(report):
    """Value name -> layout string, from report.json: the values, and the
    relayouts that make a graph input/output (whose results the values list
    leaves out; their reason reads "graph output 'NAME' in LAYOUT")."""
    layouts = {v["name"]: v.get("layout") for v in report.get("values", [])}
    for r in report.get("relayouts", []):
        m = re.search(r"graph output '([^']+)'", r.get("reason", ""))
        if m and r.get("to"):
            layouts[m.group(1)] = r["to"]
    return layouts


def channels_last_perm(rank):
    return [0] + list(range(2, rank)) + [1] if rank >= 3 else None


def graph_io(path):
    m = onnx.load(path, load_external_data=False)
    inits = {t.name for t in m.graph.initializer}
    return ([i.name for i in m.graph.input if i.name not in inits],
            [o.name for o in m.graph.output])


def classify_relayouts(report, inputs, outputs, compiled_model=None):
    """Each relayout of report.json tagged "input", "output" or "body"."""
    written_out = set()
    if compiled_model and os.path.exists(compiled_model):
        m = onnx.load(compiled_model, load_external_data=False)
        outs = set(outputs) | {o.name for o in m.graph.output}
        for n in m.graph.node:
            if n.op_type == "Transpose" and n.output and n.output[0] in outs:
                written_out.add(n.input[0])
    inputs, outputs = set(inputs), set(outputs)
    tagged = []
    for r in report.get("relayouts", []):
        reason = r.get("reason", "")
        if r["value"] in inputs or "graph input" in reason:
            kind = "input"
        elif (r["value"] in outputs or "graph output" in reason
              or r["value"] in written_out):
            kind = "output"
        else:
            kind = "body"
        tagged.append(dict(r, kind=kind))
    return tagged


def summarize(report, inputs, outputs, compiled_model=None):
    t = report["totals"]
    tagged = classify_relayouts(report, inputs, outputs, compiled_model)
    in_bytes = sum(r["bytes"] for r in tagged if r["kind"] == "input")
    return dict(
        relayouts=t["relayouts"], relayout_bytes=t["relayout_bytes"],
        relayouts_excl_input=sum(1 for r in tagged if r["kind"] != "input"),
        relayout_bytes_excl_input=t["relayout_bytes"] - in_bytes,
        body_relayouts=sum(1 for r in tagged if r["kind"] == "body"),
        body_relayout_bytes=sum(r["bytes"] for r in tagged
                                if r["kind"] == "body"),
        copies=t["copies"], copy_bytes=t["copy_bytes"],
        moved_bytes=t["relayout_bytes"] + t["copy_bytes"],
        estimated_cost=t.get("estimated_cost"),
        all_nchw_cost=t.get("all_nchw_cost"),
        all_nhwc_cost=t.get("all_nhwc_cost"),
        relayout_list=tagged, copy_list=report.get("copies", []))


# --------------------------------------------------------------------------
# Numerics

def _session(path):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    so.log_severity_level = 3
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def _fits(shape, declared):
    return len(shape) == len(declared) and all(
        not isinstance(d, int) or d == s for s, d in zip(shape, declared))


def check_numerics(original, candidate, report=None, rtol=1e-4, atol=1e-5,
                   seed=0):
    """ORT on candidate vs ORT on original. Returns dict(ok, max_abs,
    max_rel, lines, error)."""
    layouts = report_layouts(report) if report else {}
    feeds, _ = ort_layout_stats.model_inputs(original, seed)
    ref = _session(original)
    cand = _session(candidate)
    want = dict(zip([o.name for o in ref.get_outputs()],
                    ref.run(None, feeds)))
    cand_feeds, notes = {}, []
    for meta in cand.get_inputs():
        if meta.name not in feeds:
            return dict(ok=False, error=f"candidate input {meta.name!r} is "
                        f"not an input of the original", lines=[])
        x = feeds[meta.name]
        perm = layout_perm(layouts.get(meta.name), x.ndim)
        if not perm and not _fits(x.shape, meta.shape):
            perm = channels_last_perm(x.ndim)   # not in the report: guess
            notes.append(f"input {meta.name}: layout not in report.json, "
                         f"shape {meta.shape}: assumed channels-last")
        if perm and _fits(np.transpose(x, perm).shape, meta.shape):
            x = np.ascontiguousarray(np.transpose(x, perm))
        elif not _fits(x.shape, meta.shape):
            return dict(ok=False, lines=[], error=(
                f"input {meta.name}: candidate wants {meta.shape}, the "
                f"original's is {list(x.shape)}"))
        cand_feeds[meta.name] = x
    names = [o.name for o in cand.get_outputs()]
    got = dict(zip(names, cand.run(None, cand_feeds)))
    ok, lines, max_abs, max_rel = True, notes, 0.0, 0.0
    if set(names) != set(want):
        ok = False
        lines.append(f"outputs differ: {sorted(names)} vs {sorted(want)}")
    for name, w in want.items():
        if name not in got:
            continue
        g = got[name]
        perm = layout_perm(layouts.get(name), w.ndim)
        if not perm and g.shape != w.shape:
            perm = channels_last_perm(w.ndim)   # not in the report: guess
            notes.append(f"output {name}: layout not in report.json, shape "
                         f"{list(g.shape)}: assumed channels-last")
        if perm and g.shape == tuple(w.shape[p] for p in perm):
            g = np.transpose(g, np.argsort(perm))
        if g.shape != w.shape:
            ok = False
            lines.append(f"output {name}: shape {list(g.shape)}, expected "
                         f"{list(w.shape)}")
            continue
        w64, g64 = w.astype(np.float64), g.astype(np.float64)
        err = float(np.max(np.abs(w64 - g64))) if w.size else 0.0
        scale = float(np.max(np.abs(w64))) if w.size else 0.0
        rel = err / scale if scale > 0 else err
        match = bool(np.allclose(g, w, rtol=rtol, atol=atol))
        ok &= match
        max_abs, max_rel = max(max_abs, err), max(max_rel, rel)
        lines.append(f"output {name} {list(w.shape)}: max abs error "
                     f"{err:.3g}, max rel {rel:.3g} "
                     f"({'match' if match else 'MISMATCH'})")
    return dict(ok=ok, max_abs=max_abs, max_rel=max_rel, lines=lines,
                error=None)


# --------------------------------------------------------------------------
# Models

def ensure_models(names, variant, models_dir, cache_dir):
    """Paths of the requested models; generates missing ones into
    cache_dir (never into a --models-dir)."""
    if models_dir:
        d = os.path.join(models_dir, variant)
        if not os.path.isdir(d):
            d = models_dir
        paths = {n: os.path.join(d, n + ".onnx") for n in names}
        missing = [n for n, p in paths.items() if not os.path.exists(p)]
        if missing:
            raise BenchError(f"{d}: no {', '.join(m + '.onnx' for m in missing)}"
                             f" (generate with scripts/make_model_set.py "
                             f"--out {models_dir} --variant {variant})")
        return paths
    d = os.path.join(cache_dir, variant)
    paths = {n: os.path.join(d, n + ".onnx") for n in names}
    missing = [n for n, p in paths.items() if not os.path.exists(p)]
    if missing:
        # A *_nhwc model is checked against its base's outputs: generate
        # the bases with them.
        gen = sorted(set(missing) | {m[:-5] for m in missing
                                     if m.endswith("_nhwc")},
                     key=ALL_MODELS.index)
        print(f"generating {variant} model(s) {' '.join(gen)} into {d} ...",
              file=sys.stderr, flush=True)
        cmd = [sys.executable, os.path.join(HERE, "make_model_set.py"),
               "--out", cache_dir, "--variant", variant, "--only"] + gen
        p = subprocess.run(cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            raise BenchError(f"{shlex.join(cmd)} failed:\n{p.stdout}")
    return paths


# --------------------------------------------------------------------------
# One model

def bench_model(name, path, compiler, work, a):
    row = dict(model=name, path=path, errors=[])
    inputs, outputs = graph_io(path)
    out_dir = os.path.join(work, name)
    out_nhwc = os.path.join(work, name + ".io-nhwc")

    # Strider, default I/O layout, timed.
    try:
        runs = [compiler.compile(path, out_dir, target=a.target)
                for _ in range(max(1, a.repeat))]
        last = runs[-1]
        row["strider"] = summarize(last["report"], inputs, outputs,
                                   last["model"])
        row["compile_ms"] = statistics.median(r["self_ms"] for r in runs)
        row["compile_wall_ms"] = statistics.median(r["wall_s"] * 1e3
                                                   for r in runs)
        row["compile_ms_runs"] = [round(r["self_ms"], 2) for r in runs]
        row["numerics"] = check_numerics(path, last["model"], last["report"],
                                         a.rtol, a.atol)
    except BenchError as ex:
        row["errors"].append(f"compile: {ex}")
    # Strider, --io-layout=nhwc.
    try:
        r = compiler.compile(path, out_nhwc, target=a.target,
                             io_layout="nhwc")
        row["strider_io_nhwc"] = summarize(r["report"], inputs, outputs,
                                           r["model"])
        row["numerics_io_nhwc"] = check_numerics(path, r["model"],
                                                 r["report"], a.rtol, a.atol)
    except BenchError as ex:
        row["errors"].append(f"compile --io-layout=nhwc: {ex}")
    for key in ("numerics", "numerics_io_nhwc"):
        n = row.get(key)
        if n and not n["ok"]:
            row["errors"].append(f"{key}: " + (n["error"] or "; ".join(
                x for x in n["lines"] if "MISMATCH" in x or "shape" in x
                or "differ" in x)))
    # ONNX Runtime.
    if not a.no_ort:
        row["ort"] = {}
        try:
            feeds, _ = ort_layout_stats.model_inputs(path, 0)
            with tempfile.TemporaryDirectory(prefix="layout_bench_") as tmp:
                for lv in a.levels:
                    s = ort_layout_stats.stats_for(path, lv, feeds, tmp, None,
                                                   max(1, a.repeat))
                    s.pop("nodes", None)
                    row["ort"][lv] = s
        except Exception as ex:   # keep going; shown as ERROR in the table
            row["ort_error"] = f"{type(ex).__name__}: {ex}"
    if not a.keep:
        for d in (out_dir, out_nhwc):
            shutil.rmtree(d, ignore_errors=True)
    return row


# --------------------------------------------------------------------------
# Output

def fmt_bytes(n):
    if n is None:
        return "-"
    if n == 0:
        return "0"
    if n < 1e3:
        return f"{n} B"
    if n < 1e6:
        return f"{n / 1e3:.1f} kB"
    if n < 1e9:
        return f"{n / 1e6:.2f} MB"
    return f"{n / 1e9:.2f} GB"


def ort_best(row):
    ok = [s for s in row.get("ort", {}).values() if "bytes" in s]
    return min(s["bytes"] for s in ok) if ok else None


def table(rows, levels):
    head = (["model", "Strider relayouts", "relayout bytes (raw / excl. "
             "input)", "copy bytes", "--io-layout=nhwc relayouts / bytes"]
            + [f"ORT {lv} T+R / bytes" for lv in levels]
            + ["Strider ≤ ORT best?", "compile ms", "ORT all ms",
               "max rel err"])
    lines = ["| " + " | ".join(head) + " |",
             "|" + "|".join(["---"] + ["--:"] * (len(head) - 1)) + "|"]
    for r in rows:
        s, sn = r.get("strider"), r.get("strider_io_nhwc")
        cells = [r["model"]]
        if s:
            cells += [str(s["relayouts"]),
                      f"{fmt_bytes(s['relayout_bytes'])} / "
                      f"{fmt_bytes(s['relayout_bytes_excl_input'])}",
                      fmt_bytes(s["copy_bytes"])]
        else:
            cells += ["ERROR"] * 3
        cells.append(f"{sn['relayouts']} / {fmt_bytes(sn['relayout_bytes'])}"
                     if sn else "ERROR")
        for lv in levels:
            o = r.get("ort", {}).get(lv)
            if o and "bytes" in o:
                cells.append(f"{o['transpose_count']}+{o['reorder_count']} / "
                             f"{fmt_bytes(o['bytes'])}")
            else:
                cells.append("-" if "ort" not in r else "ERROR")
        best = ort_best(r)
        if s and best is not None:
            moved = s["moved_bytes"]
            excl = moved - (s["relayout_bytes"] - s["relayout_bytes_excl_input"])
            cell = ("yes" if moved <= best else "**NO**") + \
                f" ({fmt_bytes(moved)} vs {fmt_bytes(best)}"
            if excl != moved:
                cell += (f"; excl. input {fmt_bytes(excl)}: "
                         + ("yes" if excl <= best else "no"))
            cells.append(cell + ")")
        else:
            cells.append("-")
        cells.append(f"{r['compile_ms']:.1f}" if "compile_ms" in r else "-")
        o = r.get("ort", {}).get("all")
        cells.append(f"{o['session_s'] * 1e3:.1f}" if o and "session_s" in o
                     else "-")
        nums = [r.get(k) for k in ("numerics", "numerics_io_nhwc")]
        if all(n and n["error"] is None for n in nums):
            err = max(n["max_rel"] for n in nums)
            cells.append(f"{err:.1e}" + ("" if all(n["ok"] for n in nums)
                                         else " **FAIL**"))
        else:
            cells.append("**FAIL**")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def body_lines(rows):
    out = []
    for r in rows:
        base = r["model"][:-5] if r["model"].endswith("_nhwc") else r["model"]
        if base not in BODY_MODELS:
            continue
        parts = []
        for key, label in (("strider", "io=model"),
                           ("strider_io_nhwc", "io=nhwc")):
            s = r.get(key)
            if s:
                extra = ", ".join(f"{x['value']} {x['from']}->{x['to']}"
                                  for x in s["relayout_list"]
                                  if x["kind"] == "body")
                parts.append(f"{label}: {s['body_relayouts']}"
                             + (f" ({extra})" if extra else ""))
        out.append(f"- {r['model']}: " + "; ".join(parts))
    return out


def machine():
    model, cpus = None, os.cpu_count()
    try:
        txt = subprocess.run(["lscpu"], stdout=subprocess.PIPE, text=True,
                             env=dict(os.environ, LC_ALL="C")).stdout
        kv = dict(line.split(":", 1) for line in txt.splitlines()
                  if ":" in line)
        kv = {k.strip(): v.strip() for k, v in kv.items()}
        model = kv.get("Model name")
        cores = kv.get("Core(s) per socket")
        sockets = kv.get("Socket(s)")
        if cores and sockets and cores.isdigit() and sockets.isdigit():
            return f"{model}, {int(cores) * int(sockets)} cores " \
                   f"({kv.get('CPU(s)', cpus)} CPUs)"
    except (OSError, ValueError):
        pass
    return f"{model or 'unknown CPU'}, {cpus} CPUs"


def git_rev():
    try:
        rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short",
                              "HEAD"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True).stdout
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain",
                                "--untracked-files=no"],
                               stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True).stdout
        return rev.strip() + (" + uncommitted changes" if dirty.strip()
                              else "") if rev.strip() else None
    except OSError:
        return None


def section(variant, rows, levels, command, compiler, load, rebuilt):
    rev = git_rev()
    lines = [f"### `{variant}` variant", "",
             f"- Date: {datetime.date.today().isoformat()}",
             f"- Machine: {machine()}; load average {load} at the start",
             f"- Strider: {'emulated pipeline' if compiler.emulate else 'strider-compile'}"
             + f" built {compiler.built()}" + (f", git {rev}" if rev else "")
             + (" (**the tools were rebuilt during the run**)"
                if rebuilt else ""),
             f"- onnxruntime {ort.__version__}, onnx {onnx.__version__}",
             f"- Command: `{command}`", "",
             table(rows, levels), "",
             "Body relayouts (relayouts other than the one reading a graph "
             "input and the one writing a graph output):", ""]
    lines += body_lines(rows) or ["- (none of resnet50, mobilenetv2, "
                                  "densenet121, unet, vgg16 benchmarked)"]
    return "\n".join(lines) + "\n"


DOC_INTRO = """# Benchmarks

## Layout conversions: Strider vs ONNX Runtime

`scripts/layout_bench.py` compiles every model of the benchmark set
(`scripts/make_model_set.py`) with `strider-compile --target=cpu-avx512
--layout=auto` (and once with `--io-layout=nhwc`), and optimizes the same
model with ONNX Runtime's graph optimizer at levels basic, extended and all
(`scripts/ort_layout_stats.py`). It counts what each leaves behind that only
moves data:

- Strider: `relayout` nodes (count, bytes; "excl. input" leaves out the
  relayouts of a graph input) and copies (Transposes/Reshapes that still move
  data), from `report.json`.
- ORT: `Transpose` nodes plus NCHWc `ReorderInput`/`ReorderOutput` nodes
  (T+R) and the bytes they write, measured by running the optimized graph.

"Strider ≤ ORT best?" compares Strider's relayout + copy bytes with the
smallest byte count of the three ORT levels (and, where Strider relayouts a
graph input, the same without that relayout). ORT's basic and extended levels
never change layouts, so a channels-first model has 0 bytes there: any
relayout Strider adds for faster channels-last kernels shows as "NO". Bytes
are the measure here, not time. Compile time is the median of 3
`strider-compile` runs (the time it prints: import, passes, export, reports);
"ORT all ms" is the best of 3 session creations at level all (graph
optimization plus kernel set-up). "max rel err" is max|got - want| / max|want|
of ORT on Strider's model vs ORT on the original (optimizations off), worst of
the two compiles; every output must also pass `np.allclose(rtol=1e-4,
atol=1e-5)`.

Regenerate with `scripts/layout_bench.py --variant small --write-docs` (or
`--variant full`, which generates the 224x224 models first).

"""


def write_docs(path, variant, text):
    if os.path.exists(path):
        with open(path) as f:
            doc = f.read()
    else:
        doc = DOC_INTRO
    if MARK_BEGIN in doc and MARK_END in doc:
        pre, rest = doc.split(MARK_BEGIN, 1)
        block, post = rest.split(MARK_END, 1)
    else:
        pre, block, post = doc.rstrip("\n") + "\n\n", "", "\n"
    # The block holds one "### `variant` variant" section per variant.
    sections, cur = {}, None
    for line in block.splitlines(keepends=True):
        m = re.match(r"### `(\w+)` variant", line)
        if m:
            cur = m.group(1)
            sections[cur] = ""
        if cur:
            sections[cur] += line
    sections[variant] = text
    order = sorted(sections, key=lambda v: ({"small": 0, "full": 1}.get(v, 2),
                                            v))
    body = "\n".join(sections[v].rstrip("\n") + "\n" for v in order)
    with open(path, "w") as f:
        f.write(pre + MARK_BEGIN + "\n" + body + MARK_END + post)


# --------------------------------------------------------------------------

def main():
    p = argparse.ArgumentParser(
        description=" ".join(__doc__.split("\n\n")[0].split()),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--variant", choices=["small", "full"], default="full")
    p.add_argument("--only", nargs="+", metavar="NAME",
                   help=f"models to run (default all: {' '.join(ALL_MODELS)})")
    p.add_argument("--models-dir", metavar="DIR",
                   help="use the models in DIR/<variant> (or DIR) instead of "
                   "the cache")
    p.add_argument("--cache-dir", metavar="DIR",
                   default=os.path.join(ROOT, "build", "layout-bench",
                                        "models"),
                   help="where generated models are kept (default "
                   "build/layout-bench/models)")
    p.add_argument("--work-dir", metavar="DIR",
                   help="compile outputs go here (default: a temporary "
                   "directory, removed)")
    p.add_argument("--keep", action="store_true",
                   help="keep the compile outputs (in --work-dir)")
    p.add_argument("--bin", metavar="DIR",
                   help="directory of the Strider tools (default build/bin)")
    p.add_argument("--emulate", action="store_true",
                   help="use strider-translate + strider-opt instead of "
                   "strider-compile")
    p.add_argument("--target", default="cpu-avx512")
    p.add_argument("--repeat", type=int, default=3,
                   help="compiles / ORT session creations to time")
    p.add_argument("--levels", default="basic,extended,all",
                   help="ORT levels to measure")
    p.add_argument("--no-ort", action="store_true",
                   help="skip ONNX Runtime's layout stats")
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--atol", type=float, default=1e-5)
    p.add_argument("--json", metavar="OUT", help="write all numbers here")
    p.add_argument("--write-docs", nargs="?", metavar="FILE",
                   const=os.path.join(ROOT, "docs", "Benchmarks.md"),
                   help="put the table into docs/Benchmarks.md (or FILE)")
    a = p.parse_args()
    a.levels = [lv.strip() for lv in a.levels.split(",") if lv.strip()]
    for lv in a.levels:
        if lv not in ort_layout_stats.LEVELS:
            p.error(f"unknown level {lv!r}")
    names = list(ALL_MODELS)
    if a.only:
        bad = [n for n in a.only if n not in ALL_MODELS]
        if bad:
            p.error(f"unknown model(s) {', '.join(bad)}; known: "
                    f"{' '.join(ALL_MODELS)}")
        names = [n for n in ALL_MODELS if n in a.only]
    if a.keep and not a.work_dir:
        p.error("--keep needs --work-dir")

    try:
        compiler = Compiler(a.bin, a.emulate)
        paths = ensure_models(names, a.variant, a.models_dir, a.cache_dir)
    except BenchError as ex:
        print(f"layout_bench: {ex}", file=sys.stderr)
        return 1

    rows = []
    tmp = None
    work = a.work_dir
    if not work:
        tmp = tempfile.TemporaryDirectory(prefix="layout_bench_")
        work = tmp.name
    os.makedirs(work, exist_ok=True)
    load = "%.1f" % os.getloadavg()[0] if hasattr(os, "getloadavg") else "?"
    stamp = compiler.stamp()
    t_start = time.perf_counter()
    try:
        for name in names:
            t0 = time.perf_counter()
            row = bench_model(name, paths[name], compiler, work, a)
            s = row.get("strider")
            print(f"{name}: "
                  + (f"relayouts {s['relayouts']} ({fmt_bytes(s['relayout_bytes'])}),"
                     f" copies {s['copies']} ({fmt_bytes(s['copy_bytes'])}), "
                     f"body {s['body_relayouts']}, compile "
                     f"{row['compile_ms']:.1f} ms" if s else "compile FAILED")
                  + (f", numerics max rel {row['numerics']['max_rel']:.2g}"
                     if row.get("numerics") and row["numerics"]["error"] is None
                     else "")
                  + f" [{time.perf_counter() - t0:.1f} s]",
                  file=sys.stderr, flush=True)
            for e in row["errors"]:
                print(f"  {name}: {e}", file=sys.stderr)
            if row.get("ort_error"):
                print(f"  {name}: ORT stats: {row['ort_error']}",
                      file=sys.stderr)
            rows.append(row)
    finally:
        if tmp:
            tmp.cleanup()
    total_s = time.perf_counter() - t_start

    command = "scripts/layout_bench.py " + shlex.join(sys.argv[1:])
    rebuilt = compiler.stamp() != stamp
    if rebuilt:
        print("layout_bench: warning: the Strider tools changed during the "
              "run; the rows may mix builds", file=sys.stderr)
    text = section(a.variant, rows, a.levels, command.strip(), compiler,
                   load, rebuilt)
    print(text)
    failed = [r["model"] for r in rows if r["errors"]]
    print(f"{len(rows)} model(s), {total_s:.1f} s; "
          + (f"FAILED: {' '.join(failed)}" if failed else "all passed"))
    if a.write_docs:
        write_docs(a.write_docs, a.variant, text)
        print(f"wrote {os.path.relpath(a.write_docs)}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(variant=a.variant, machine=machine(),
                           compiler=compiler.describe(),
                           onnxruntime=ort.__version__, command=command,
                           rows=rows), f, indent=1, default=str)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
