"""The main job: lower a real model to StableHLO, run it on WarpForge, check it, print latency.

The model is a GPT-style decoder (token + position embeddings, pre-LayerNorm blocks with causal
multi-head attention and a GELU MLP, tied LM head) written in JAX with random weights. JAX lowers it
to StableHLO text with the weights as function arguments; WarpForge parses, verifies and runs it
on the CPU; the logits are compared with JAX's own CPU result under the project's fp32
tolerances, and both latencies are printed side by side.
"""

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import time

import jax
import jax.numpy as jnp
import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]


def init_params(rng, vocab, seq, width, layers, mlp):
    def dense(*shape):
        return (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)

    params = {"wte": dense(vocab, width) * 0.5, "wpe": dense(seq, width) * 0.5}
    for i in range(layers):
        params[f"h{i}.ln1.g"] = np.ones(width, np.float32) + 0.1 * rng.standard_normal(width).astype(np.float32)
        params[f"h{i}.ln1.b"] = 0.1 * rng.standard_normal(width).astype(np.float32)
        params[f"h{i}.attn.qkv"] = dense(width, 3 * width)
        params[f"h{i}.attn.proj"] = dense(width, width)
        params[f"h{i}.ln2.g"] = np.ones(width, np.float32)
        params[f"h{i}.ln2.b"] = np.zeros(width, np.float32)
        params[f"h{i}.mlp.fc"] = dense(width, mlp)
        params[f"h{i}.mlp.proj"] = dense(mlp, width)
    params["ln_f.g"] = np.ones(width, np.float32)
    params["ln_f.b"] = np.zeros(width, np.float32)
    return params


def gpt(params, tokens, *, layers, heads):
    def layer_norm(x, g, b):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) * jax.lax.rsqrt(v + 1e-5) * g + b

    batch, seq = tokens.shape
    x = params["wte"][tokens] + params["wpe"][:seq]
    width = x.shape[-1]
    hd = width // heads
    mask = jnp.tril(jnp.ones((seq, seq), bool))
    for i in range(layers):
        h = layer_norm(x, params[f"h{i}.ln1.g"], params[f"h{i}.ln1.b"])
        q, k, v = jnp.split(h @ params[f"h{i}.attn.qkv"], 3, axis=-1)
        q, k, v = (t.reshape(batch, seq, heads, hd).transpose(0, 2, 1, 3) for t in (q, k, v))
        s = jnp.where(mask, q @ k.transpose(0, 1, 3, 2) / np.sqrt(hd), -1e9)
        a = (jax.nn.softmax(s, axis=-1) @ v).transpose(0, 2, 1, 3).reshape(batch, seq, width)
        x = x + a @ params[f"h{i}.attn.proj"]
        h = layer_norm(x, params[f"h{i}.ln2.g"], params[f"h{i}.ln2.b"])
        x = x + jax.nn.gelu(h @ params[f"h{i}.mlp.fc"]) @ params[f"h{i}.mlp.proj"]
    x = layer_norm(x, params["ln_f.g"], params["ln_f.b"])
    return x @ params["wte"].T


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--warpforge", default=str(REPO / "build" / "warpforge"))
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--iters", type=int, default=20)
    args = ap.parse_args()

    vocab, seq, width, heads, mlp = 512, 64, 256, 8, 1024
    rng = np.random.default_rng(2026)
    params = init_params(rng, vocab, seq, width, args.layers, mlp)
    tokens = rng.integers(0, vocab, size=(1, seq), dtype=np.int32)
    names = sorted(params)

    def fn(tok, *weights):
        return gpt(dict(zip(names, weights)), tok, layers=args.layers, heads=heads)

    weights = [params[n] for n in names]
    jitted = jax.jit(fn)
    text = jitted.lower(tokens, *weights).as_text()
    expected = np.asarray(jitted(tokens, *weights))
    times = []
    for _ in range(args.iters):
        t0 = time.perf_counter()
        jitted(tokens, *weights).block_until_ready()
        times.append(time.perf_counter() - t0)
    jax_ms = 1e3 * float(np.median(times))

    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        (tmp / "gpt.mlir").write_text(text)
        cmd_inputs = []
        for i, array in enumerate([tokens] + weights):
            np.save(tmp / f"in{i}.npy", array)
            cmd_inputs += ["--input", f"{i}={tmp / f'in{i}.npy'}"]
        run = subprocess.run([args.warpforge, "run", str(tmp / "gpt.mlir"), "--output-dir", str(tmp / "out")]
                             + cmd_inputs, capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"warpforge run failed:\n{run.stderr}")
        actual = np.load(tmp / "out" / "out0.npy")
        bench = subprocess.run([args.warpforge, "bench", str(tmp / "gpt.mlir"), "--iters", str(args.iters), "--json"]
                               + cmd_inputs, capture_output=True, text=True)
        if bench.returncode != 0:
            sys.exit(f"warpforge bench failed:\n{bench.stderr}")
        wf = json.loads(bench.stdout)

    err = np.abs(actual.astype(np.float64) - expected)
    rel = err / np.maximum(np.abs(expected), 1e-30)
    ok = np.allclose(actual, expected, rtol=1e-3, atol=1e-5) and not np.isnan(actual).any()
    n_params = sum(w.size for w in weights)
    print(f"model: GPT decoder, {args.layers} layers, width {width}, {heads} heads, "
          f"{n_params / 1e6:.1f} M parameters, tokens 1x{seq}, fp32, CPU")
    print(f"logits {actual.shape}: max abs err {err.max():.3e}, max rel err {rel.max():.3e} "
          f"(rtol 1e-3, atol 1e-5): {'MATCH' if ok else 'MISMATCH'}")
    print()
    print(f"| runtime | median ms | p10 ms | p90 ms |")
    print(f"|---|---|---|---|")
    print(f"| WarpForge (cpu) | {wf['median_ms']:.2f} | {wf['p10_ms']:.2f} | {wf['p90_ms']:.2f} |")
    print(f"| JAX jit (cpu)   | {jax_ms:.2f} | {1e3 * np.percentile(times, 10):.2f} | "
          f"{1e3 * np.percentile(times, 90):.2f} |")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
