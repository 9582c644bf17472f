"""Optimizer update programs (warpforge.optimizers) against torch.optim: random parameters and
fresh random gradients every step, 5 steps, parameters and state compared after every step
(float32, rtol 1e-6, atol 1e-7)."""

import pytest
import torch

from helpers import run_mlir
from warpforge.optimizers import (UnsupportedOptimizerError, describe_optimizer, describe_schedule, initial_state,
                                  linear_warmup_decay, lr_at, optimizer_program, torch_state)

torch.set_num_threads(2)
RTOL, ATOL = 1e-6, 1e-7
STEPS = 5
WORST = {}


def _params():
    g = torch.Generator().manual_seed(0)
    shapes = {"a.weight": (4, 3), "a.bias": (4,), "b.weight": (2, 4), "b.scale": ()}
    return {n: torch.nn.Parameter(torch.randn(s, generator=g)) for n, s in shapes.items()}


def _close(actual, expected, what):
    diff = (actual.double() - expected.double()).abs()
    bound = ATOL + RTOL * expected.double().abs()
    excess = float((diff - bound).max())
    assert (diff <= bound).all(), f"{what}: max abs {float(diff.max()):.3g}, max excess {excess:.3g}"
    return float(diff.max()), float((diff / expected.double().abs().clamp_min(1e-30)).max())


def run_optimizer(tmp_path, make_opt, groups_of, clip=None, scheduler=None, steps=STEPS):
    """Steps a torch optimizer and the emitted program side by side; returns the worst errors."""
    params = _params()
    names = {id(p): n for n, p in params.items()}
    opt = make_opt(groups_of(params))
    sched = scheduler(opt) if scheduler else None
    spec = describe_optimizer(opt, names, grad_clip=clip)
    schedule = describe_schedule(sched, opt)
    mlir = tmp_path / "optimizer.mlir"
    mlir.write_text(optimizer_program(spec))
    ours = {n: p.detach().clone() for n, p in params.items()}
    state = initial_state(spec)
    del state["step"]
    g = torch.Generator().manual_seed(1)
    worst = [0.0, 0.0]
    for step in range(1, steps + 1):
        grads = {n: torch.randn(p.shape, generator=g) for n, p in params.items()}
        lrs = lr_at(schedule, step)
        assert lrs == pytest.approx([group["lr"] for group in opt.param_groups], rel=1e-12, abs=0)
        inputs = {**ours, **{f"grad.{n}": t for n, t in grads.items()}, **state,
                  "step": torch.tensor(step, dtype=torch.int64), "lr": torch.tensor(lrs, dtype=torch.float32)}
        res = run_mlir(mlir, inputs, tmp_path / f"step{step}")
        for p in spec.params:
            params[p.name].grad = grads[p.name].clone()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_([params[p.name] for p in spec.params], clip)
        opt.step()
        if sched:
            sched.step()
        n = len(spec.params)
        ours = {p.name: res[i] for i, p in enumerate(spec.params)}
        state = dict(zip(spec.state_names, res[n:]))
        expected_state = torch_state(spec, opt, params)
        for name in ours:
            e = _close(ours[name], params[name].detach(), f"step {step} param {name}")
            worst = [max(worst[0], e[0]), max(worst[1], e[1])]
        for name in state:
            e = _close(state[name], expected_state[name], f"step {step} state {name}")
            worst = [max(worst[0], e[0]), max(worst[1], e[1])]
    return worst


def _one_group(params):
    return list(params.values())


def _two_groups(params):
    decay = [p for n, p in params.items() if n.endswith("weight")]
    rest = [p for n, p in params.items() if not n.endswith("weight")]
    return [{"params": decay}, {"params": rest, "weight_decay": 0.0, "lr": 0.05}]


SGD_CASES = {
    "plain": dict(lr=0.1),
    "momentum": dict(lr=0.1, momentum=0.9),
    "dampening_wd": dict(lr=0.05, momentum=0.8, dampening=0.3, weight_decay=0.01),
    "nesterov": dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-3),
    "maximize": dict(lr=0.1, momentum=0.5, maximize=True, weight_decay=0.1),
}


@pytest.mark.parametrize("case", list(SGD_CASES))
def test_sgd(tmp_path, case):
    kw = SGD_CASES[case]
    WORST[f"sgd-{case}"] = run_optimizer(tmp_path, lambda ps: torch.optim.SGD(ps, **kw), _one_group)


ADAM_CASES = {
    "adamw": (torch.optim.AdamW, dict(lr=1e-2, weight_decay=0.01)),
    "adamw_amsgrad_betas": (torch.optim.AdamW, dict(lr=3e-3, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.1,
                                                   amsgrad=True)),
    "adamw_maximize": (torch.optim.AdamW, dict(lr=1e-2, maximize=True)),
    "adam_l2": (torch.optim.Adam, dict(lr=1e-2, weight_decay=0.05)),
    "adam_amsgrad": (torch.optim.Adam, dict(lr=1e-2, amsgrad=True)),
}


@pytest.mark.parametrize("case", list(ADAM_CASES))
def test_adam(tmp_path, case):
    cls, kw = ADAM_CASES[case]
    WORST[case] = run_optimizer(tmp_path, lambda ps: cls(ps, **kw), _one_group)


def test_adamw_two_groups_linear_warmup(tmp_path):
    WORST["adamw-groups-warmup"] = run_optimizer(
        tmp_path, lambda ps: torch.optim.AdamW(ps, lr=1e-2, weight_decay=0.1), _two_groups,
        scheduler=lambda o: linear_warmup_decay(o, 2, 6))


def test_sgd_two_groups_steplr_clip(tmp_path):
    WORST["sgd-groups-steplr-clip"] = run_optimizer(
        tmp_path, lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=1e-2), _two_groups,
        clip=0.5, scheduler=lambda o: torch.optim.lr_scheduler.StepLR(o, step_size=2, gamma=0.5))


def test_adamw_clip_multistep(tmp_path):
    WORST["adamw-clip-multistep"] = run_optimizer(
        tmp_path, lambda ps: torch.optim.AdamW(ps, lr=1e-2), _one_group, clip=1.0,
        scheduler=lambda o: torch.optim.lr_scheduler.MultiStepLR(o, milestones=[1, 3], gamma=0.3))


def test_transformers_schedule_is_recognised():
    transformers = pytest.importorskip("transformers")
    opt = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(2))], lr=1e-3)
    sched = transformers.get_linear_schedule_with_warmup(opt, num_warmup_steps=3, num_training_steps=10)
    desc = describe_schedule(sched, opt)
    assert desc == {"kind": "linear_warmup_decay", "base_lrs": [1e-3], "num_warmup_steps": 3, "num_training_steps": 10}
    for step in range(1, 12):
        assert lr_at(desc, step) == pytest.approx([opt.param_groups[0]["lr"]], rel=1e-12, abs=0)
        opt.step()
        sched.step()


def test_unsupported_optimizer_is_named():
    p = torch.nn.Parameter(torch.zeros(2))
    with pytest.raises(UnsupportedOptimizerError, match="torch.optim.rmsprop.RMSprop"):
        describe_optimizer(torch.optim.RMSprop([p]), {id(p): "p"})


def test_report_worst_errors():
    for k, (a, r) in sorted(WORST.items()):
        print(f"{k}: max abs {a:.3g} max rel {r:.3g}")
