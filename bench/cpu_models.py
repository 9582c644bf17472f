#!/usr/bin/env python3
"""End-to-end CPU latency: BERT-base (batch 1, sequence 128) and ResNet-50 (batch 1, 224x224),
fp32, WarpForge's CPU backend beside PyTorch eager and ONNX Runtime, the same thread count
(default 2), the same inputs, in one run.

Each model (random weights, fixed seed) is exported twice: with `warpforge.export` (python/) to
a model package, and with `torch.onnx.export(..., dynamo=True)` to an ONNX file. WarpForge is
timed with `warpforge bench PKG --threads N --json` (which runs the package's golden inputs, i.e.
the exact inputs PyTorch and ONNX Runtime are timed on here); PyTorch with
torch.set_num_threads(N) under torch.no_grad(); ONNX Runtime (CPU execution provider, default
graph optimizations) with intra_op_num_threads=N and inter_op_num_threads=1. Every engine's
outputs are compared with PyTorch's (the largest absolute error, and whether all lie within the
validate tolerance rtol 1e-3 / atol 1e-5). Prints one table of medians and ratios.

    python3 bench/cpu_models.py --build build [--threads 2] [--iters 30] [--models bert,resnet50]
        [--packages DIR] [--baseline OTHER_WARPFORGE_BINARY] [--profile]

--profile also prints WarpForge's per-op profile (`warpforge bench --profile`) and ONNX Runtime's
(its session profiler's node events, summed per op type), side by side per model.
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RTOL, ATOL = 1e-3, 1e-5  # the validate tolerances for fp32 outputs


def make_bert(seq):
    import torch
    from transformers import BertConfig, BertModel
    torch.manual_seed(0)
    cfg = BertConfig()  # bert-base: 12 layers, hidden 768, 12 heads, intermediate 3072
    model = BertModel(cfg).eval()
    ids = torch.randint(0, cfg.vocab_size, (1, seq), generator=torch.Generator().manual_seed(1))
    return model, (ids,)


def make_resnet50():
    import torch
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.resnet50().eval()
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(1))
    return model, (x,)


def flatten_outputs(out):
    """The tensors of a model's output, in the order the exporters write them."""
    import torch
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, dict):  # transformers' ModelOutput is an ordered dict of its set fields
        out = list(out.values())
    flat = []
    for o in out:
        flat.extend(flatten_outputs(o))
    return flat


def time_torch(model, inputs, iters, warmup):
    import torch
    with torch.no_grad():
        for _ in range(warmup):
            model(*inputs)
        ts = []
        for _ in range(iters):
            t0 = time.perf_counter()
            model(*inputs)
            ts.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(ts))


def ort_session(onnx_path, threads, profile_prefix=None):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    if profile_prefix:
        so.enable_profiling = True
        so.profile_file_prefix = profile_prefix
    return ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])


def ort_feed(session, inputs):
    return {i.name: x.numpy() for i, x in zip(session.get_inputs(), inputs)}


def time_ort(onnx_path, inputs, threads, iters, warmup):
    session = ort_session(onnx_path, threads)
    feed = ort_feed(session, inputs)
    for _ in range(warmup):
        session.run(None, feed)
    ts = []
    for _ in range(iters):
        t0 = time.perf_counter()
        session.run(None, feed)
        ts.append((time.perf_counter() - t0) * 1e3)
    outputs = session.run(None, feed)
    del session
    return float(np.median(ts)), outputs


def ort_profile(onnx_path, inputs, threads, iters, tmp):
    """ONNX Runtime's node events over `iters` runs after one warm-up run: (op type, calls per
    run, ms per run), slowest first."""
    session = ort_session(onnx_path, threads, os.path.join(tmp, "ort_profile"))
    feed = ort_feed(session, inputs)
    session.run(None, feed)
    for _ in range(iters):
        session.run(None, feed)
    path = session.end_profiling()
    with open(path) as f:
        events = json.load(f)
    per_type = collections.defaultdict(lambda: [0, 0.0])
    runs = iters + 1
    for e in events:
        if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time"):
            row = per_type[e["args"]["op_name"]]
            row[0] += 1
            row[1] += e["dur"] / 1e3
    rows = [(op, n / runs, ms / runs) for op, (n, ms) in per_type.items()]
    return sorted(rows, key=lambda r: -r[2])


