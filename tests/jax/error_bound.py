"""A first-order bound on the rounding error of any float32 evaluation of a JAX program.

An implementation that rounds each op's result to float32 (|relative error| <= u = 2**-24 for an
elementwise op, a constant or a library function, up to n*u*sum|terms| for a dot product, a
convolution or a sum of n terms) computes y + sum_j dy/dv_j * e_j, to first order, where e_j is
the rounding error of intermediate value v_j. The bound on output element k is

    bound_k = u * sum_j |dy_k/dv_j| * m_j,   m_j = |v_j| (one rounding) or n * sum|terms| (a sum),

evaluated in float64 on the program's own inputs: the linearised running-error analysis of
Higham's "Accuracy and Stability of Numerical Algorithms" (ch. 3), done by automatic
differentiation. It depends only on the float64 result and the magnitudes of the terms, not on
which summation order or fusion another implementation happened to use, so two correct float32
implementations both stay inside it while either may be far more accurate than the other on one
element (XLA's CPU fusions contract a multiply and a subtract into one FMA, for instance, which
skips a rounding of a large intermediate that the op-by-op program rounds).
"""

import numpy as np

import jax
import jax.numpy as jnp
from jax import lax
from jax.extend import core as jcore

UNIT_ROUNDOFF = 2.0**-24  # float32

# Primitives whose result is exact: it is one of the operands' values, a rearrangement of them or
# a boolean. Everything else not named below rounds once, relative to its result.
_EXACT = {
    "abs", "neg", "max", "min", "reduce_max", "reduce_min", "argmax", "argmin", "sign", "floor", "ceil",
    "round", "broadcast_in_dim", "reshape", "transpose", "squeeze", "expand_dims", "slice", "dynamic_slice",
    "dynamic_update_slice", "concatenate", "pad", "select_n", "gather", "rev", "copy", "copy_p", "iota",
    "stop_gradient", "sort", "eq", "ne", "lt", "le", "gt", "ge", "and", "or", "not", "xor", "split",
    "is_finite", "clamp",
}
# Sub-programs whose body is evaluated in place (their equations are perturbed like any other).
_CALLS = {"pjit": "jaxpr", "jit": "jaxpr", "closed_call": "call_jaxpr", "custom_jvp_call": "call_jaxpr",
          "custom_vjp_call": "call_jaxpr", "custom_vjp_call_jaxpr": "fun_jaxpr", "remat": "jaxpr",
          "checkpoint": "jaxpr"}


def _is_float(x):
    return jnp.issubdtype(jnp.result_type(x), jnp.floating)


def _sum_magnitude(eqn, invals):
    """n * sum|terms| for the ops that add n terms, else None."""
    name = eqn.primitive.name
    if name == "dot_general":
        (contract_lhs, _), _ = eqn.params["dimension_numbers"]
        n = int(np.prod([invals[0].shape[d] for d in contract_lhs])) if contract_lhs else 1
        params = dict(eqn.params, preferred_element_type=None)
        return n * lax.dot_general_p.bind(jnp.abs(invals[0]), jnp.abs(invals[1]), **params)
    if name == "conv_general_dilated":
        rhs = invals[1]
        spec = eqn.params["dimension_numbers"].rhs_spec  # (out feature, in feature, spatial...)
        n = int(np.prod([rhs.shape[d] for d in spec[1:]]))
        params = dict(eqn.params, preferred_element_type=None)
        return n * lax.conv_general_dilated_p.bind(jnp.abs(invals[0]), jnp.abs(rhs), **params)
    if name == "reduce_sum":
        n = int(np.prod([invals[0].shape[a] for a in eqn.params["axes"]]))
        return n * lax.reduce_sum_p.bind(jnp.abs(invals[0]), **eqn.params)
    if name == "cumsum":
        n = invals[0].shape[eqn.params["axis"]]
        return n * lax.cumsum_p.bind(jnp.abs(invals[0]), **eqn.params)
    return None


class _Perturbed:
    """Evaluates a jaxpr with each rounded value v_j replaced by v_j + eps_j * m_j, eps taken in
    order from one flat vector (a dry run with eps=None counts how many are needed)."""

    def __init__(self, eps):
        self.eps = eps
        self.used = 0

    def perturb(self, value, magnitude):
        n = int(np.prod(value.shape))
        if self.eps is not None:
            delta = self.eps[self.used:self.used + n].reshape(value.shape)
            # Infinities (a -inf init of a max) are exact and carry no rounding error.
            magnitude = jnp.where(jnp.isfinite(value) & jnp.isfinite(magnitude), magnitude, 0)
            value = value + delta * lax.stop_gradient(magnitude)
        self.used += n
        return value

    def run(self, jaxpr, consts, args):
        env = {}

        def constant(val):
            # A constant's float32 spelling is off by exactly |v - float32(v)|: u times that / u.
            val = jnp.asarray(val)
            if not _is_float(val):
                return val
            return self.perturb(val, jnp.abs(val - val.astype(jnp.float32).astype(val.dtype)) / UNIT_ROUNDOFF)

        def read(v):
            if isinstance(v, jcore.Literal):
                return constant(jnp.asarray(v.val, dtype=v.aval.dtype))
            return env[v]

        for var, val in zip(jaxpr.constvars, consts):
            env[var] = constant(val)
        for var, val in zip(jaxpr.invars, args):
            env[var] = val
        for eqn in jaxpr.eqns:
            invals = [read(v) for v in eqn.invars]
            name = eqn.primitive.name
            if name in _CALLS:
                sub = eqn.params[_CALLS[name]]
                closed = sub if hasattr(sub, "consts") else jcore.ClosedJaxpr(sub, ())
                outs = self.run(closed.jaxpr, closed.consts, invals[len(invals) - len(closed.jaxpr.invars):])
            elif name == "stop_gradient":
                outs = invals  # the identity: errors flow through it like through any value
            else:
                outs = eqn.primitive.bind(*invals, **eqn.params)
                outs = list(outs) if eqn.primitive.multiple_results else [outs]
                magnitude = _sum_magnitude(eqn, invals)
                for i, out in enumerate(outs):
                    if not _is_float(out) or name in _EXACT:
                        continue
                    outs[i] = self.perturb(out, jnp.abs(out) if magnitude is None else magnitude)
            for var, val in zip(eqn.outvars, outs):
                env[var] = val
        return [read(v) for v in jaxpr.outvars]


def rounding_error_bound(fn, args):
    """Per output of `fn`, the first-order float32 rounding-error bound of each element (module
    docstring), computed in float64 with float32 inputs widened. Inputs are exact: they are the
    same float32 values for every implementation."""
    wide = [a.astype(np.float64) if a.dtype == np.float32 else a for a in args]
    with jax.enable_x64(True):
        closed = jax.make_jaxpr(fn)(*wide)
        counter = _Perturbed(None)
        counter.run(closed.jaxpr, closed.consts, [jnp.asarray(a) for a in wide])

        def outputs(eps):
            return _Perturbed(eps).run(closed.jaxpr, closed.consts, [jnp.asarray(a) for a in wide])

        eps0 = jnp.zeros((counter.used,), jnp.float64)
        jacobians = jax.jacrev(outputs)(eps0)
        return [np.asarray(UNIT_ROUNDOFF * jnp.abs(j).reshape(j.shape[:-1] + (-1,)).sum(-1)) for j in jacobians]
