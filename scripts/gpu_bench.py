#!/usr/bin/env python3
"""Strider's CUDA backend against PyTorch on the same GPU, in the same run.

Runs on a GPU machine with PyTorch (scripts/gpu_check.sh calls it). For
ResNet-50, MobileNetV2 and a UNet (defined here in PyTorch, random weights,
BatchNorm statistics calibrated on random batches so that activations keep
their scale as in a trained network, eval mode) at batch 1 and 32:

  - PyTorch eager NCHW fp32, eager channels_last + autocast fp16, and
    torch.compile of the latter where it works (--compile: ResNet-50 only
    by default, since each compile takes tens of seconds);
  - fp32 is IEEE fp32 on both sides (PyTorch's TF32 is switched off);
  - the same model exported to ONNX (opset 17) and run by
    `strider-run MODEL.onnx --backend=cuda --precision=fp32|fp16 --bench N`;
  - for --tuned models (ResNet-50 by default), fp16 again with a tuning
    file measured on this GPU first (`strider-compile --tune`: layouts
    costed by measured kernels, cuDNN algorithms chosen by timing);
  - for --profile models at --profile-batch, the fp16 run's per-kernel
    times (strider-run --profile).

Every timing covers one inference as a caller sees it: the input copied
from pinned host memory to the GPU, the network, the output copied back,
synchronized (strider-run times its run() the same way). Medians of
--runs runs after --warmup runs. Accuracy: Strider's fp16 output against
PyTorch's fp32 output on the same input (max abs and max relative error,
top-1 agreement over the batch for the classifiers).

Writes WORK/results.md and WORK/results.json after every row (a run cut
short keeps what it measured; --deadline stops starting rows and
compiles) and prints the table. Strider runs before torch.compile in each
row, and each compile starts from a reset Dynamo cache with static shapes.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


# ---------------------------------------------------------------- models


def conv_bn(cin, cout, k, stride=1, groups=1, act=True):
    layers = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False),
              nn.BatchNorm2d(cout)]
    if act:
        layers.append(nn.ReLU(inplace=True))
    return nn.Sequential(*layers)


class Bottleneck(nn.Module):
    def __init__(self, cin, width, stride):
        super().__init__()
        cout = width * 4
        self.body = nn.Sequential(conv_bn(cin, width, 1), conv_bn(width, width, 3, stride),
                                  conv_bn(width, cout, 1, act=False))
        self.short = (conv_bn(cin, cout, 1, stride, act=False)
                      if stride != 1 or cin != cout else nn.Identity())

    def forward(self, x):
        return F.relu(self.body(x) + self.short(x))


class ResNet50(nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        layers = [conv_bn(3, 64, 7, 2), nn.MaxPool2d(3, 2, 1)]
        cin = 64
        for width, blocks, stride in [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]:
            for i in range(blocks):
                layers.append(Bottleneck(cin, width, stride if i == 0 else 1))
                cin = width * 4
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        x = F.adaptive_avg_pool2d(self.features(x), 1)
        return self.fc(torch.flatten(x, 1))


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        layers = []
        if expand != 1:
            layers += [nn.Conv2d(cin, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.ReLU6()]
        layers += [nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False),
                   nn.BatchNorm2d(hidden), nn.ReLU6(),
                   nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        return x + self.body(x) if self.residual else self.body(x)


class MobileNetV2(nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        settings = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                    (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
        layers = [nn.Conv2d(3, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU6()]
        cin = 32
        for t, c, n, s in settings:
            for i in range(n):
                layers.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                cin = c
        layers += [nn.Conv2d(cin, 1280, 1, bias=False), nn.BatchNorm2d(1280), nn.ReLU6()]
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(1280, classes)

    def forward(self, x):
        x = F.adaptive_avg_pool2d(self.features(x), 1)
        return self.fc(torch.flatten(x, 1))


def double_conv(cin, cout):
    return nn.Sequential(conv_bn(cin, cout, 3), conv_bn(cout, cout, 3))


class UNet(nn.Module):
    def __init__(self, widths=(32, 64, 128, 256), classes=2):
        super().__init__()
        self.downs = nn.ModuleList()
        cin = 3
        for w in widths:
            self.downs.append(double_conv(cin, w))
            cin = w
        self.mid = double_conv(widths[-1], widths[-1] * 2)
        cin = widths[-1] * 2
        self.ups = nn.ModuleList()
        for w in reversed(widths):
            self.ups.append(double_conv(cin + w, w))
            cin = w
        self.head = nn.Conv2d(cin, classes, 1)

    def forward(self, x):
        skips = []
        for d in self.downs:
            x = d(x)
            skips.append(x)
            x = F.max_pool2d(x, 2)
        x = self.mid(x)
        for u, s in zip(self.ups, reversed(skips)):
            x = F.interpolate(x, scale_factor=2.0, mode="nearest")
            x = u(torch.cat([x, s], 1))
        return self.head(x)


def calibrate(model, size, device):
    """BatchNorm running statistics from two random batches (train mode,
    cumulative averages), then eval mode. With the initial statistics
    (mean 0, variance 1) ResNet-50's logits shrink to about 0.01 and
    MobileNetV2's features die (its output is its bias), which makes the
    fp16 errors and top-1 agreement below say nothing; calibrated, their
    logits have a standard deviation of 0.2 to 0.6."""
    gen = torch.Generator(device=device).manual_seed(0)
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            m.reset_running_stats()
            m.momentum = None
    model.train()
    with torch.no_grad():
        for _ in range(2):
            model(torch.randn(4, 3, size, size, generator=gen, device=device))
    return model.eval()


MODELS = {
    "resnet50": (ResNet50, 224, True),
    "mobilenetv2": (MobileNetV2, 224, True),
    "unet": (UNet, 256, False),
}


# ---------------------------------------------------------------- timing


def time_torch(fn, x_host, runs, warmup):
    """Median milliseconds of host->GPU copy, fn, GPU->host copy, sync."""
    times = []
    out = None
    for i in range(warmup + runs):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.no_grad():
            y = fn(x_host.to("cuda", non_blocking=True))
            out = y.float().to("cpu")
        torch.cuda.synchronize()
        if i >= warmup:
            times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), out


def run_strider(strider_run, onnx_path, precision, x_npy, runs, warmup, out_dir,
                tuning=None):
    cmd = [strider_run, onnx_path, "--backend=cuda", f"--precision={precision}",
           "--input", f"x={x_npy}", "--bench", str(runs), "--warmup", str(warmup),
           "--json", "--output-dir", out_dir, "--quiet"]
    if tuning:
        cmd.append(f"--tuning-file={tuning}")
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, None, (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
    doc = json.loads(p.stdout)
    runs_doc = doc if isinstance(doc, list) else [doc]
    bench = runs_doc[0].get("bench", {})
    median = bench.get("median_ms")
    y = np.load(os.path.join(out_dir, "y.npy"))
    return median, y, None


def profile_strider(strider_run, onnx_path, x_npy, tuning, out_path):
    """Per-kernel device times of one fp16 configuration (strider-run
    --profile: CUDA events around each launch, no graph replay), written
    to out_path; returns its first lines."""
    cmd = [strider_run, onnx_path, "--backend=cuda", "--precision=fp16",
           "--input", f"x={x_npy}", "--bench", "10", "--warmup", "3", "--profile",
           "--verbose", "--quiet"] + ([f"--tuning-file={tuning}"] if tuning else [])
    p = subprocess.run(cmd, capture_output=True, text=True)
    with open(out_path, "w") as f:
        f.write(p.stdout + p.stderr)
    lines = p.stderr.strip().splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith("profile over")), 0)
    return lines[start:start + 24]


def tune_strider(strider_compile, onnx_path, work, name, batch, seconds=None):
    """strider-compile --tune on this GPU at fp16 (the layouts costed by
    measured kernels, each conv's cuDNN algorithm chosen by timing): the
    tuning file, or an error line."""
    table = os.path.join(work, f"{name}_b{batch}.tune")
    if os.path.exists(table):
        os.remove(table)
    cap = torch.cuda.get_device_capability(0)
    target = "cuda-sm90" if cap[0] >= 9 else "cuda-sm80"
    out = os.path.join(work, f"{name}_b{batch}_tuned")
    cmd = [strider_compile, onnx_path, "-o", out, f"--target={target}",
           "--precision=fp16", "--tune", f"--tuning-file={table}", "--svg=false"]
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=max(seconds, 10) if seconds else None)
    except subprocess.TimeoutExpired:
        return None, "tuning not finished before the deadline", 0
    if p.returncode != 0:
        return None, (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1], 0
    return table, None, round(time.monotonic() - t0, 1)


def export_onnx(model, x, path):
    """ONNX (opset 17) of model at x's shape: the TorchScript exporter where
    this torch has it, else the dynamo exporter (newer torch)."""
    export = dict(input_names=["x"], output_names=["y"], opset_version=17)
    try:
        torch.onnx.export(model, x.clone(), path, dynamo=False, **export)
        return
    except TypeError:  # torch before 2.5 has no dynamo argument
        torch.onnx.export(model, x.clone(), path, **export)
        return
    except Exception as e:  # the TorchScript exporter is gone or failed
        print(f"gpu_bench: TorchScript export failed ({str(e).splitlines()[0][:120]}); "
              "trying dynamo=True", file=sys.stderr)
    torch.onnx.export(model, (x.clone(),), path, dynamo=True, **export)


def write_results(args, gpu, rows):
    def fmt(v):
        return "-" if v is None else f"{v:.2f}"
    lines = [f"GPU: {gpu}; torch {torch.__version__}; medians of {args.runs} runs, ms "
             "(host copies included); fp32 without TF32 on both sides; the ratio "
             "columns are PyTorch's time over Strider fp16's (above 1: Strider "
             "faster)", "",
             "| model | batch | torch fp32 | torch channels_last+AMP | torch.compile | "
             "Strider fp32 | Strider fp16 | Strider fp16 tuned | AMP / Strider fp16 | "
             "compile / Strider fp16 | fp32 max abs err | fp16 max abs err | "
             "fp16 max rel err | top-1 agree |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        s16 = r.get("strider_fp16")
        ratio = lambda k: fmt(r[k] / s16) if s16 and r.get(k) else "-"
        lines.append(f"| {r['model']} | {r['batch']} | {fmt(r.get('torch_fp32'))} | "
                     f"{fmt(r.get('torch_cl_amp'))} | {fmt(r.get('torch_compile'))} | "
                     f"{fmt(r.get('strider_fp32'))} | {fmt(s16)} | "
                     f"{fmt(r.get('strider_fp16_tuned'))} | {ratio('torch_cl_amp')} | "
                     f"{ratio('torch_compile')} | {r.get('fp32_max_abs', '-')} | "
                     f"{r.get('fp16_max_abs', '-')} | {r.get('fp16_max_rel', '-')} | "
                     f"{r.get('fp16_top1', '-')} |")
    for r in rows:
        for k in ("torch_compile_error", "strider_fp32_error", "strider_fp16_error",
                  "strider_tune_error", "skipped"):
            if k in r:
                lines.append(f"- {r['model']} b{r['batch']} {k}: {r[k]}")
    table = "\n".join(lines)
    # Written after every row: a run cut short by its time limit keeps
    # what it measured.
    for name, text in (("results.md", table + "\n"), ("results.json", json.dumps(rows, indent=1))):
        tmp = os.path.join(args.work, name + ".tmp")
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, os.path.join(args.work, name))
    return table


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--strider-run", required=True)
    ap.add_argument("--strider-compile",
                    help="strider-compile, for --tuned (default: beside --strider-run)")
    ap.add_argument("--tuned", default="resnet50",
                    help="models also run with a tuning file measured here first "
                         "(strider-compile --tune at fp16; comma list, 'all' or 'none')")
    ap.add_argument("--profile", default="resnet50",
                    help="models whose Strider fp16 run is also profiled per kernel "
                         "(WORK/profile_<model>_b<batch>.txt; comma list, 'all' or 'none')")
    ap.add_argument("--profile-batch", type=int, default=32,
                    help="the batch size profiled (0: every batch)")
    ap.add_argument("--work", required=True)
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--compile", default="resnet50",
                    help="models to also time under torch.compile (comma list, 'all' "
                         "or 'none'); each compile takes tens of seconds")
    ap.add_argument("--deadline", type=float, default=0,
                    help="Unix time after which no row (or torch.compile) starts (0: none)")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)

    def out_of_time():
        return bool(args.deadline) and time.time() > args.deadline
    # "fp32" means IEEE fp32 on both sides: Strider's --precision=fp32 uses
    # no TF32, and neither may PyTorch (its cuDNN default allows TF32).
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    gpu = torch.cuda.get_device_name(0)
    def model_set(flag):
        return (set(MODELS) if flag == "all" else
                set() if flag == "none" else set(flag.split(",")))
    compile_set = model_set(args.compile)
    tuned_set, profile_set = model_set(args.tuned), model_set(args.profile)
    strider_compile = args.strider_compile or os.path.join(
        os.path.dirname(args.strider_run), "strider-compile")
    rows = []
    for name in args.models.split(","):
        ctor, size, classifier = MODELS[name]
        model = calibrate(ctor().to("cuda"), size, "cuda")
        for batch in (int(b) for b in args.batches.split(",")):
            row = {"model": name, "batch": batch}
            if out_of_time():
                row["skipped"] = "out of time (--deadline)"
                rows.append(row)
                write_results(args, gpu, rows)
                continue
            x = torch.randn(batch, 3, size, size).pin_memory()
            m32 = model.to("cuda")
            row["torch_fp32"], ref = time_torch(m32, x, args.runs, args.warmup)
            mcl = model.to("cuda", memory_format=torch.channels_last)

            def amp(t, m=mcl):
                with torch.autocast("cuda", dtype=torch.float16):
                    return m(t.contiguous(memory_format=torch.channels_last))
            row["torch_cl_amp"], _ = time_torch(amp, x, args.runs, args.warmup)
            # Strider before torch.compile, the slowest part: a row cut
            # short during a compile keeps Strider's figures.
            model = model.to("cpu", memory_format=torch.contiguous_format)
            onnx_path = os.path.join(args.work, f"{name}_b{batch}.onnx")
            x_npy = os.path.join(args.work, f"{name}_b{batch}_x.npy")
            try:
                if not os.path.exists(onnx_path):
                    export_onnx(model, x, onnx_path)
                np.save(x_npy, x.numpy())
            except Exception as e:
                row["strider_fp32_error"] = "export: " + str(e).splitlines()[0][:160]
            for prec in ("fp32", "fp16"):
                if "strider_fp32_error" in row and row["strider_fp32_error"].startswith("export"):
                    break
                out_dir = os.path.join(args.work, f"{name}_b{batch}_{prec}")
                try:
                    ms, y, err = run_strider(args.strider_run, onnx_path, prec, x_npy,
                                             args.runs, args.warmup, out_dir)
                    row[f"strider_{prec}"] = ms
                    if err:
                        row[f"strider_{prec}_error"] = err
                        continue
                    r = ref.numpy()
                    diff = np.abs(y - r)
                    row[f"{prec}_max_abs"] = float(f"{diff.max():.3g}")
                    row[f"{prec}_max_rel"] = float(f"{(diff / (np.abs(r) + 1e-3)).max():.3g}")
                    if classifier:
                        row[f"{prec}_top1"] = float((y.argmax(1) == r.argmax(1)).mean())
                except Exception as e:
                    row[f"strider_{prec}_error"] = str(e).splitlines()[0][:160]
            # Kept before the tuning, which may run into the deadline.
            rows.append(row)
            write_results(args, gpu, rows)
            table = None
            if name in tuned_set and row.get("strider_fp16") and not out_of_time():
                left = args.deadline - time.time() if args.deadline else None
                table, err, secs = tune_strider(strider_compile, onnx_path, args.work,
                                                name, batch, left)
                if err:
                    row["strider_tune_error"] = err
                else:
                    row["strider_tune_s"] = secs
                    out_dir = os.path.join(args.work, f"{name}_b{batch}_fp16_tuned")
                    try:
                        ms, y, err = run_strider(args.strider_run, onnx_path, "fp16",
                                                 x_npy, args.runs, args.warmup, out_dir,
                                                 table)
                    except Exception as e:
                        ms, y, err = None, None, str(e).splitlines()[0][:160]
                    if err:
                        row["strider_tune_error"] = err
                    else:
                        row["strider_fp16_tuned"] = ms
                        diff = np.abs(y - ref.numpy())
                        row["fp16_tuned_max_abs"] = float(f"{diff.max():.3g}")
            if (name in profile_set and row.get("strider_fp16")
                    and args.profile_batch in (0, batch) and not out_of_time()):
                path = os.path.join(args.work, f"profile_{name}_b{batch}.txt")
                head = profile_strider(args.strider_run, onnx_path, x_npy, None, path)
                print(f"-- profile of Strider fp16, {name} batch {batch}:\n   "
                      + "\n   ".join(head),
                      flush=True)
            write_results(args, gpu, rows)
            if name in compile_set and not out_of_time():
                mcl = model.to("cuda", memory_format=torch.channels_last)
                try:
                    torch._dynamo.reset()
                    t0 = time.monotonic()
                    compiled = torch.compile(mcl, dynamic=False)

                    def comp(t, m=compiled):
                        with torch.autocast("cuda", dtype=torch.float16):
                            return m(t.contiguous(memory_format=torch.channels_last))
                    with torch.no_grad():
                        comp(x.to("cuda"))  # compiles
                    row["torch_compile_s"] = round(time.monotonic() - t0, 1)
                    row["torch_compile"], _ = time_torch(comp, x, args.runs, args.warmup)
                except Exception as e:  # no Triton, no compiler: say so
                    row["torch_compile"] = None
                    row["torch_compile_error"] = str(e).splitlines()[0][:120]
                model = model.to("cpu", memory_format=torch.contiguous_format)
                write_results(args, gpu, rows)
            print(json.dumps(row), flush=True)

    print(write_results(args, gpu, rows))
    failed = [r for r in rows if "strider_fp32_error" in r or "strider_fp16_error" in r]
    for r in failed:
        print(f"strider failed on {r['model']} b{r['batch']}: "
              f"{r.get('strider_fp32_error') or r.get('strider_fp16_error')}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
