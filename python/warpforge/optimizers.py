"""Optimizer update programs in StableHLO, emitted from a PyTorch optimizer object, and learning
rate schedules read from a `torch.optim.lr_scheduler` object (docs/training.md).

The update function is

    @optimizer_update(params..., grads..., state..., step: tensor<i64>, lr: tensor<Gxf32>)
        -> (new params..., new state...)

`step` is the number of the update being made (1 for the first), `lr` holds the learning rate of
each of the optimizer's G param groups for this step (the trainer evaluates the schedule). The
arithmetic follows torch.optim's single-tensor algorithms (torch/optim/sgd.py, adam.py) op by op:
tensor math in float32, scalar hyper-parameter math (bias corrections, step size) in float64 as
Python does it, each scalar rounded to float32 where PyTorch's kernels round it."""

from __future__ import annotations

import bisect
import functools
from dataclasses import dataclass

import torch

from .mlir import Builder, TensorType, Value

F32, F64, I64 = "f32", "f64", "i64"


class UnsupportedOptimizerError(TypeError):
    """The optimizer (or scheduler) class, or one of its settings, has no update program."""


# ---- optimizer description ---------------------------------------------------------------------

@dataclass
class ParamInfo:
    name: str
    shape: tuple
    group: int


@dataclass
class OptimizerSpec:
    kind: str  # "sgd", "adam", "adamw"
    torch_class: str
    groups: list  # hyper-parameters per param group (no "params"), plus "params": names
    params: list  # ParamInfo, in update-program order (group by group)
    slots: list  # state slot names per parameter, e.g. ["exp_avg", "exp_avg_sq"]
    grad_clip: dict | None = None

    @property
    def state_names(self) -> list:
        """State tensor names in program order: every slot of the first parameter, then the next."""
        return [f"{slot}.{p.name}" for p in self.params for slot in self.slots]

    def manifest(self) -> dict:
        return {
            "kind": self.kind,
            "torch_class": self.torch_class,
            "param_groups": self.groups,
            "state_slots": self.slots,
            "state": [{"name": f"{slot}.{p.name}", "param": p.name, "slot": slot, "shape": list(p.shape),
                       "dtype": "f32"} for p in self.params for slot in self.slots],
            "grad_clip": self.grad_clip,
        }


_SGD_KEYS = ("lr", "momentum", "dampening", "nesterov", "weight_decay", "maximize")
_ADAM_KEYS = ("lr", "betas", "eps", "weight_decay", "amsgrad", "maximize")


def describe_optimizer(optimizer, param_names: dict, grad_clip=None) -> OptimizerSpec:
    """The optimizer's kind, hyper-parameters per param group and state layout. `param_names` maps
    id(parameter) -> name. grad_clip: None, a max norm, or {"max_norm": x, "norm_type": 2.0}."""
    cls = type(optimizer)
    if cls is torch.optim.SGD:
        kind, keys = "sgd", _SGD_KEYS
    elif cls is torch.optim.AdamW:
        kind, keys = "adamw", _ADAM_KEYS
    elif cls is torch.optim.Adam:
        kind, keys = "adam", _ADAM_KEYS
    else:
        raise UnsupportedOptimizerError(
            f"optimizer {cls.__module__}.{cls.__qualname__} has no WarpForge update program "
            "(supported: torch.optim.SGD, torch.optim.Adam, torch.optim.AdamW)")
    groups, params = [], []
    for gi, group in enumerate(optimizer.param_groups):
        hp = {}
        for k in keys:
            v = group[k]
            if isinstance(v, torch.Tensor):
                raise UnsupportedOptimizerError(f"param group {gi}: {k} is a tensor; give it as a Python number")
            hp[k] = list(v) if isinstance(v, tuple) else v
        if kind == "adamw" or (kind == "adam" and group.get("decoupled_weight_decay", False)):
            hp["decoupled_weight_decay"] = True
        elif kind == "adam":
            hp["decoupled_weight_decay"] = False
        for k in ("capturable", "differentiable", "fused"):
            if group.get(k):
                raise UnsupportedOptimizerError(f"param group {gi}: {k}=True is not supported")
        if kind == "sgd" and hp["nesterov"] and (hp["momentum"] <= 0 or hp["dampening"] != 0):
            raise UnsupportedOptimizerError("Nesterov momentum requires a momentum and zero dampening")
        names = []
        for p in group["params"]:
            if id(p) not in param_names:
                raise ValueError(f"param group {gi} holds a tensor of shape {list(p.shape)} that is not a "
                                 "parameter of the model")
            if p.dtype != torch.float32:
                raise UnsupportedOptimizerError(f"parameter {param_names[id(p)]!r} is {p.dtype}; update programs "
                                                "are float32")
            names.append(param_names[id(p)])
            params.append(ParamInfo(param_names[id(p)], tuple(p.shape), gi))
        hp["params"] = names
        groups.append(hp)
    if kind == "sgd":
        slots = ["momentum_buffer"] if any(g["momentum"] != 0 for g in groups) else []
    else:
        slots = ["exp_avg", "exp_avg_sq"] + (["max_exp_avg_sq"] if any(g["amsgrad"] for g in groups) else [])
    if grad_clip is not None and not isinstance(grad_clip, dict):
        grad_clip = {"max_norm": float(grad_clip), "norm_type": 2.0}
    if grad_clip is not None:
        grad_clip = {"max_norm": float(grad_clip["max_norm"]), "norm_type": float(grad_clip.get("norm_type", 2.0))}
        if grad_clip["norm_type"] != 2.0:
            raise UnsupportedOptimizerError("gradient clipping supports norm_type 2 only")
    return OptimizerSpec(kind, f"{cls.__module__}.{cls.__qualname__}", groups, params, slots, grad_clip)


