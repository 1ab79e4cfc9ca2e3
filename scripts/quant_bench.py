#!/usr/bin/env python3
"""Quantized models as ONNX Runtime's quantizer makes them: Strider against
ONNX Runtime on the same int8 files, and against Strider on the float model.

Usage:
    quant_bench.py [--only NAME ...] [--forms qop qdq dynamic]
                   [--threads T] [--inputs K] [--runs N] [--warmup W]
                   [--work-dir DIR] [--bin DIR] [--cache DIR]
                   [--write-docs [FILE]]

Models (third-party suite of real_models.py, fetched into its cache): the
PP-OCRv4 recognizer (1x3x48x320) and detector (1x3x320x320) and NudeNet's
YOLOv8n (1x3x320x320). Each is fixed to that shape, converted to opset 13
where older (ORT's quantizer asks for it), preprocessed
(quant_pre_process, no symbolic shapes) and quantized in three forms, cached
in WORK (default build/quant-bench):

  qop      quantize_static, QOperator format (QLinearConv, com.microsoft
           QLinearAdd, ...), per-channel s8 weights, u8 activations
  qdq      quantize_static, QDQ format, the same types
  dynamic  quantize_dynamic, u8 weights (ConvInteger, MatMulInteger)

Calibration is 4 seeded random inputs: the figures measure the runtimes on
these files, not the quantization's quality.

Per model and form it prints: Strider's and ORT's largest absolute error to
the float model's ORT outputs over K seeded inputs (default 4; and their
ratio, Strider / ORT: the issue's bound is 1.5), whether Strider ran a reference kernel,
the median latency of strider-run --bench and of an ORT session (worker
process, ORT_ENABLE_ALL, intra_op_num_threads = T) on the quantized file,
their ratio, and Strider's latency on the float model. The machine and
Strider's kernel ISA come first. --write-docs puts the table into
docs/Benchmarks.md between <!-- quant-bench:begin --> and
<!-- quant-bench:end -->.
"""

import argparse
import datetime
import glob
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import cpu_bench  # noqa: E402
import real_models  # noqa: E402
from shape_bench import kernel_isa  # noqa: E402

MODELS = {
    # name: (third-party entry of real_models.py, or "set:" and a model of
    # make_model_set.py's full set, input shape)
    "resnet50": ("set:resnet50", [1, 3, 224, 224]),
    "mobilenetv2": ("set:mobilenetv2", [1, 3, 224, 224]),
    "ppocr-v4-rec": ("ppocr-v4-rec", [1, 3, 48, 320]),
    "ppocr-v4-det": ("ppocr-v4-det", [1, 3, 320, 320]),
    "nudenet-yolov8n": ("nudenet-yolov8n", [1, 3, 320, 320]),
}
FORMS = ["qop", "qdq", "dynamic"]
MARK_BEGIN = "<!-- quant-bench:begin -->"
MARK_END = "<!-- quant-bench:end -->"


def isa(bin_dir, work):
    """Strider's kernel target on this machine (shape_bench's probe)."""
    from pathlib import Path
    os.makedirs(work, exist_ok=True)
    return kernel_isa(Path(bin_dir).parent, Path(work))


def model_path(cache, name):
    """The float model of MODELS entry NAME: a model of the full set (made
    by cpu_bench.py's generator in build/cpu-bench/models when absent) or a
    third-party file."""
    if name.startswith("set:"):
        models_dir = os.path.join(ROOT, "build", "cpu-bench", "models")
        cpu_bench.ensure_models(models_dir, [name[4:]])
        return os.path.join(models_dir, name[4:] + ".onnx")
    for entry in real_models.THIRD_PARTY:
        if entry[0] == name:
            return real_models.fetch_third_party(cache, entry[1], entry[2])
    raise SystemExit(f"quant_bench: no third-party model '{name}'")


def quantize(src, shape, work):
    """The fixed-shape float model and its three quantized forms in WORK
    (made once)."""
    import numpy as np
    import onnx
    import onnx.version_converter
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat,
                                          QuantType, quantize_dynamic,
                                          quantize_static)
    from onnxruntime.quantization.shape_inference import quant_pre_process
    paths = {f: os.path.join(work, f + ".onnx") for f in ["float"] + FORMS}
    if all(os.path.exists(p) for p in paths.values()):
        return paths
    os.makedirs(work, exist_ok=True)
    m = onnx.load(src)
    name = m.graph.input[0].name
    for d, v in zip(m.graph.input[0].type.tensor_type.shape.dim, shape):
        d.ClearField("dim_param")
        d.dim_value = v
    if m.opset_import[0].version < 13:
        m = onnx.version_converter.convert_version(m, 13)
    raw = os.path.join(work, "fixed.onnx")
    onnx.save(m, raw)
    quant_pre_process(raw, paths["float"], skip_symbolic_shape=True)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.i = 0

        def get_next(self):
            if self.i >= 4:
                return None
            self.i += 1
            rng = np.random.default_rng(self.i)
            return {name: rng.uniform(-1, 1, shape).astype(np.float32)}

    for form, fmt in (("qop", QuantFormat.QOperator), ("qdq", QuantFormat.QDQ)):
        quantize_static(paths["float"], paths[form], Reader(), quant_format=fmt,
                        per_channel=True, weight_type=QuantType.QInt8,
                        activation_type=QuantType.QUInt8)
    quantize_dynamic(paths["float"], paths["dynamic"],
                     weight_type=QuantType.QUInt8)
    return paths


