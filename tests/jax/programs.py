"""JAX programs lowered to StableHLO and run on WarpForge, compared with JAX's own CPU results.

Each entry: name -> (function, input specs, kind). An input spec is (shape, dtype) and inputs are
drawn fresh from a seeded generator; `kind` picks the tolerance:
  "elementwise": fp32 rtol 1e-5, "reduction": fp32 rtol 1e-4 (anything that sums or contracts),
  "exact": bit-exact (integers, booleans, data movement), "low": bf16/f16 programs.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

F32 = np.float32
I32 = np.int32


def _spec(shape, dtype=F32, low=None, high=None):
    return {"shape": shape, "dtype": dtype, "low": low, "high": high}


PROGRAMS = {}


def program(name, kind, *specs):
    def register(fn):
        PROGRAMS[name] = (fn, list(specs), kind)
        return fn
    return register


# ---- elementwise -------------------------------------------------------------------------
@program("add_mul", "elementwise", _spec((4, 8)), _spec((4, 8)))
def _(x, y):
    return x * y + x - y / (jnp.abs(y) + 1.0)


@program("broadcast_arith", "elementwise", _spec((3, 1, 5)), _spec((4, 1)))
def _(x, y):
    return x + y * 2.0


@program("transcendental", "elementwise", _spec((64,), low=0.1, high=4.0))
def _(x):
    return jnp.exp(x) + jnp.log(x) + jnp.sin(x) * jnp.cos(x) + jnp.tanh(x) + jnp.sqrt(x)


@program("rsqrt_logistic", "elementwise", _spec((32,), low=0.1, high=4.0))
def _(x):
    return lax.rsqrt(x) + jax.nn.sigmoid(x) + jnp.log1p(x) + jnp.expm1(x * 0.1)


@program("power_atan2", "elementwise", _spec((16,), low=0.5, high=2.0), _spec((16,)))
def _(x, y):
    return jnp.power(x, y) + jnp.arctan2(y, x)


@program("gelu_tanh", "elementwise", _spec((128,)))
def _(x):
    return jax.nn.gelu(x, approximate=True)


@program("gelu_exact", "elementwise", _spec((128,)))
def _(x):
    return jax.nn.gelu(x, approximate=False)


@program("relu_silu_softplus", "elementwise", _spec((64,)))
def _(x):
    return jax.nn.relu(x) + jax.nn.silu(x) + jax.nn.softplus(x)


@program("where_select", "elementwise", _spec((5, 6)), _spec((5, 6)))
def _(x, y):
    return jnp.where(x > y, x, y * 2.0)


@program("clip_round", "elementwise", _spec((40,), low=-5, high=5))
def _(x):
    return jnp.clip(x, -1.5, 2.5) + jnp.round(x) + jnp.floor(x) + jnp.ceil(x) + jnp.sign(x)


@program("erf_lgamma", "elementwise", _spec((32,), low=0.2, high=3.0))
def _(x):
    return jax.scipy.special.erf(x) + jax.lax.lgamma(x)


@program("trig_inverse", "elementwise", _spec((32,), low=-0.9, high=0.9))
def _(x):
    return jnp.arcsin(x) + jnp.arccos(x) + jnp.arctan(x) + jnp.sinh(x) + jnp.cosh(x) + jnp.tan(x)


@program("minimum_maximum", "elementwise", _spec((7, 3)), _spec((7, 3)))
def _(x, y):
    return jnp.minimum(x, y) * jnp.maximum(x, y)


@program("float64_math", "elementwise", _spec((16,), np.float64, 0.1, 3.0))
def _(x):
    return jnp.exp(x) * jnp.log(x) + x ** 3


@program("is_finite_nan_to_num", "elementwise", _spec((16,)))
def _(x):
    y = jnp.log(x)  # NaN for negatives
    return jnp.where(jnp.isfinite(y), y, 0.0)


# ---- integers and booleans ---------------------------------------------------------------
@program("int_arith", "exact", _spec((32,), I32, -1000, 1000), _spec((32,), I32, 1, 50))
def _(x, y):
    return x * 3 + x // y - x % y + (x & y) - (x | 7) + (x ^ y)


@program("int_shifts_bits", "exact", _spec((32,), np.uint32, 0, 2**31), _spec((32,), np.uint32, 0, 31))
def _(x, y):
    return (x << y) + (x >> (y % 8)) + lax.population_count(x) + lax.clz(x)


@program("int8_wrap", "exact", _spec((32,), np.int8, -128, 127), _spec((32,), np.int8, -128, 127))
def _(x, y):
    return x + y, x * y


@program("int_compare_logic", "exact", _spec((20,), I32, -5, 5), _spec((20,), I32, -5, 5))
def _(x, y):
    return jnp.logical_and(x < y, x != 0) | (x == y)


@program("int_abs_max", "exact", _spec((4, 5), np.int64, -100, 100))
def _(x):
    return jnp.abs(x) + jnp.max(x, axis=1, keepdims=True)


@program("convert_types", "exact", _spec((24,), F32, -300, 300))
def _(x):
    return x.astype(jnp.int32), x.astype(jnp.int8), (x > 0).astype(jnp.int32), x.astype(jnp.uint8)


@program("int_sum_prod", "exact", _spec((6, 7), I32, -3, 4))
def _(x):
    return jnp.sum(x, axis=0), jnp.prod(x, axis=1)


# ---- reductions, normalisation, softmax ---------------------------------------------------
@program("sum_mean_axes", "reduction", _spec((4, 5, 6)))
def _(x):
    return jnp.sum(x, axis=(0, 2)), jnp.mean(x, axis=1), jnp.sum(x)


@program("max_min_reduce", "exact", _spec((8, 9)))
def _(x):
    return jnp.max(x, axis=0), jnp.min(x, axis=1)


@program("softmax", "reduction", _spec((4, 32)))
def _(x):
    return jax.nn.softmax(x, axis=-1)


@program("log_softmax", "reduction", _spec((4, 32)))
def _(x):
    return jax.nn.log_softmax(x, axis=-1)


@program("layer_norm", "reduction", _spec((8, 64)), _spec((64,)), _spec((64,)))
def _(x, g, b):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.var(x, axis=-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + 1e-5) * g + b


@program("rms_norm", "reduction", _spec((8, 64)), _spec((64,)))
def _(x, g):
    return x * lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * g


@program("argmax_argmin", "exact", _spec((6, 10)))
def _(x):
    return jnp.argmax(x, axis=1), jnp.argmin(x, axis=0)


@program("cumsum", "reduction", _spec((5, 12)))
def _(x):
    return jnp.cumsum(x, axis=1)


@program("cumprod_cummax", "reduction", _spec((10,), low=0.5, high=1.5))
def _(x):
    return jnp.cumprod(x), lax.cummax(x)


@program("logsumexp", "reduction", _spec((3, 50)))
def _(x):
    return jax.scipy.special.logsumexp(x, axis=1)


@program("variance_std", "reduction", _spec((6, 40)))
def _(x):
    return jnp.var(x, axis=1), jnp.std(x, axis=0)


# ---- dot, einsum, attention ------------------------------------------------------------
@program("matmul", "reduction", _spec((16, 32)), _spec((32, 8)))
def _(x, y):
    return x @ y


@program("batched_matmul", "reduction", _spec((3, 16, 32)), _spec((3, 32, 8)))
def _(x, y):
    return jnp.matmul(x, y)


@program("einsum_bhqd", "reduction", _spec((2, 4, 8, 16)), _spec((2, 4, 10, 16)))
def _(q, k):
    return jnp.einsum("bhqd,bhkd->bhqk", q, k)


@program("einsum_contract_two", "reduction", _spec((3, 4, 5)), _spec((4, 5, 6)))
def _(x, y):
    return jnp.einsum("ijk,jkl->il", x, y)


@program("matvec_outer", "reduction", _spec((10, 7)), _spec((7,)), _spec((5,)))
def _(m, v, w):
    return m @ v, jnp.outer(v, w)


@program("dot_int", "exact", _spec((6, 7), I32, -10, 10), _spec((7, 5), I32, -10, 10))
def _(x, y):
    return x @ y


@program("attention", "reduction", _spec((2, 16, 32)), _spec((32, 32)), _spec((32, 32)), _spec((32, 32)))
def _(x, wq, wk, wv):
    q, k, v = x @ wq, x @ wk, x @ wv
    scores = jnp.einsum("bqd,bkd->bqk", q, k) / jnp.sqrt(32.0)
    return jnp.einsum("bqk,bkd->bqd", jax.nn.softmax(scores, axis=-1), v)


@program("causal_attention_heads", "reduction", _spec((1, 4, 12, 8)), _spec((1, 4, 12, 8)), _spec((1, 4, 12, 8)))
def _(q, k, v):
    s = jnp.einsum("bhqd,bhkd->bhqk", q, k) * 0.35
    mask = jnp.tril(jnp.ones((12, 12), dtype=bool))
    s = jnp.where(mask, s, -1e9)
    return jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(s, axis=-1), v)


@program("mlp", "reduction", _spec((4, 16)), _spec((16, 64)), _spec((64,)), _spec((64, 16)))
def _(x, w1, b1, w2):
    return jax.nn.relu(x @ w1 + b1) @ w2


# ---- convolution and pooling ------------------------------------------------------------
@program("conv2d_nchw", "reduction", _spec((2, 3, 16, 16)), _spec((8, 3, 3, 3)))
def _(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW"))


@program("conv2d_strided_nhwc", "reduction", _spec((1, 17, 17, 4)), _spec((3, 3, 4, 6)))
def _(x, w):
    return lax.conv_general_dilated(x, w, (2, 2), ((1, 1), (1, 1)), dimension_numbers=("NHWC", "HWIO", "NHWC"))


@program("conv_dilated_grouped", "reduction", _spec((1, 8, 12, 12)), _spec((8, 2, 3, 3)))
def _(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "VALID", rhs_dilation=(2, 2), feature_group_count=4,
                                    dimension_numbers=("NCHW", "OIHW", "NCHW"))


@program("conv1d", "reduction", _spec((2, 4, 20)), _spec((6, 4, 5)))
def _(x, w):
    return lax.conv_general_dilated(x, w, (1,), "SAME", dimension_numbers=("NCH", "OIH", "NCH"))


@program("conv_transpose", "reduction", _spec((1, 4, 7, 7)), _spec((4, 3, 3, 3)))
def _(x, w):
    return lax.conv_transpose(x, w, (2, 2), "SAME", dimension_numbers=("NCHW", "IOHW", "NCHW"))


@program("max_pool", "exact", _spec((1, 3, 12, 12)))
def _(x):
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 3, 3), (1, 1, 2, 2), "SAME")


@program("avg_pool", "reduction", _spec((2, 12, 12, 3)))
def _(x):
    return lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0


# ---- control flow ------------------------------------------------------------------------
@program("fori_loop", "reduction", _spec((8,)))
def _(x):
    return lax.fori_loop(0, 10, lambda i, acc: acc * 0.9 + jnp.sin(acc) + i, x)


@program("while_loop_newton", "reduction", _spec((8,), low=1.0, high=9.0))
def _(a):
    def cond(s):
        return s[1] < 20

    def body(s):
        x, i = s
        return (0.5 * (x + a / x), i + 1)

    return lax.while_loop(cond, body, (a, 0))[0]


@program("scan_rnn", "reduction", _spec((6, 4)), _spec((4, 4)), _spec((4, 4)))
def _(xs, w, u):
    def step(h, x):
        h = jnp.tanh(h @ w + x @ u)
        return h, h

    return lax.scan(step, jnp.zeros((4,), F32), xs)


@program("cond_branch", "elementwise", _spec((5,)), _spec((), F32))
def _(x, p):
    return lax.cond(p > 0, lambda v: v * 2.0, lambda v: v - 1.0, x)


@program("switch_case", "elementwise", _spec((5,)), _spec((), I32, 0, 3))
def _(x, i):
    return lax.switch(i, [lambda v: v + 1.0, lambda v: v * v, lambda v: -v], x)


# ---- sorting and indexing ----------------------------------------------------------------
@program("sort", "exact", _spec((4, 10)))
def _(x):
    return jnp.sort(x, axis=1), jnp.argsort(x, axis=0)


@program("top_k", "exact", _spec((3, 20)))
def _(x):
    return lax.top_k(x, 5)


@program("gather_take", "exact", _spec((10, 6)), _spec((7,), I32, 0, 10))
def _(x, idx):
    return x[idx], jnp.take(x, idx % 6, axis=1)


@program("gather_take_along_axis", "exact", _spec((5, 8)), _spec((5, 3), I32, 0, 8))
def _(x, idx):
    return jnp.take_along_axis(x, idx, axis=1)


@program("scatter_set_add", "exact", _spec((10,)), _spec((4,), I32, 0, 10), _spec((4,)))
def _(x, idx, v):
    return x.at[idx].set(v), x.at[jnp.array([1, 3, 3, 7])].add(v)


@program("embedding_lookup", "exact", _spec((50, 16)), _spec((2, 5), I32, 0, 50))
def _(table, ids):
    return table[ids]


@program("dynamic_slice_update", "exact", _spec((8, 8)), _spec((), I32, 0, 8), _spec((2, 3)))
def _(x, i, u):
    s = lax.dynamic_slice(x, (i, 2), (3, 4))
    return s, lax.dynamic_update_slice(x, u, (i, i))


@program("slicing_and_strides", "exact", _spec((9, 10)))
def _(x):
    return x[1:7:2, ::3], x[::-1, 2], x[..., 4:]


@program("pad_concat_reverse", "exact", _spec((3, 4)), _spec((3, 2)))
def _(x, y):
    return jnp.pad(x, ((1, 2), (0, 3))), jnp.concatenate([x, y], axis=1), jnp.flip(x, axis=(0, 1))


@program("lax_pad_interior_negative", "exact", _spec((5, 6)))
def _(x):
    return lax.pad(x, 0.5, ((1, -1, 1), (-2, 2, 0)))


@program("reshape_transpose", "exact", _spec((2, 3, 4, 5)))
def _(x):
    return jnp.transpose(x, (3, 1, 0, 2)).reshape(5, 24), jnp.swapaxes(x, 1, 2)


@program("broadcast_iota", "exact", _spec((4, 1)))
def _(x):
    return x + jnp.arange(6, dtype=F32), jnp.broadcast_to(x, (3, 4, 5))


@program("one_hot_tril", "exact", _spec((6,), I32, 0, 5), _spec((5, 5)))
def _(labels, m):
    return jax.nn.one_hot(labels, 5), jnp.tril(m), jnp.triu(m, 1)


# ---- low precision -----------------------------------------------------------------------
@program("bf16_arith", "low", _spec((64,), jnp.bfloat16), _spec((64,), jnp.bfloat16))
def _(x, y):
    return x * y + x - jnp.exp(y * 0.5)


@program("bf16_matmul_f32acc", "low", _spec((16, 32), jnp.bfloat16), _spec((32, 8), jnp.bfloat16))
def _(x, y):
    return jnp.dot(x, y, preferred_element_type=jnp.float32)


@program("f16_arith", "low", _spec((64,), np.float16), _spec((64,), np.float16))
def _(x, y):
    return x * y + jnp.tanh(x) - y


@program("f16_softmax", "low", _spec((4, 16), np.float16))
def _(x):
    return jax.nn.softmax(x.astype(F32), axis=-1).astype(np.float16)


@program("bf16_layer_norm", "low", _spec((4, 32), jnp.bfloat16))
def _(x):
    xf = x.astype(F32)
    m = jnp.mean(xf, axis=-1, keepdims=True)
    return ((xf - m) * lax.rsqrt(jnp.var(xf, axis=-1, keepdims=True) + 1e-5)).astype(jnp.bfloat16)


# ---- complex -----------------------------------------------------------------------------
@program("complex_math", "elementwise", _spec((8,)), _spec((8,)))
def _(re, im):
    z = lax.complex(re, im)
    w = z * z + jnp.exp(z)
    return jnp.real(w), jnp.imag(w), jnp.abs(z)


# ---- a small transformer block -------------------------------------------------------------
@program("transformer_block", "reduction",
         _spec((2, 8, 32)), _spec((32, 96)), _spec((32, 32)), _spec((32, 64)), _spec((64, 32)))
def _(x, wqkv, wo, w1, w2):
    def ln(v):
        return (v - v.mean(-1, keepdims=True)) * lax.rsqrt(v.var(-1, keepdims=True) + 1e-5)

    h = ln(x)
    q, k, v = jnp.split(h @ wqkv, 3, axis=-1)
    q = q.reshape(2, 8, 4, 8).transpose(0, 2, 1, 3)
    k = k.reshape(2, 8, 4, 8).transpose(0, 2, 1, 3)
    v = v.reshape(2, 8, 4, 8).transpose(0, 2, 1, 3)
    a = jax.nn.softmax(q @ k.transpose(0, 1, 3, 2) / jnp.sqrt(8.0), axis=-1) @ v
    x = x + a.transpose(0, 2, 1, 3).reshape(2, 8, 32) @ wo
    return x + jax.nn.gelu(ln(x) @ w1) @ w2


def make_inputs(specs, rng):
    """Fresh random inputs for a program, as numpy arrays of the requested dtypes."""
    arrays = []
    for s in specs:
        dtype = np.dtype(s["dtype"])
        if np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            low = info.min if s["low"] is None else s["low"]
            high = info.max if s["high"] is None else s["high"]
            arrays.append(rng.integers(low, high, size=s["shape"], dtype=np.int64, endpoint=False).astype(dtype))
        else:
            low = -2.0 if s["low"] is None else s["low"]
            high = 2.0 if s["high"] is None else s["high"]
            arrays.append(rng.uniform(low, high, size=s["shape"]).astype(dtype))
    return arrays
