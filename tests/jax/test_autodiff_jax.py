"""WarpForge's reverse-mode autodiff against JAX's: a float64 loss (jax x64) is lowered to
StableHLO text, `warpforge autodiff` adds its value-and-grad function, `warpforge run` runs it,
and every gradient must match, within 1e-5 relative, both `jax.grad` of the same loss as JAX
computes it and the program `jax.grad` exports, run on WarpForge."""

import os
import pathlib
import subprocess

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

REPO = pathlib.Path(__file__).resolve().parents[2]
WARPFORGE = os.environ.get("WARPFORGE", str(REPO / "build" / "warpforge"))


def mlp_loss(w1, b1, w2, b2, x, y):
    h = jnp.tanh(x @ w1 + b1)
    out = jax.nn.sigmoid(h @ w2 + b2)
    return jnp.mean((out - y) ** 2)


def mlp_args(rng):
    return [rng.normal(size=(6, 16)), rng.normal(size=16), rng.normal(size=(16, 3)), rng.normal(size=3),
            rng.normal(size=(8, 6)), rng.uniform(size=(8, 3))]


def conv_loss(k1, k2, w, x, labels):
    dn = ("NCHW", "OIHW", "NCHW")
    h = lax.conv_general_dilated(x, k1, (1, 1), "SAME", dimension_numbers=dn)
    h = jnp.maximum(h, 0.0)
    h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")  # max pool
    h = lax.conv_general_dilated(h, k2, (2, 2), ((1, 1), (1, 1)), rhs_dilation=(1, 1), dimension_numbers=dn,
                                 feature_group_count=2)
    h = jnp.tanh(h)
    h = lax.reduce_window(h, 0.0, lax.add, (1, 1, 2, 2), (1, 1, 1, 1), "SAME") / 4.0  # average pool
    logits = h.reshape(h.shape[0], -1) @ w
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))


def conv_args(rng):
    return [rng.normal(size=(4, 3, 3, 3)) * 0.5, rng.normal(size=(6, 2, 3, 3)) * 0.5, rng.normal(size=(6 * 4 * 4, 5)),
            rng.normal(size=(2, 3, 16, 16)), np.array([1, 4], dtype=np.int64)]


