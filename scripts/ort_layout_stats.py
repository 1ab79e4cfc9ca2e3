#!/usr/bin/env python3
"""Count the layout-moving nodes ONNX Runtime's graph optimizer leaves in a
model, and the bytes they move, at each optimization level.

Usage:
    ort_layout_stats.py MODEL.onnx... [--json OUT] [--levels basic,extended,all]
                        [--keep DIR] [--repeat N] [--seed S] [--quiet]

For each model and level (disabled, basic, extended, layout, all; default
basic,extended,all), the model is optimized by onnxruntime
(CPUExecutionProvider, intra_op_num_threads=1) and the optimized graph is
saved with SessionOptions.optimized_model_filepath. In it, these nodes are
counted:
    Transpose                      (ai.onnx)
    ReorderInput / ReorderOutput   (com.microsoft.nchwc: conversions to and
                                    from ORT's blocked NCHWc layout)
Each node moves the bytes of the tensor it outputs (elements * element
size), counted once per node. The shapes are measured, not inferred: the
optimized model is loaded back into onnxruntime with optimizations disabled,
the outputs of the counted nodes are added as graph outputs, and it is run
on the model's inputs. Those are DIR/<model>.data/<input name>.npy next to
the model when present (as written by make_model_set.py), else seeded
random normals (symbolic dims bound to 1).

"session_s" is the wall time of creating an InferenceSession at that level
without saving the optimized model (graph optimization plus kernel set-up;
the best of --repeat runs). The saved "all" models are hardware specific
(NCHWc block size), so the counts describe this machine.

Output: a table on stdout (per model and level: Transpose count, Reorder
count, MB moved, session time) and, with --json, a JSON file:
    {"onnxruntime": VERSION, "block_size_hint": ..., "models": {PATH: {LEVEL: {
        "count", "bytes", "transpose_count", "transpose_bytes",
        "reorder_count", "reorder_bytes", "session_s", "graph_nodes",
        "ops": {"domain:op": n},
        "nodes": [{"node", "op", "domain", "shape", "dtype", "bytes",
                   "attrs", "producer", "consumers"}]}}}}
"producer" and "consumers" name the ops around each counted node ("input"
and "output" for graph inputs and outputs), which shows what ORT wraps in
reorders. --keep DIR keeps the optimized models as DIR/<model>.<level>.onnx.
"""
import argparse
import collections
import json
import os
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper

LEVELS = {
    "disabled": "ORT_DISABLE_ALL",
    "basic": "ORT_ENABLE_BASIC",
    "extended": "ORT_ENABLE_EXTENDED",
    "layout": "ORT_ENABLE_LAYOUT",   # only in newer onnxruntime versions
    "all": "ORT_ENABLE_ALL",
}
REORDER_OPS = ("ReorderInput", "ReorderOutput")

NP_TYPES = {
    "tensor(float)": np.float32, "tensor(float16)": np.float16,
    "tensor(double)": np.float64, "tensor(int64)": np.int64,
    "tensor(int32)": np.int32, "tensor(int8)": np.int8,
    "tensor(uint8)": np.uint8, "tensor(bool)": np.bool_,
}


def level_enum(level):
    return getattr(ort.GraphOptimizationLevel, LEVELS[level])


def session_options(level, saved=None):
    so = ort.SessionOptions()
    so.graph_optimization_level = level_enum(level)
    so.intra_op_num_threads = 1
    so.log_severity_level = 3     # no "hardware specific model" warning
    if saved:
        so.optimized_model_filepath = saved
    return so


def model_inputs(path, seed):
    """The model's .npy inputs next to it, else seeded random ones."""
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    data_dir = os.path.splitext(path)[0] + ".data"
    rng = np.random.default_rng(seed)
    feeds, source = {}, "npy"
    for i in sess.get_inputs():
        f = os.path.join(data_dir, i.name + ".npy")
        if os.path.exists(f):
            feeds[i.name] = np.load(f)
            continue
        source = "random"
        shape = [d if isinstance(d, int) else 1 for d in i.shape]
        dtype = NP_TYPES[i.type]
        if np.issubdtype(dtype, np.floating):
            feeds[i.name] = rng.standard_normal(shape).astype(dtype)
        elif dtype == np.bool_:
            feeds[i.name] = rng.random(shape) > 0.5
        else:
            feeds[i.name] = rng.integers(0, 4, shape).astype(dtype)
    return feeds, source


