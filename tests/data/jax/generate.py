"""Regenerates the JAX-printed StableHLO samples in this directory (parser test inputs).

Run: python3 tests/data/jax/generate.py   (needs jax; writes <name>.mlir next to this file)
"""
import os

import numpy as np

import jax
import jax.numpy as jnp
from jax import lax

HERE = os.path.dirname(os.path.abspath(__file__))
f32 = jnp.float32


def mlp(x, w1, b1, w2):
    h = jax.nn.relu(x @ w1 + b1)
    return jax.nn.softmax(h @ w2, axis=-1)


def reductions(x):
    return jnp.sum(x, axis=0), jnp.max(x, axis=1), jnp.argmax(x, axis=1), jnp.mean(x)


def control_flow(x, n):
    def body(i, c):
        return c * 1.5 + i
    y = lax.fori_loop(0, n, body, x)
    z = lax.cond(n > 2, lambda v: v + 1, lambda v: v - 1, y)
    return lax.switch(n % 3, [jnp.sin, jnp.cos, jnp.tanh], z)


def conv(x, k):
    return lax.conv_general_dilated(x, k, (2, 2), "SAME", rhs_dilation=(1, 1),
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"))


def indexing(x, idx):
    a = x[idx]
    b = x.at[idx].add(1.0)
    c = jnp.take_along_axis(x, jnp.argsort(x, axis=1), axis=1)
    return a, b, c, x[1:3, ::2], jnp.pad(x, ((1, 2), (0, 1))), jnp.flip(x, 0)


def misc(x):
    y = jnp.concatenate([x, x * 2], axis=0).T
    z = jnp.cumsum(x, axis=1) + lax.reduce_precision(x, exponent_bits=5, mantissa_bits=2)
    w = jnp.einsum("ij,kj->ik", x, x, precision=lax.Precision.HIGHEST)
    c = lax.complex(x, x)
    return y, z, w, jnp.abs(c), jnp.fft.fft(c), jnp.where(x > 0, x, jnp.nan), x.astype(jnp.bfloat16)


def pooling(x):
    s = lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    return s, jax.nn.gelu(x), jax.scipy.special.erf(x), jnp.sort(x, axis=-1)


def rng(key):
    return jax.random.normal(key, (4,)), jax.random.uniform(key, (2, 3))


@jax.jit
def inner(x):
    return jnp.sin(x) * 2


def calls(x):
    return inner(x) + inner(x + 1), lax.dynamic_slice(x, (1,), (2,)), lax.dynamic_update_slice(x, x[:2], (1,))


def linalg(a):
    spd = a @ a.T + jnp.eye(4, dtype=a.dtype)
    return jnp.linalg.cholesky(spd), jax.scipy.linalg.solve_triangular(spd, a, lower=True), jnp.linalg.eigh(spd)[0]


def scatter_gather(x, idx):
    return x.at[idx, 1].set(0.0), x.at[idx].max(2.0), x[idx[:2], idx[2:]]


def loops(v, keys):
    s = lax.scan(lambda c, t: (c + t, c * t), 0.0, v)
    w = lax.while_loop(lambda st: st[0] < 10, lambda st: (st[0] + 1, st[1] * 2), (0, v))[1]
    srt = lax.sort((v, keys), num_keys=1)
    return s, w, srt, lax.top_k(v, 3), lax.optimization_barrier(v)


def types(v):
    return (v.astype(jnp.float16), v.astype(jnp.bfloat16), v.astype(jnp.float8_e4m3fn), v.astype(jnp.complex64),
            v.astype(jnp.uint8), v.astype(jnp.int4), lax.population_count(v.astype(jnp.int32)), v > 0)


def cases():
    return [
        ("mlp", mlp, (jnp.ones((2, 3), f32), jnp.ones((3, 4), f32), jnp.ones((4,), f32), jnp.ones((4, 2), f32))),
        ("reductions", reductions, (jnp.ones((3, 4), f32),)),
        ("control_flow", control_flow, (jnp.ones((3,), f32), jnp.int32(4))),
        ("conv", conv, (jnp.ones((1, 8, 8, 3), f32), jnp.ones((3, 3, 3, 4), f32))),
        ("indexing", indexing, (jnp.ones((4, 5), f32), jnp.int32(1))),
        ("misc", misc, (jnp.ones((3, 3), f32),)),
        ("pooling", pooling, (jnp.ones((1, 4, 4, 2), f32),)),
        ("rng", rng, (jax.random.PRNGKey(0),)),
        ("calls", calls, (jnp.ones((5,), f32),)),
        ("linalg", linalg, (jnp.ones((4, 4), f32),)),
        ("scatter_gather", scatter_gather, (jnp.ones((4, 4), f32), jnp.array([0, 2, 1, 3], jnp.int32))),
        ("loops", loops, (jnp.arange(6, dtype=f32), jnp.arange(6, dtype=jnp.int32))),
        ("types", types, (jnp.arange(4, dtype=f32),)),
    ]


def extra_modules():
    """Modules that need jax.export or shardings: dynamic shapes, both sharding spellings."""
    from jax import export
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    out = {}
    b, = export.symbolic_shape("b")
    poly = export.export(jax.jit(lambda a: (jnp.sum(a, 0), jnp.concatenate([a, a]), a.reshape(-1))))
    out["shape_poly"] = poly(jax.ShapeDtypeStruct((b, 3), f32)).mlir_module()
    mesh = Mesh(np.array(jax.devices()[:1]), ("x",))
    s = NamedSharding(mesh, P("x"))
    sharded = jax.jit(lambda a: jnp.sin(a) * 2, in_shardings=s, out_shardings=s)
    out["sharded_sdy"] = sharded.lower(jnp.ones((8,), f32)).as_text()
    jax.config.update("jax_use_shardy_partitioner", False)
    out["sharded_mhlo"] = sharded.lower(jnp.ones((8,), f32)).as_text()
    jax.config.update("jax_use_shardy_partitioner", True)
    return out


def main():
    for name, fn, args in cases():
        text = jax.jit(fn).lower(*args).as_text()
        with open(os.path.join(HERE, name + ".mlir"), "w") as f:
            f.write(text)
        # A few modules again with debug locations (`loc(...)` and `#loc` aliases).
        if name not in ("mlp", "conv", "control_flow", "loops"):
            continue
        text = jax.jit(fn).lower(*args).as_text(debug_info=True)
        with open(os.path.join(HERE, name + "_loc.mlir"), "w") as f:
            f.write(text)
    for name, text in extra_modules().items():
        with open(os.path.join(HERE, name + ".mlir"), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
