#!/usr/bin/env python3
"""Kernel-level CPU benchmark: the op shapes that dominate ResNet-50 and BERT-base (batch 1),
run on WarpForge's CPU backend and on PyTorch with the same thread count, side by side.

Each case is a small JAX function lowered to StableHLO text (jax.jit(f).lower(...).as_text()),
timed in process by the `wf_bench` harness (bench/wf_bench.cpp), and the equivalent PyTorch
call is timed in this process. Prints one table row per case: median ms for both and the ratio.

    python3 bench/cpu_kernels.py --build build [--threads 2] [--iters 30] [--filter conv]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

# (name, cin, hw, cout, k, stride, pad, occurrences in ResNet-50)
RESNET50_CONVS = [
    ("conv1 7x7/2", 3, 224, 64, 7, 2, 3, 1),
    ("l1 1x1 64->64", 64, 56, 64, 1, 1, 0, 1),
    ("l1 3x3 64", 64, 56, 64, 3, 1, 1, 3),
    ("l1 1x1 64->256", 64, 56, 256, 1, 1, 0, 4),
    ("l1 1x1 256->64", 256, 56, 64, 1, 1, 0, 2),
    ("l2 1x1 256->128", 256, 56, 128, 1, 1, 0, 1),
    ("l2 3x3/2 128", 128, 56, 128, 3, 2, 1, 1),
    ("l2 1x1 128->512", 128, 28, 512, 1, 1, 0, 4),
    ("l2 ds 1x1/2 256->512", 256, 56, 512, 1, 2, 0, 1),
    ("l2 1x1 512->128", 512, 28, 128, 1, 1, 0, 3),
    ("l2 3x3 128", 128, 28, 128, 3, 1, 1, 3),
    ("l3 1x1 512->256", 512, 28, 256, 1, 1, 0, 1),
    ("l3 3x3/2 256", 256, 28, 256, 3, 2, 1, 1),
    ("l3 1x1 256->1024", 256, 14, 1024, 1, 1, 0, 6),
    ("l3 ds 1x1/2 512->1024", 512, 28, 1024, 1, 2, 0, 1),
    ("l3 1x1 1024->256", 1024, 14, 256, 1, 1, 0, 5),
    ("l3 3x3 256", 256, 14, 256, 3, 1, 1, 5),
    ("l4 1x1 1024->512", 1024, 14, 512, 1, 1, 0, 1),
    ("l4 3x3/2 512", 512, 14, 512, 3, 2, 1, 1),
    ("l4 1x1 512->2048", 512, 7, 2048, 1, 1, 0, 3),
    ("l4 ds 1x1/2 1024->2048", 1024, 14, 2048, 1, 2, 0, 1),
    ("l4 1x1 2048->512", 2048, 7, 512, 1, 1, 0, 2),
    ("l4 3x3 512", 512, 7, 512, 3, 1, 1, 2),
]


def cases():
    """Yields (group, name, count, jax_fn, arg_shapes, torch_fn_factory)."""
    import jax
    import jax.numpy as jnp
    import torch
    import torch.nn.functional as F

    for name, cin, hw, cout, k, s, p, count in RESNET50_CONVS:
        def jf(x, w, s=s, p=p):
            return jax.lax.conv_general_dilated(x, w, (s, s), [(p, p), (p, p)],
                                                dimension_numbers=("NCHW", "OIHW", "NCHW"))

        def tf(x, w, s=s, p=p):
            return F.conv2d(x, w, stride=s, padding=p)
        yield "resnet50 conv", name, count, jf, [(1, cin, hw, hw), (cout, cin, k, k)], tf

    # BERT-base, sequence 128: nn.Linear is x @ W^T with W [out, in].
    def lin_j(x, w):
        return jax.lax.dot_general(x, w, (((1,), (1,)), ((), ())))

    def lin_t(x, w):
        return F.linear(x, w)
    for name, n_in, n_out, count in [("qkv/out proj 768->768", 768, 768, 48),
                                     ("ffn up 768->3072", 768, 3072, 12),
                                     ("ffn down 3072->768", 3072, 768, 12)]:
        yield "bert gemm", name, count, lin_j, [(128, n_in), (n_out, n_in)], lin_t

    def qk_j(q, k):
        return jnp.einsum("hqd,hkd->hqk", q, k)

    def qk_t(q, k):
        return torch.matmul(q, k.transpose(-1, -2))
    yield "bert gemm", "scores [12,128,64]x[12,64,128]", 12, qk_j, [(12, 128, 64), (12, 128, 64)], qk_t

    def pv_j(p, v):
        return jnp.einsum("hqk,hkd->hqd", p, v)

    def pv_t(p, v):
        return torch.matmul(p, v)
    yield "bert gemm", "context [12,128,128]x[12,128,64]", 12, pv_j, [(12, 128, 128), (12, 128, 64)], pv_t

    def softmax_j(x):
        return jax.nn.softmax(x, axis=-1)
    yield "bert eltwise", "softmax [12,128,128]", 12, softmax_j, [(1, 12, 128, 128)], \
        lambda x: torch.softmax(x, dim=-1)

    def ln_j(x, g, b):
        m = jnp.mean(x, axis=-1, keepdims=True)
        v = jnp.mean(jnp.square(x - m), axis=-1, keepdims=True)
        return (x - m) * jax.lax.rsqrt(v + 1e-12) * g + b
    yield "bert eltwise", "layer_norm [128,768]", 25, ln_j, [(1, 128, 768), (768,), (768,)], \
        lambda x, g, b: F.layer_norm(x, (768,), g, b, 1e-12)

    def gelu_j(x):
        return jax.nn.gelu(x, approximate=False)
    yield "bert eltwise", "gelu(erf) [128,3072]", 12, gelu_j, [(1, 128, 3072)], lambda x: F.gelu(x)

    def add_j(x, y):
        return x + y
    yield "bert eltwise", "add [128,768]", 36, add_j, [(1, 128, 768), (1, 128, 768)], lambda x, y: x + y

    def bias_j(x, b):
        return x + b
    yield "bert eltwise", "bias add [128,3072]", 12, bias_j, [(1, 128, 3072), (3072,)], lambda x, b: x + b

    def bn_relu_j(x, sc, sh):
        return jnp.maximum(x * sc[None, :, None, None] + sh[None, :, None, None], 0)
    yield "resnet50 eltwise", "bn+relu [1,256,56,56]", 8, bn_relu_j, [(1, 256, 56, 56), (256,), (256,)], \
        lambda x, sc, sh: torch.relu(x * sc[None, :, None, None] + sh[None, :, None, None])

    def res_j(x, y):
        return jnp.maximum(x + y, 0)
    yield "resnet50 eltwise", "add+relu [1,256,56,56]", 3, res_j, [(1, 256, 56, 56), (1, 256, 56, 56)], \
        lambda x, y: torch.relu(x + y)

    def pool_j(x):
        return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 1, 3, 3), (1, 1, 2, 2),
                                     [(0, 0), (0, 0), (1, 1), (1, 1)])
    yield "resnet50 eltwise", "maxpool 3x3/2 [1,64,112,112]", 1, pool_j, [(1, 64, 112, 112)], \
        lambda x: F.max_pool2d(x, 3, 2, 1)

    def gap_j(x):
        return jnp.mean(x, axis=(2, 3))
    yield "resnet50 eltwise", "global avgpool [1,2048,7,7]", 1, gap_j, [(1, 2048, 7, 7)], \
        lambda x: torch.mean(x, dim=(2, 3))


def time_torch(fn, args, iters, warmup):
    import torch
    with torch.no_grad():
        for _ in range(warmup):
            fn(*args)
        ts = []
        for _ in range(iters):
            t0 = time.perf_counter()
            fn(*args)
            ts.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(ts))


def time_wf(bench, mlir_path, threads, iters, warmup):
    env = dict(os.environ, WARPFORGE_NUM_THREADS=str(threads))
    out = subprocess.run([bench, mlir_path, "--iters", str(iters), "--warmup", str(warmup)],
                         env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["median_ms"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="CMake build directory holding bench/wf_bench")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--filter", default="", help="only cases whose group or name contains this")
    ap.add_argument("--baseline", default="", help="another wf_bench binary (e.g. an older build) timed in the same run")
    args = ap.parse_args()

    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import torch
    torch.set_num_threads(args.threads)
    bench = os.path.join(args.build, "bench", "wf_bench")
    if not os.path.exists(bench):
        sys.exit(f"no {bench}: build with -DWF_BUILD_BENCH=ON")

    rng = np.random.default_rng(0)
    rows = []
    totals = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i, (group, name, count, jf, shapes, tf) in enumerate(cases()):
            if args.filter and args.filter not in group and args.filter not in name:
                continue
            specs = [jax.ShapeDtypeStruct(s, np.float32) for s in shapes]
            text = jax.jit(jf).lower(*specs).as_text()
            path = os.path.join(tmp, f"case{i}.mlir")
            with open(path, "w") as f:
                f.write(text)
            targs = [torch.from_numpy(rng.uniform(-1, 1, s).astype(np.float32)) for s in shapes]
            t_ms = time_torch(tf, targs, args.iters, args.warmup)
            time.sleep(0.5)  # let PyTorch's OpenMP workers stop spinning before WarpForge runs
            w_ms = time_wf(bench, path, args.threads, args.iters, args.warmup)
            b_ms = time_wf(args.baseline, path, args.threads, args.iters, args.warmup) if args.baseline else 0.0
            rows.append((group, name, count, t_ms, w_ms, b_ms))
            tot = totals.setdefault(group, [0.0, 0.0, 0.0])
            tot[0] += count * t_ms
            tot[1] += count * w_ms
            tot[2] += count * b_ms
            print(f"{group:17s} {name:34s} x{count:<3d} torch {t_ms:8.3f} ms  warpforge {w_ms:8.3f} ms  "
                  f"ratio {w_ms / t_ms:5.2f}" + (f"  baseline {b_ms:8.3f} ms" if args.baseline else ""), flush=True)
    print()
    print(f"threads={args.threads}, fp32, median of {args.iters} runs; 'x N' = occurrences per model forward")
    base = bool(args.baseline)
    bh = f" {'base ms':>9s} | {'base ratio':>10s} |" if base else ""
    bs = f"{'-' * 11}|{'-' * 12}|" if base else ""
    print(f"| {'group':17s} | {'case':34s} | {'count':>5s} | {'torch ms':>9s} | {'wf ms':>9s} | {'ratio':>5s} |" + bh)
    print(f"|{'-' * 19}|{'-' * 36}|{'-' * 7}|{'-' * 11}|{'-' * 11}|{'-' * 7}|" + bs)
    for group, name, count, t_ms, w_ms, b_ms in rows:
        bc = f" {b_ms:9.3f} | {b_ms / t_ms:10.2f} |" if base else ""
        print(f"| {group:17s} | {name:34s} | {count:5d} | {t_ms:9.3f} | {w_ms:9.3f} | {w_ms / t_ms:5.2f} |" + bc)
    for group, (t, w, b) in totals.items():
        bc = f" {b:9.2f} | {b / t:10.2f} |" if base else ""
        print(f"| {group:17s} | {'weighted total (x count)':34s} | {'':5s} | {t:9.2f} | {w:9.2f} | {w / t:5.2f} |" + bc)


if __name__ == "__main__":
    main()