def time_warpforge(binary, pkg, threads, iters, warmup, harness=False):
    if harness:
        env = dict(os.environ, WARPFORGE_NUM_THREADS=str(threads))
        out = subprocess.run([binary, os.path.join(pkg, "model.mlir"), "--iters", str(iters), "--warmup",
                              str(warmup)], env=env, check=True, capture_output=True, text=True)
        return json.loads(out.stdout.strip().splitlines()[-1])["median_ms"]
    out = subprocess.run([binary, "bench", pkg, "--threads", str(threads), "--iters", str(iters),
                          "--warmup", str(warmup), "--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["latency_ms"]["median"]


def warpforge_outputs(binary, pkg, threads, tmp):
    """The package's outputs on its golden inputs (`warpforge run PKG -o DIR`), in manifest order."""
    out_dir = tempfile.mkdtemp(dir=tmp)
    env = dict(os.environ, WARPFORGE_NUM_THREADS=str(threads))
    subprocess.run([binary, "run", pkg, "-o", out_dir], env=env, check=True, capture_output=True, text=True)
    with open(os.path.join(pkg, "manifest.json")) as f:
        names = [o["name"] for o in json.load(f)["outputs"]]
    return [np.load(os.path.join(out_dir, n + ".npy")) for n in names]


def compare(reference, outputs):
    """(largest absolute error over every output, all within RTOL/ATOL)."""
    if len(reference) != len(outputs):
        return float("inf"), False
    worst, ok = 0.0, True
    for r, o in zip(reference, outputs):
        o = np.asarray(o)
        if r.shape != o.shape:
            return float("inf"), False
        worst = max(worst, float(np.max(np.abs(o.astype(np.float64) - r.astype(np.float64)))))
        ok = ok and bool(np.allclose(o, r, rtol=RTOL, atol=ATOL))
    return worst, ok


def warpforge_profile(binary, pkg, threads, iters):
    out = subprocess.run([binary, "bench", pkg, "--threads", str(threads), "--iters", str(iters),
                          "--warmup", "1", "--profile", "--json"], check=True, capture_output=True, text=True)
    return [(r["op"], r["calls_per_run"], r["ms_per_run"]) for r in json.loads(out.stdout)["profile"]["by_op"]]


def print_profiles(label, wf_rows, ort_rows, rows=15):
    print(f"\n{label}: per-op time per run (ms), WarpForge beside ONNX Runtime")
    print("| WarpForge op | calls | ms | ONNX Runtime op | calls | ms |")
    print("|---|---:|---:|---|---:|---:|")
    for i in range(min(rows, max(len(wf_rows), len(ort_rows)))):
        w = wf_rows[i] if i < len(wf_rows) else ("", None, None)
        o = ort_rows[i] if i < len(ort_rows) else ("", None, None)
        cell = lambda r: (f"{r[0]} | {r[1]:.0f} | {r[2]:.2f}" if r[1] is not None else " | | ")
        print(f"| {cell(w)} | {cell(o)} |")
    print(f"| total | | {sum(r[2] for r in wf_rows):.2f} | total | | {sum(r[2] for r in ort_rows):.2f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(REPO, "build"), help="build directory holding warpforge")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--models", default="bert,resnet50")
    ap.add_argument("--seq", type=int, default=128, help="BERT sequence length")
    ap.add_argument("--packages", default="", help="keep the exported packages and ONNX files here (default: a temp dir)")
    ap.add_argument("--baseline", default="", help="another warpforge (or, with --harness, wf_bench) binary timed on the same packages")
    ap.add_argument("--harness", default="", help="time model.mlir with this bench/wf_bench binary instead of "
                    "`warpforge bench` (random weights and inputs; for builds without the package runtime)")
    ap.add_argument("--no-ort", action="store_true", help="leave ONNX Runtime out")
    ap.add_argument("--profile", action="store_true", help="also print per-op profiles of WarpForge and ONNX Runtime")
    args = ap.parse_args()

    sys.path.insert(0, os.path.join(REPO, "python"))
    import torch
    import warpforge
    torch.set_num_threads(args.threads)
    use_ort = not args.no_ort
    if use_ort:
        import onnxruntime
    binary = args.harness or os.path.join(args.build, "warpforge")
    if not os.path.exists(binary):
        sys.exit(f"no {binary}")

    makers = {"bert": ("BERT-base (b1, s%d)" % args.seq, lambda: make_bert(args.seq)),
              "resnet50": ("ResNet-50 (b1, 224)", make_resnet50)}
    rows, profiles = [], []
    with tempfile.TemporaryDirectory() as tmp:
        root = args.packages or tmp
        for key in args.models.split(","):
            label, make = makers[key]
            model, inputs = make()
            pkg = os.path.join(root, key)
            if not os.path.exists(os.path.join(pkg, "manifest.json")):
                warpforge.export(model, inputs, pkg)
            with torch.no_grad():
                reference = [t.numpy() for t in flatten_outputs(model(*inputs))]
            t_ms = time_torch(model, inputs, args.iters, args.warmup)
            # PyTorch's and ONNX Runtime's workers spin for a while after their last op; let them
            # go to sleep so they do not compete with the next engine for the same cores.
            time.sleep(1.0)
            o_ms, o_err, o_ok = None, None, None
            if use_ort:
                onnx_path = os.path.join(root, key + ".onnx")
                if not os.path.exists(onnx_path):
                    torch.onnx.export(model, inputs, onnx_path, dynamo=True, external_data=False)
                o_ms, o_out = time_ort(onnx_path, inputs, args.threads, args.iters, args.warmup)
                o_err, o_ok = compare(reference, o_out)
                time.sleep(1.0)
            w_ms = time_warpforge(binary, pkg, args.threads, args.iters, args.warmup, bool(args.harness))
            w_err, w_ok = (None, None) if args.harness else compare(
                reference, warpforge_outputs(binary, pkg, args.threads, tmp))
            b_ms = (time_warpforge(args.baseline, pkg, args.threads, args.iters, args.warmup, bool(args.harness))
                    if args.baseline else None)
            rows.append((label, t_ms, o_ms, w_ms, b_ms, o_err, o_ok, w_err, w_ok))
            line = f"{label}: torch {t_ms:.2f} ms"
            if use_ort:
                line += f", onnxruntime {o_ms:.2f} ms"
            line += f", warpforge {w_ms:.2f} ms"
            if b_ms is not None:
                line += f", baseline {b_ms:.2f} ms"
            print(line, flush=True)
            if args.profile and not args.harness:
                profiles.append((label, warpforge_profile(binary, pkg, args.threads, args.iters),
                                 ort_profile(onnx_path, inputs, args.threads, args.iters, tmp) if use_ort else []))

    print()
    versions = f"torch {torch.__version__}" + (f", onnxruntime {onnxruntime.__version__}" if use_ort else "")
    print(f"fp32, {args.threads} threads, median of {args.iters} runs after {args.warmup} warm-up runs; {versions}")
    head = "| model | PyTorch ms |"
    rule = "|---|---:|"
    if use_ort:
        head += " ONNX Runtime ms |"
        rule += "---:|"
    head += " WarpForge ms | PyTorch / WarpForge |"
    rule += "---:|---:|"
    if use_ort:
        head += " ONNX Runtime / WarpForge |"
        rule += "---:|"
    if args.baseline:
        head += " baseline WarpForge ms |"
        rule += "---:|"
    head += " max abs error vs PyTorch |"
    rule += "---|"
    print(head)
    print(rule)
    for label, t_ms, o_ms, w_ms, b_ms, o_err, o_ok, w_err, w_ok in rows:
        line = f"| {label} | {t_ms:.2f} |"
        if use_ort:
            line += f" {o_ms:.2f} |"
        line += f" **{w_ms:.2f}** | {t_ms / w_ms:.2f}x |"
        if use_ort:
            line += f" {o_ms / w_ms:.2f}x |"
        if b_ms is not None:
            line += f" {b_ms:.2f} |"
        errs = []
        if w_err is not None:
            errs.append(f"WarpForge {w_err:.1e}" + ("" if w_ok else " (outside rtol 1e-3/atol 1e-5)"))
        if o_err is not None:
            errs.append(f"ONNX Runtime {o_err:.1e}" + ("" if o_ok else " (outside rtol 1e-3/atol 1e-5)"))
        line += " " + ", ".join(errs) + " |"
        print(line)
    for label, wf_rows, ort_rows in profiles:
        print_profiles(label, wf_rows, ort_rows)
    if any(r[8] is False for r in rows):
        sys.exit("WarpForge's outputs are outside the tolerance of PyTorch's")


if __name__ == "__main__":
    main()
