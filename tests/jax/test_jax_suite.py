"""Runs every program of programs.py on WarpForge and compares with JAX's own CPU result.

JAX is an independent StableHLO producer: each program is lowered with
`jax.jit(f).lower(*args).as_text()`, run with `warpforge run` on fresh random inputs, and compared
with `jax.jit(f)(*args)`. The printed text of each module must also round-trip through
`warpforge print` (parse -> print -> parse -> print gives identical text).
"""

import os
import pathlib
import subprocess
import sys
import zlib

import jax
import ml_dtypes
import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from error_bound import rounding_error_bound  # noqa: E402
from programs import PROGRAMS, make_inputs  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
WARPFORGE = os.environ.get("WARPFORGE", str(REPO / "build" / "warpforge"))

# fp32 tolerances from the project's test plan; bf16/f16 programs allow a couple of ulps of the
# narrow type (JAX and WarpForge may round intermediate results differently).
TOLERANCES = {
    "elementwise": dict(rtol=1e-5, atol=1e-6),
    "reduction": dict(rtol=1e-4, atol=1e-5),
    "exact": None,
    "low": dict(rtol=2e-2, atol=2e-2),
}


def _needs_x64(specs):
    return any(np.dtype(s["dtype"]).itemsize == 8 for s in specs)


def _lower_and_run_jax(fn, args, x64):
    with jax.enable_x64(x64):
        text = jax.jit(fn).lower(*args).as_text()
        expected = [np.asarray(leaf) for leaf in jax.tree.leaves(jax.jit(fn)(*args))]
    return text, expected


def _run_warpforge(mlir_path, inputs, workdir):
    cmd = [WARPFORGE, "run", str(mlir_path), "--output-dir", str(workdir / "out")]
    for i, array in enumerate(inputs):
        path = workdir / f"in{i}.npy"
        np.save(path, array)
        cmd += ["--input", f"{i}={path}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"warpforge run failed:\n{proc.stderr}"
    outputs = []
    i = 0
    while (workdir / "out" / f"out{i}.npy").exists():
        outputs.append(np.load(workdir / "out" / f"out{i}.npy"))
        i += 1
    return outputs


def _f64_reference(fn, args):
    """The same program in float64 (x64 on, float32 inputs widened), for ill-conditioned outputs."""
    wide = [a.astype(np.float64) if a.dtype == np.float32 else a for a in args]
    with jax.enable_x64(True):
        return [np.asarray(leaf) for leaf in jax.tree.leaves(jax.jit(fn)(*wide))]


def _assert_within_error_bound(actual, expected, reference, bound, tol, what):
    """Elements outside rtol/atol of JAX's float32 result pass only where WarpForge's error against
    the float64 result is within twice the first-order float32 rounding-error bound of the program
    (error_bound.py; twice, since library functions such as exp are within one ulp, not half).
    Comparing with JAX's own error element by element would not be sound: where the program is
    ill-conditioned (a softmax of large scores, a sum that cancels), JAX's fusions may skip a
    rounding that the op-by-op program performs and be far luckier on one element. The bound is
    checked on JAX's own result too, so a bound too tight to hold fails here, not silently."""
    ref = reference.astype(np.float64)
    limit = 2 * bound
    jax_err = np.abs(expected.astype(np.float64) - ref)
    assert (jax_err <= limit).all(), (
        f"{what}: the error bound is violated by JAX itself (max error {jax_err.max():.3g}, "
        f"bound there {limit.flat[np.argmax(jax_err - limit)]:.3g}): error_bound.py misses a rounding")
    bad = ~np.isclose(actual, expected, **tol)
    err = np.abs(actual.astype(np.float64) - ref)
    over = bad & ~(err <= limit)
    assert not over.any() and np.isfinite(actual).all(), (
        f"{what}: {int(over.sum())} of {actual.size} elements differ from JAX beyond rtol={tol['rtol']} "
        f"atol={tol['atol']} and from the float64 result beyond twice the float32 rounding-error bound "
        f"(worst: error {err[over].max() if over.any() else 0:.3g}, bound {limit[over].min() if over.any() else 0:.3g})")


def _as_comparable(array):
    if array.dtype in (ml_dtypes.bfloat16, np.float16):
        return array.astype(np.float32)
    return array


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_matches_jax(name, tmp_path):
    fn, specs, kind = PROGRAMS[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    x64 = _needs_x64(specs)
    args = make_inputs(specs, rng)
    text, expected = _lower_and_run_jax(fn, args, x64)
    mlir = tmp_path / f"{name}.mlir"
    mlir.write_text(text)

    actual = _run_warpforge(mlir, args, tmp_path)
    assert len(actual) == len(expected), f"{len(actual)} outputs, JAX gave {len(expected)}"
    reference = None
    for i, (a, e) in enumerate(zip(actual, expected)):
        if a.dtype.kind == "V" and e.dtype == ml_dtypes.bfloat16 and a.dtype.itemsize == 2:
            # .npy has no bfloat16 type code: WarpForge writes raw 2-byte records ('|V2').
            a = a.view(ml_dtypes.bfloat16)
        assert a.shape == e.shape, f"output {i}: shape {a.shape} vs JAX {e.shape}"
        assert a.dtype == e.dtype, f"output {i}: dtype {a.dtype} vs JAX {e.dtype}"
        tol = TOLERANCES[kind]
        if tol is None or not np.issubdtype(_as_comparable(e).dtype, np.inexact):
            np.testing.assert_array_equal(a, e, err_msg=f"output {i}")
        elif kind == "reduction" and e.dtype == np.float32 and not np.allclose(a, e, **tol):
            if reference is None:
                reference = _f64_reference(fn, args)
                bounds = rounding_error_bound(fn, args)
            _assert_within_error_bound(a, e, reference[i], bounds[i], tol, f"output {i}")
        else:
            np.testing.assert_allclose(_as_comparable(a), _as_comparable(e), err_msg=f"output {i}", **tol)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_round_trips(name, tmp_path):
    fn, specs, _ = PROGRAMS[name]
    args = make_inputs(specs, np.random.default_rng(0))
    text, _ = _lower_and_run_jax(fn, args, _needs_x64(specs))
    src = tmp_path / "src.mlir"
    src.write_text(text)
    first = subprocess.run([WARPFORGE, "print", str(src)], capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    again = tmp_path / "printed.mlir"
    again.write_text(first.stdout)
    second = subprocess.run([WARPFORGE, "print", str(again)], capture_output=True, text=True, timeout=120)
    assert second.returncode == 0, second.stderr
    assert first.stdout == second.stdout