def initial_state(spec: OptimizerSpec) -> dict:
    """The state before the first step: zeros for every slot (an SGD momentum buffer is replaced by
    the gradient on step 1, as torch does when the buffer is None), and `step` = 0 updates done."""
    state = {}
    for p in spec.params:
        for slot in spec.slots:
            state[f"{slot}.{p.name}"] = torch.zeros(p.shape, dtype=torch.float32)
    state["step"] = torch.tensor(0, dtype=torch.int64)
    return state


def torch_state(spec: OptimizerSpec, optimizer, params_by_name: dict) -> dict:
    """The state of a torch optimizer in the layout of `spec` (for goldens and tests)."""
    out = {}
    for p in spec.params:
        st = optimizer.state.get(params_by_name[p.name], {})
        for slot in spec.slots:
            v = st.get(slot)
            out[f"{slot}.{p.name}"] = (v.detach().clone() if v is not None
                                       else torch.zeros(p.shape, dtype=torch.float32))
    return out


# ---- StableHLO emission ------------------------------------------------------------------------

class _Emitter:
    def __init__(self):
        self.b = Builder()

    def arg(self, name: str, shape, dtype: str) -> Value:
        return Value(self.b.reserve(name), TensorType(tuple(shape), dtype))

    def const(self, x, dtype: str) -> Value:
        return self.b.constant(x, dtype)

    def op(self, name: str, *xs, type_=None, attrs: str = "") -> Value:
        return self.b.op(f"stablehlo.{name}", list(xs), type_ or xs[0].type, attrs)

    def convert(self, x: Value, dtype: str) -> Value:
        return x if x.type.dtype == dtype else self.op("convert", x, type_=x.type.with_dtype(dtype))

    def bcast(self, s: Value, like: Value) -> Value:
        if s.type.shape == like.type.shape:
            return s
        return self.op("broadcast_in_dim", s, type_=like.type.with_dtype(s.type.dtype),
                       attrs="broadcast_dimensions = array<i64>")

    # tensor (op) scalar, with the scalar as a 0-d f32 value or a Python number rounded to f32
    def _s(self, s, like: Value) -> Value:
        if not isinstance(s, Value):
            s = self.const(s, like.type.dtype)
        return self.bcast(s, like)

    def add(self, x, y):
        return self.op("add", x, y)

    def sub(self, x, y):
        return self.op("subtract", x, y)

    def mul(self, x, y):
        return self.op("multiply", x, y)

    def div(self, x, y):
        return self.op("divide", x, y)

    def smul(self, x: Value, s) -> Value:
        return self.mul(x, self._s(s, x))

    def sdiv(self, x: Value, s) -> Value:
        return self.div(x, self._s(s, x))

    def sadd(self, x: Value, s) -> Value:
        return self.add(x, self._s(s, x))

    def scalar_at(self, vec: Value, i: int) -> Value:
        sl = self.op("slice", vec, type_=TensorType((1,), vec.type.dtype),
                     attrs=f"start_indices = array<i64: {i}>, limit_indices = array<i64: {i + 1}>, "
                           "strides = array<i64: 1>")
        return self.op("reshape", sl, type_=TensorType((), vec.type.dtype))

    def render(self, fname: str, args: list, results: list, result_names: list | None = None) -> str:
        def q(s):
            return '"' + s + '"'
        sig = ",\n    ".join(f"{a}: {a.type} {{mhlo.name = {q(a.name)}}}" for a in args)
        res = ", ".join(str(r.type) for r in results)
        lines = ["module @optimizer {", f"  func.func public @{fname}(\n    {sig}) -> ({res}) {{"]
        lines += [o.render("    ") for o in self.b.ops]
        lines.append(f"    func.return {', '.join(str(r) for r in results)} : {res}")
        lines += ["  }", "}"]
        return "\n".join(lines) + "\n"