def is_layout_node(n):
    if n.op_type == "Transpose" and n.domain in ("", "ai.onnx"):
        return True
    return n.op_type in REORDER_OPS and n.domain.startswith("com.microsoft")


def elem_types(model):
    """tensor name -> element type, from everything the graph declares."""
    g = model.graph
    types = {t.name: t.data_type for t in g.initializer}
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        if vi.type.tensor_type.elem_type:
            types[vi.name] = vi.type.tensor_type.elem_type
    return types


def measure_shapes(model, names, feeds):
    """Run the model with `names` as extra outputs; name -> array."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    types = elem_types(m)
    producer_input = {o: n.input[0] for n in m.graph.node for o in n.output}
    have = {o.name for o in m.graph.output}
    for name in names:
        if name in have:
            continue
        # Transpose and the reorders keep the element type of their input.
        t = types.get(name) or types.get(producer_input.get(name)) \
            or onnx.TensorProto.FLOAT
        m.graph.output.append(helper.make_tensor_value_info(name, t, None))
        have.add(name)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    so.log_severity_level = 3
    sess = ort.InferenceSession(m.SerializeToString(), so,
                                providers=["CPUExecutionProvider"])
    wanted = [o.name for o in sess.get_outputs() if o.name in set(names)]
    feeds = {i.name: feeds[i.name] for i in sess.get_inputs()}
    return dict(zip(wanted, sess.run(wanted, feeds)))


def attrs_of(n):
    out = {}
    for a in n.attribute:
        v = helper.get_attribute_value(a)
        if isinstance(v, bytes):
            v = v.decode()
        if isinstance(v, (int, float, str)) or (
                isinstance(v, list) and all(isinstance(x, (int, float))
                                            for x in v)):
            out[a.name] = v
    return out


def op_label(n):
    return f"{n.domain}:{n.op_type}" if n.domain not in ("", "ai.onnx") \
        else n.op_type


def analyze(model, feeds):
    g = model.graph
    producers = {o: n for n in g.node for o in n.output}
    consumers = collections.defaultdict(list)
    for n in g.node:
        for i in n.input:
            consumers[i].append(n)
    graph_inputs = {i.name for i in g.input}
    graph_outputs = {o.name for o in g.output}

    counted = [n for n in g.node if is_layout_node(n)]
    arrays = measure_shapes(model, [n.output[0] for n in counted], feeds) \
        if counted else {}
    nodes = []
    for n in counted:
        a = arrays[n.output[0]]
        src = n.input[0]
        prod = producers.get(src)
        cons = [op_label(c) for c in consumers.get(n.output[0], [])]
        if n.output[0] in graph_outputs:
            cons.append("output")
        nodes.append(dict(
            node=n.name or n.output[0], op=n.op_type, domain=n.domain,
            shape=list(a.shape), dtype=str(a.dtype), bytes=int(a.nbytes),
            attrs=attrs_of(n),
            producer=op_label(prod) if prod else
            ("input" if src in graph_inputs else "initializer"),
            consumers=cons))
    tr = [x for x in nodes if x["op"] == "Transpose"]
    re = [x for x in nodes if x["op"] in REORDER_OPS]
    return dict(
        count=len(nodes), bytes=sum(x["bytes"] for x in nodes),
        transpose_count=len(tr), transpose_bytes=sum(x["bytes"] for x in tr),
        reorder_count=len(re), reorder_bytes=sum(x["bytes"] for x in re),
        graph_nodes=len(g.node),
        ops=dict(sorted(collections.Counter(op_label(n)
                                            for n in g.node).items())),
        nodes=nodes)


def stats_for(path, level, feeds, tmp, keep, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        ort.InferenceSession(path, session_options(level),
                             providers=["CPUExecutionProvider"])
        times.append(time.perf_counter() - t0)
    stem = os.path.splitext(os.path.basename(path))[0]
    saved = os.path.join(keep or tmp, f"{stem}.{level}.onnx")
    ort.InferenceSession(path, session_options(level, saved),
                         providers=["CPUExecutionProvider"])
    optimized = onnx.load(saved)
    if not keep:
        os.remove(saved)
    r = analyze(optimized, feeds)
    r["session_s"] = round(min(times), 4)
    return r


def fmt_bytes(n):
    return f"{n / 1e6:.3f}" if n < 1e9 else f"{n / 1e9:.2f}G"


def print_table(results, levels):
    head = f"{'model':28}" + "".join(
        f" | {lv:^30}" for lv in levels)
    sub = f"{'':28}" + "".join(
        f" | {'T':>4} {'R':>4} {'MB':>9} {'session s':>9}" for _ in levels)
    print(head)
    print(sub)
    print("-" * len(sub))
    for path, per_level in results.items():
        name = os.path.splitext(os.path.basename(path))[0]
        row = f"{name[:28]:28}"
        for lv in levels:
            r = per_level.get(lv)
            if r is None or "error" in r:
                row += f" | {'ERROR':>30}"
                continue
            row += (f" | {r['transpose_count']:4d} {r['reorder_count']:4d} "
                    f"{fmt_bytes(r['bytes']):>9} {r['session_s']:9.3f}")
        print(row)
    print("T: Transpose nodes, R: ReorderInput/ReorderOutput nodes, MB: "
          "bytes their outputs hold (1e6), session s: session creation")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="+", metavar="MODEL.onnx")
    p.add_argument("--json", metavar="OUT", help="write the stats here")
    p.add_argument("--levels", default="basic,extended,all",
                   help="comma-separated, of: " + ",".join(LEVELS))
    p.add_argument("--keep", metavar="DIR",
                   help="keep the optimized models in DIR")
    p.add_argument("--repeat", type=int, default=1,
                   help="session creations to time per level (best of)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of random inputs where no .npy exists")
    p.add_argument("--quiet", action="store_true",
                   help="no per-node listing of the counted nodes")
    a = p.parse_args()
    levels = [lv.strip() for lv in a.levels.split(",") if lv.strip()]
    for lv in levels:
        if lv not in LEVELS:
            p.error(f"unknown level {lv!r}; choose from {', '.join(LEVELS)}")
        if not hasattr(ort.GraphOptimizationLevel, LEVELS[lv]):
            p.error(f"onnxruntime {ort.__version__} has no {LEVELS[lv]}")
    if a.keep:
        os.makedirs(a.keep, exist_ok=True)

    results, failed = {}, 0
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ort_layout_stats_") as tmp:
        for path in a.models:
            per_level = results.setdefault(path, {})
            try:
                feeds, source = model_inputs(path, a.seed)
            except Exception as ex:
                failed += 1
                print(f"{path}: cannot load: {type(ex).__name__}: {ex}",
                      file=sys.stderr)
                for lv in levels:
                    per_level[lv] = dict(error=str(ex))
                continue
            for lv in levels:
                try:
                    r = stats_for(path, lv, feeds, tmp, a.keep, a.repeat)
                    r["inputs"] = source
                except Exception as ex:
                    failed += 1
                    r = dict(error=f"{type(ex).__name__}: {ex}")
                    print(f"{path} [{lv}]: {r['error']}", file=sys.stderr)
                per_level[lv] = r
                if not a.quiet and "nodes" in r:
                    for x in r["nodes"]:
                        attrs = ",".join(f"{k}={v}" for k, v in
                                         x["attrs"].items())
                        print(f"  {os.path.basename(path)} [{lv}] "
                              f"{x['op']}({attrs}) {x['shape']} "
                              f"{x['bytes']} B  {x['producer']} -> "
                              f"{'/'.join(x['consumers']) or '-'}")
    total_s = time.perf_counter() - t_start

    print_table(results, levels)
    print(f"{len(a.models)} model(s), {total_s:.1f} s")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(onnxruntime=ort.__version__, levels=levels,
                           intra_op_num_threads=1, models=results), f,
                      indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
