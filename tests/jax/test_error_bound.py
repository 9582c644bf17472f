"""The float32 rounding-error bound (error_bound.py) that judges ill-conditioned outputs of the JAX
suite: exact on programs whose bound is known in closed form, held by JAX's own float32 results,
and strict enough to reject a result that is wrong by more than rounding."""

import pathlib
import sys
import zlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from error_bound import UNIT_ROUNDOFF, rounding_error_bound  # noqa: E402
from programs import PROGRAMS, make_inputs  # noqa: E402
from test_jax_suite import _assert_within_error_bound, _f64_reference  # noqa: E402

U = UNIT_ROUNDOFF


def test_dot_bound_is_n_u_sum_of_abs_terms():
    rng = np.random.default_rng(1)
    x = rng.uniform(-2, 2, (5, 7)).astype(np.float32)
    y = rng.uniform(-2, 2, (7, 3)).astype(np.float32)
    (bound,) = rounding_error_bound(lambda a, b: a @ b, [x, y])
    expected = U * 7 * (np.abs(x.astype(np.float64)) @ np.abs(y.astype(np.float64)))
    np.testing.assert_allclose(bound, expected, rtol=1e-12)


def test_chain_bound_propagates_through_derivatives():
    # y = exp(x) * 3 + 0.1: exp rounds (u|e^x|, times 3), 3 is exact in float32, the product
    # rounds (u|3e^x|), 0.1 is off by |0.1 - float32(0.1)|, the sum rounds (u|y|).
    x = np.linspace(-3, 3, 11, dtype=np.float32)
    (bound,) = rounding_error_bound(lambda v: jnp.exp(v) * 3.0 + 0.1, [x])
    ex = np.exp(x.astype(np.float64))
    tenth = abs(0.1 - float(np.float32(0.1)))
    np.testing.assert_allclose(bound, U * (3 * ex + 3 * ex + (3 * ex + 0.1)) + tenth, rtol=1e-12)


def test_softmax_of_large_scores_is_bounded_by_the_rounding_of_the_scores():
    # Scores near 100 are rounded to within u*100 before the max is subtracted; the bound must
    # carry that through exp (p * u * 100), far above a few ulps of p.
    s = np.array([[100.0, 99.5, 98.0, 90.0]], np.float32)
    (bound,) = rounding_error_bound(lambda v: jax.nn.softmax(v / 3.0, axis=-1), [s])
    p = np.asarray(jax.nn.softmax(s.astype(np.float64) / 3.0, axis=-1))
    assert (bound > p * U * 30).all()
    assert (bound < p * U * 1000).all()


@pytest.mark.parametrize("name", ["attention", "transformer_block", "causal_attention_heads", "conv2d_nchw"])
def test_jax_float32_results_are_within_the_bound(name):
    fn, specs, _ = PROGRAMS[name]
    for seed in range(3):
        args = make_inputs(specs, np.random.default_rng(zlib.crc32(name.encode()) + seed))
        expected = [np.asarray(o) for o in jax.tree.leaves(jax.jit(fn)(*args))]
        for e, r, b in zip(expected, _f64_reference(fn, args), rounding_error_bound(fn, args)):
            err = np.abs(e.astype(np.float64) - r)
            assert (err <= b).all(), f"{name} seed {seed}: JAX's error {err.max():.3g} beyond the bound"
            # Not vacuous: a worst case, but still far below the scale of a wrong result.
            assert np.median(b / np.abs(r)) < 1e-3, f"{name}: bound {np.median(b / np.abs(r)):.3g} of |result|"


def test_criterion_accepts_luckier_jax_and_rejects_a_wrong_element():
    fn, specs, _ = PROGRAMS["attention"]
    args = make_inputs(specs, np.random.default_rng(zlib.crc32(b"attention")))
    expected = np.asarray(jax.jit(fn)(*args))
    (reference,) = _f64_reference(fn, args)
    (bound,) = rounding_error_bound(fn, args)
    tol = dict(rtol=1e-4, atol=1e-5)
    # An implementation that rounds differently: 0.9 of the bound away from the float64 result on
    # the element where JAX is closest to it, beyond rtol/atol of JAX there. The per-element
    # "no worse than JAX" rule rejected exactly this; it is a correct float32 result.
    k = np.argmax(bound / (tol["atol"] + tol["rtol"] * np.abs(expected)))
    actual = expected.copy()
    actual.flat[k] = np.float32(reference.flat[k] + 0.9 * bound.flat[k])
    assert not np.isclose(actual.flat[k], expected.flat[k], **tol)
    _assert_within_error_bound(actual, expected, reference, bound, tol, "output 0")
    # Three times the bound away: no correct float32 evaluation gets there.
    actual.flat[k] = np.float32(reference.flat[k] + 3 * bound.flat[k])
    with pytest.raises(AssertionError, match="1 of 1024 elements"):
        _assert_within_error_bound(actual, expected, reference, bound, tol, "output 0")
    actual.flat[k] = np.nan
    with pytest.raises(AssertionError):
        _assert_within_error_bound(actual, expected, reference, bound, tol, "output 0")