def optimizer_program(spec: OptimizerSpec) -> str:
    """The StableHLO text of `@optimizer_update` for `spec` (see the module docstring)."""
    e = _Emitter()
    P = [e.arg(p.name, p.shape, F32) for p in spec.params]
    G = [e.arg(f"grad.{p.name}", p.shape, F32) for p in spec.params]
    S = [e.arg(n, spec.params[i // max(1, len(spec.slots))].shape, F32) for i, n in enumerate(spec.state_names)]
    step = e.arg("step", (), I64)
    lrs = e.arg("lr", (len(spec.groups),), F32)
    nslots = len(spec.slots)

    grads = list(G)
    if spec.grad_clip is not None:
        grads = _clip(e, grads, spec.grad_clip["max_norm"])

    step64 = e.convert(step, F64)
    one_i = e.const(1, I64)
    first = e.op("compare", step, one_i, type_=TensorType((), "i1"),
                 attrs="comparison_direction = #stablehlo<comparison_direction EQ>")
    lr32 = [e.scalar_at(lrs, g) for g in range(len(spec.groups))]
    lr64 = [e.convert(v, F64) for v in lr32]
    per_group = {}
    new_p, new_s = [], []
    for i, p in enumerate(spec.params):
        hp = spec.groups[p.group]
        state = S[i * nslots:(i + 1) * nslots]
        if spec.kind == "sgd":
            np_, ns = _sgd(e, hp, P[i], grads[i], state, first, lr32[p.group])
        else:
            if p.group not in per_group:
                per_group[p.group] = _adam_scalars(e, hp, step64, lr64[p.group])
            np_, ns = _adam(e, hp, P[i], grads[i], state, spec.slots, per_group[p.group])
        new_p.append(np_)
        new_s += ns
    return e.render("optimizer_update", P + G + S + [step, lrs], new_p + new_s)


def _clip(e: _Emitter, grads: list, max_norm: float) -> list:
    """torch.nn.utils.clip_grad_norm_ (norm_type 2): the norm of the per-tensor norms, each a
    float32 value (summed here in float64), clip_coef = max_norm * reciprocal(total + 1e-6)
    clamped to 1, every gradient multiplied by it."""
    norms = []
    for g in grads:
        g64 = e.convert(g, F64)
        sq = e.mul(g64, g64)
        rank = g.type.rank
        zero = e.const(0.0, F64)
        region = e.b.scalar_region("stablehlo.add", F64)
        s = e.b.op("stablehlo.reduce", [sq, zero], TensorType((), F64),
                   f"dimensions = array<i64{': ' + ', '.join(map(str, range(rank))) if rank else ''}>", region)
        norms.append(e.convert(e.op("sqrt", s), F32))
    total = None
    for n in norms:
        n64 = e.convert(n, F64)
        sq = e.mul(n64, n64)
        total = sq if total is None else e.add(total, sq)
    total = e.convert(e.op("sqrt", total), F32)
    denom = e.add(total, e.const(1e-6, F32))
    coef = e.mul(e.div(e.const(1.0, F32), denom), e.const(max_norm, F32))
    coef = e.op("minimum", coef, e.const(1.0, F32))
    return [e.mul(g, e.bcast(coef, g)) for g in grads]


def _sgd(e: _Emitter, hp: dict, p: Value, g: Value, state: list, first: Value, lr32: Value):
    if hp["maximize"]:
        g = e.op("negate", g)
    if hp["weight_decay"] != 0:
        g = e.add(g, e.smul(p, hp["weight_decay"]))  # grad.add(param, alpha=weight_decay)
    new_state = []
    if state:
        buf = state[0]
        if hp["momentum"] != 0:
            upd = e.smul(buf, hp["momentum"])  # buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            upd = e.add(upd, e.smul(g, 1 - hp["dampening"]))
            buf = e.op("select", e.bcast(first, g), g, upd, type_=g.type)  # step 1: buf = clone(grad)
            g = e.add(g, e.smul(buf, hp["momentum"])) if hp["nesterov"] else buf
        new_state.append(buf)
    neg_lr = e.op("negate", lr32)
    return e.add(p, e.smul(g, neg_lr)), new_state  # param.add_(grad, alpha=-lr)


def _adam_scalars(e: _Emitter, hp: dict, step64: Value, lr64: Value) -> dict:
    beta1, beta2 = hp["betas"]
    one = e.const(1.0, F64)
    bc1 = e.sub(one, e.op("power", e.const(beta1, F64), step64))
    bc2 = e.sub(one, e.op("power", e.const(beta2, F64), step64))
    out = {
        "neg_step_size": e.convert(e.op("negate", e.div(lr64, bc1)), F32),  # value=-step_size
        "bc2_sqrt": e.convert(e.op("sqrt", bc2), F32),
    }
    if hp["weight_decay"] != 0 and hp["decoupled_weight_decay"]:
        out["decay"] = e.convert(e.sub(one, e.mul(lr64, e.const(hp["weight_decay"], F64))), F32)
    return out


def _adam(e: _Emitter, hp: dict, p: Value, g: Value, state: list, slots: list, sc: dict):
    beta1, beta2 = hp["betas"]
    m, v = state[0], state[1]
    if hp["maximize"]:
        g = e.op("negate", g)
    if hp["weight_decay"] != 0:
        if hp["decoupled_weight_decay"]:
            p = e.smul(p, sc["decay"])  # param.mul_(1 - lr * weight_decay)
        else:
            g = e.add(g, e.smul(p, hp["weight_decay"]))  # grad.add(param, alpha=weight_decay)
    # exp_avg.lerp_(grad, 1 - beta1), ATen's lerp: weight rounded to float32 first
    w = float(torch.tensor(1 - beta1, dtype=torch.float32))
    if abs(w) < 0.5:
        m = e.add(m, e.smul(e.sub(g, m), w))
    else:
        m = e.sub(g, e.smul(e.sub(g, m), float(torch.tensor(1.0, dtype=torch.float32) - w)))
    # exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    v = e.add(e.smul(v, beta2), e.mul(e.smul(g, 1 - beta2), g))
    new_state = [m, v]
    src = v
    if "max_exp_avg_sq" in slots:
        vmax = state[2]
        if hp["amsgrad"]:
            vmax = e.op("maximum", vmax, v)
            src = vmax
        new_state.append(vmax)
    denom = e.sadd(e.sdiv(e.op("sqrt", src), sc["bc2_sqrt"]), hp["eps"])
    # param.addcdiv_(exp_avg, denom, value=-step_size): param + value * exp_avg / denom
    p = e.add(p, e.div(e.smul(m, sc["neg_step_size"]), denom))
    return p, new_state


# ---- learning-rate schedules -------------------------------------------------------------------

def linear_warmup_decay(optimizer, num_warmup_steps: int, num_training_steps: int, last_epoch: int = -1):
    """A LambdaLR of linear warmup then linear decay to 0, the schedule of
    transformers.get_linear_schedule_with_warmup (which `describe_schedule` also recognises)."""
    fn = functools.partial(_linear_warmup_decay_factor, num_warmup_steps=num_warmup_steps,
                           num_training_steps=num_training_steps)
    return torch.optim.lr_scheduler.LambdaLR(optimizer, fn, last_epoch)


def _linear_warmup_decay_factor(current_step: int, *, num_warmup_steps: int, num_training_steps: int) -> float:
    if current_step < num_warmup_steps:
        return float(current_step) / float(max(1, num_warmup_steps))
    return max(0.0, float(num_training_steps - current_step) / float(max(1, num_training_steps - num_warmup_steps)))


_LINEAR_LAMBDAS = ("_get_linear_schedule_with_warmup_lr_lambda", "_linear_warmup_decay_factor")


def describe_schedule(scheduler, optimizer=None) -> dict:
    """The manifest form of a scheduler: {"kind", "base_lrs" (one per param group), parameters}.
    None is the constant schedule (each group keeps its lr). The scheduler must not have been
    stepped yet."""
    if scheduler is None:
        return {"kind": "constant", "base_lrs": [float(g["lr"]) for g in optimizer.param_groups]}
    sch = torch.optim.lr_scheduler
    cls = type(scheduler)
    if getattr(scheduler, "last_epoch", 0) != 0:
        raise ValueError(f"{cls.__name__} has been stepped {scheduler.last_epoch} times; export before training")
    base = [float(x) for x in scheduler.base_lrs]
    if cls is sch.StepLR:
        return {"kind": "step", "base_lrs": base, "step_size": int(scheduler.step_size),
                "gamma": float(scheduler.gamma)}
    if cls is sch.MultiStepLR:
        milestones = sorted(int(m) for m in scheduler.milestones.elements())
        return {"kind": "multistep", "base_lrs": base, "milestones": milestones, "gamma": float(scheduler.gamma)}
    if cls is sch.LambdaLR:
        params = []
        for fn in scheduler.lr_lambdas:
            if not (isinstance(fn, functools.partial) and getattr(fn.func, "__name__", "") in _LINEAR_LAMBDAS
                    and set(fn.keywords) == {"num_warmup_steps", "num_training_steps"} and not fn.args):
                raise UnsupportedOptimizerError(
                    f"LambdaLR with lambda {fn!r}: only the linear warmup + linear decay lambda of "
                    "transformers.get_linear_schedule_with_warmup (or warpforge.linear_warmup_decay) is supported")
            params.append((int(fn.keywords["num_warmup_steps"]), int(fn.keywords["num_training_steps"])))
        if len(set(params)) != 1:
            raise UnsupportedOptimizerError("LambdaLR with different warmup lambdas per param group")
        return {"kind": "linear_warmup_decay", "base_lrs": base, "num_warmup_steps": params[0][0],
                "num_training_steps": params[0][1]}
    raise UnsupportedOptimizerError(
        f"lr scheduler {cls.__module__}.{cls.__qualname__} is not supported "
        "(supported: none, StepLR, MultiStepLR, LambdaLR of linear warmup + decay)")


def lr_at(schedule: dict, step: int) -> list:
    """The learning rate of every param group for update number `step` (1 for the first update),
    as PyTorch computes it: the lr the optimizer holds after `step - 1` scheduler.step() calls."""
    if step < 1:
        raise ValueError("steps count from 1")
    k = step - 1  # scheduler epoch
    kind = schedule["kind"]
    base = schedule["base_lrs"]
    if kind == "constant":
        return list(base)
    if kind == "step":
        return [b * schedule["gamma"] ** (k // schedule["step_size"]) for b in base]
    if kind == "multistep":
        return [b * schedule["gamma"] ** bisect.bisect_right(schedule["milestones"], k) for b in base]
    if kind == "linear_warmup_decay":
        f = _linear_warmup_decay_factor(k, num_warmup_steps=schedule["num_warmup_steps"],
                                        num_training_steps=schedule["num_training_steps"])
        return [b * f for b in base]
    raise ValueError(f"unknown schedule kind {kind!r}")


__all__ = ["OptimizerSpec", "UnsupportedOptimizerError", "describe_optimizer", "optimizer_program", "initial_state",
           "torch_state", "describe_schedule", "lr_at", "linear_warmup_decay"]