def attention_loss(wq, wk, wv, wo, gamma, beta, x):
    t, d = x.shape
    heads = 2
    def split(a):
        return a.reshape(t, heads, d // heads).transpose(1, 0, 2)
    q, k, v = split(x @ wq), split(x @ wk), split(x @ wv)
    s = jnp.einsum("htd,hsd->hts", q, k) / np.sqrt(d // heads)
    mask = jnp.tril(jnp.ones((t, t), dtype=bool))
    s = jnp.where(mask, s, -1e9)
    p = jax.nn.softmax(s, axis=-1)
    o = jnp.einsum("hts,hsd->htd", p, v).transpose(1, 0, 2).reshape(t, d) @ wo + x
    mu = o.mean(-1, keepdims=True)
    var = ((o - mu) ** 2).mean(-1, keepdims=True)
    y = (o - mu) * lax.rsqrt(var + 1e-5) * gamma + beta
    return jnp.sum(jax.nn.gelu(y, approximate=False) * jnp.cos(y))


def attention_args(rng):
    d = 8
    return [rng.normal(size=(d, d)) * 0.4 for _ in range(4)] + [rng.uniform(0.5, 1.5, size=d), rng.normal(size=d),
                                                                  rng.normal(size=(6, d))]


def rnn_loss(wh, wx, h0, xs):
    def step(h, x):
        h = jnp.tanh(h @ wh + x @ wx)
        return h, jnp.sum(h * h)
    h, ys = lax.scan(step, h0, xs)
    return jnp.sum(ys) + jnp.sum(h)


def rnn_args(rng):
    return [rng.normal(size=(5, 5)) * 0.5, rng.normal(size=(3, 5)) * 0.5, rng.normal(size=5), rng.normal(size=(7, 3))]


def embed_cond_loss(table, w, ids):
    e = table[ids]                       # gather
    z = lax.cond(jnp.sum(e) > 0, lambda a: jnp.sin(a) @ w, lambda a: jnp.exp(a) @ w, e)
    upd = jnp.zeros_like(table).at[ids].add(e * 2.0)   # scatter-add
    return jnp.sum(z ** 2) + jnp.sum(upd * table) + jnp.sum(lax.dynamic_slice(table, (2, 1), (3, 2)))


def embed_cond_args(rng):
    return [rng.normal(size=(10, 4)), rng.normal(size=(4, 3)), np.array([3, 1, 7, 3], dtype=np.int64)]


def sorting_loss(w, x):
    y = jnp.tanh(x @ w)
    vals, _ = lax.top_k(y, 3)
    s = jnp.sort(y, axis=0)
    return (jnp.sum(vals ** 2) + jnp.sum(s[0] * s[-1]) + jnp.sum(jnp.cumsum(y, axis=1) ** 2)
            + jnp.sum(jnp.prod(y, axis=1)) + jnp.sum(jnp.max(y, axis=0)) + jnp.sum(jnp.clip(y, -0.5, 0.5))
            + jnp.sum(jax.nn.logsumexp(y, axis=1)))


def sorting_args(rng):
    return [rng.normal(size=(4, 6)), rng.normal(size=(5, 4))]


# name: (loss, inputs, indices of the arguments to differentiate)
PROGRAMS = {
    "mlp": (mlp_loss, mlp_args, (0, 1, 2, 3)),
    "conv_net": (conv_loss, conv_args, (0, 1, 2, 3)),
    "attention": (attention_loss, attention_args, (0, 1, 2, 3, 4, 5, 6)),
    "rnn_scan": (rnn_loss, rnn_args, (0, 1, 2, 3)),
    "embedding_cond_scatter": (embed_cond_loss, embed_cond_args, (0, 1)),
    "sort_top_k_cumsum_prod": (sorting_loss, sorting_args, (0, 1)),
}


def _run(mlir, entry, args, workdir, count):
    cmd = [WARPFORGE, "run", str(mlir), "--entry", entry, "--output-dir", str(workdir)]
    for i, a in enumerate(args):
        np.save(workdir.parent / f"in{i}.npy", np.asarray(a))
        cmd += ["--input", f"{i}={workdir.parent / f'in{i}.npy'}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stderr}"
    return [np.load(workdir / f"out{i}.npy") for i in range(count)]


def _assert_close(ours, theirs, what):
    assert ours.dtype == np.float64 and ours.shape == theirs.shape, what
    scale = np.abs(theirs).max()
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-12 * max(scale, 1.0), err_msg=what)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_gradients_match_jax(name, tmp_path):
    loss, make_args, argnums = PROGRAMS[name]
    args = make_args(np.random.default_rng(7))
    with jax.enable_x64(True):
        text = jax.jit(loss).lower(*args).as_text()
        grad_text = jax.jit(jax.grad(loss, argnums=argnums)).lower(*args).as_text()
        value = np.asarray(jax.jit(loss)(*args))
        grads = [np.asarray(g) for g in jax.jit(jax.grad(loss, argnums=argnums))(*args)]
    src = tmp_path / "loss.mlir"
    src.write_text(text)
    out = tmp_path / "grad.mlir"
    cmd = [WARPFORGE, "autodiff", str(src), "--wrt", ",".join(map(str, argnums)), "-o", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stderr}"
    results = _run(out, "main_value_and_grad", args, tmp_path / "ours", 1 + len(argnums))

    # the program jax.grad exports, run on WarpForge
    jax_src = tmp_path / "jax_grad.mlir"
    jax_src.write_text(grad_text)
    exported = _run(jax_src, "main", args, tmp_path / "theirs", len(argnums))

    np.testing.assert_allclose(results[0], value, rtol=1e-12, err_msg=f"{name}: loss")
    for k, ours in enumerate(results[1:]):
        _assert_close(ours, grads[k], f"{name}: gradient of argument {argnums[k]} vs jax.grad")
        _assert_close(ours, exported[k], f"{name}: gradient of argument {argnums[k]} vs jax.grad's program")