def strider_outputs(bin_dir, model, inputs, out_dir):
    """Runs strider-run once into OUT_DIR; returns (outputs by name,
    whether it warned of a reference kernel)."""
    import numpy as np
    cmd = [os.path.join(bin_dir, "strider-run"), model, "--backend=cpu",
           "--output-dir", out_dir]
    for name, path in inputs:
        cmd += ["--input", f"{name}={path}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{r.stderr}")
    outs = {os.path.basename(p)[:-4]: np.load(p)
            for p in glob.glob(os.path.join(out_dir, "*.npy"))}
    return outs, "slow path" in r.stderr


def max_error(got, want):
    import numpy as np
    return max(float(np.abs(got[k].astype(np.float64) -
                            want[k].astype(np.float64)).max()) for k in want)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="+", choices=sorted(MODELS))
    ap.add_argument("--forms", nargs="+", choices=FORMS, default=FORMS)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--inputs", type=int, default=4,
                    help="seeded random inputs the errors are taken over")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--work-dir", default=os.path.join(ROOT, "build",
                                                       "quant-bench"))
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--cache", default=os.path.join(
        os.path.expanduser("~"), ".cache", "strider", "models"))
    ap.add_argument("--write-docs", nargs="?", const=os.path.join(
        ROOT, "docs", "Benchmarks.md"))
    args = ap.parse_args()
    import numpy as np
    import onnxruntime as ort
    lines = [f"Measured {datetime.date.today()} on {cpu_bench.machine_line()};"
             f" kernels {isa(args.bin, args.work_dir)}; {args.threads} thread(s),"
             f" medians of {args.runs} runs; ONNX Runtime {ort.__version__}.",
             "",
             "| Model | form | max error: Strider | ORT | Strider / ORT "
             "| reference kernels | Strider ms | ORT ms | Strider / ORT "
             "| Strider fp32 ms |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    print(lines[0])
    for name in args.only or sorted(MODELS):
        entry, shape = MODELS[name]
        work = os.path.join(args.work_dir, name)
        paths = quantize(model_path(args.cache, entry), shape, work)
        in_name = ort.InferenceSession(
            paths["float"], providers=["CPUExecutionProvider"]
        ).get_inputs()[0].name
        # Seeded inputs: the errors are the largest over all of them (one
        # input's maximum swings by 1.6x between inputs), the timings the
        # first's.
        xs = [np.random.default_rng(9 + i).uniform(-1, 1, shape)
              .astype(np.float32) for i in range(args.inputs)]
        x_paths = []
        for i, x in enumerate(xs):
            x_paths.append(os.path.join(work, f"x{i}.npy"))
            np.save(x_paths[-1], x)
        inputs = [(in_name, x_paths[0])]
        so = ort.SessionOptions()
        so.intra_op_num_threads = args.threads

        def ort_outs(path, x):
            s = ort.InferenceSession(path, so,
                                     providers=["CPUExecutionProvider"])
            return dict(zip([o.name for o in s.get_outputs()],
                            s.run(None, {in_name: x})))
        wants = [ort_outs(paths["float"], x) for x in xs]
        fp32, _ = cpu_bench.strider_run(args.bin, paths["float"], inputs,
                                        args.threads, args.runs, args.warmup)
        fp32_ms = fp32["bench"]["median_ms"]
        for form in args.forms:
            err_s = err_o = 0.0
            slow = False
            for x, x_path, want in zip(xs, x_paths, wants):
                got, warned = strider_outputs(
                    args.bin, paths[form], [(in_name, x_path)],
                    os.path.join(work, "out-" + form))
                slow |= warned
                err_s = max(err_s, max_error(got, want))
                err_o = max(err_o, max_error(ort_outs(paths[form], x), want))
            s, _ = cpu_bench.strider_run(args.bin, paths[form], inputs,
                                         args.threads, args.runs, args.warmup)
            o, _ = cpu_bench.ort_run(paths[form], inputs, args.threads,
                                     args.runs, args.warmup)
            s_ms, o_ms = s["bench"]["median_ms"], o["median_ms"]
            row = (f"| {name} | {form} | {err_s:.4g} | {err_o:.4g} | "
                   f"{err_s / err_o if err_o else float('nan'):.2f} | "
                   f"{'yes' if slow else 'no'} | {s_ms:.2f} | {o_ms:.2f} | "
                   f"{s_ms / o_ms:.2f} | {fp32_ms:.2f} |")
            lines.append(row)
            print(row, flush=True)
    if args.write_docs:
        write_docs(args.write_docs, "\n".join(lines))


def write_docs(path, text):
    """TEXT between the markers of PATH (appended with them when absent),
    written to a temporary file and renamed."""
    with open(path) as f:
        doc = f.read()
    block = f"{MARK_BEGIN}\n{text}\n{MARK_END}"
    if MARK_BEGIN in doc and MARK_END in doc:
        head, rest = doc.split(MARK_BEGIN, 1)
        doc = head + block + rest.split(MARK_END, 1)[1]
    else:
        doc += "\n" + block + "\n"
    with open(path + ".tmp", "w") as f:
        f.write(doc)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
