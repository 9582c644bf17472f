"""`warpforge.export_training`: a PyTorch model, a loss function and a torch optimizer -> a
WarpForge training package (docs/training.md): the loss program, the optimizer update program,
initial weights and optimizer state, and a golden run of PyTorch itself."""

from __future__ import annotations

import copy
import json
import os
import pathlib
import shutil
import subprocess
import tempfile
import warnings
from types import SimpleNamespace

import torch
import torch.nn.functional as F
from safetensors.torch import save_file
from torch.utils._python_dispatch import TorchDispatchMode

from . import __version__
from .export import decomposition_table, module_symbol, output_vals, weight_tensors
from .lower import lower_program
from .lowering.random import DROPOUT_SWITCH, RNG_ALGORITHM, RNG_STATE
from .optimizers import (UnsupportedOptimizerError, describe_optimizer, describe_schedule, initial_state, lr_at,
                         optimizer_program, torch_state)
from .package import _tensors, write_dir_atomically, write_json

# DESIGN.md's tolerance table, the rows a training run is judged by
TRAINING_TOLERANCES = {
    "loss": {"rtol": 1e-4, "atol": 1e-6},
    "gradients": {"rtol": 1e-3, "atol": 1e-5},
    "weights": {"rtol": 1e-4, "atol": 1e-6},
}

# ops that draw random numbers with torch's generator: refused (dropout has WarpForge's RNG)
_RANDOM_OPS = ("dropout", "bernoulli", "rand", "normal", "uniform", "multinomial", "exponential")
_WARPFORGE_RANDOM_OPS = ("native_dropout",)


class TrainingExportError(ValueError):
    """The model, loss function or optimizer cannot be exported for training; the message says why."""


class _LossModule(torch.nn.Module):
    """`loss_fn(model, *batch)` as a module, so that torch.export sees the model's parameters."""

    def __init__(self, model, loss_fn):
        super().__init__()
        self.model = model
        self.loss_fn = loss_fn

    def forward(self, *batch):
        return self.loss_fn(self.model, *batch)


def _strip(name: str) -> str:
    return name[len("model."):] if name.startswith("model.") else name


def export_training(model: torch.nn.Module, example_batch, loss_fn, out_dir, optimizer, lr_schedule=None,
                    golden_steps: int = 5, grad_clip=None, *, name: str | None = None, batch_names=None,
                    eval_fn=None, eval_batch=None, eval_batch_names=None, eval_output_names=None,
                    warpforge_binary: str | None = None, golden_device: str = "cpu",
                    golden_grads: str = "all", accumulation_steps: int = 1, rng_seed: int = 0,
                    autocast: torch.dtype | None = None, world_size: int | None = None, golden_data=None,
                    golden_seed: int = 0, golden_shuffle: bool = True, single_golden_steps: int | None = None) -> dict:
    """Writes the training package `out_dir` and returns its manifest.

    example_batch: a tensor or a tuple of tensors, passed as `loss_fn(model, *batch)`, which must
        return a scalar floating-point tensor.
    optimizer: a torch.optim.SGD, Adam or AdamW over (some of) the model's parameters; its
        param_groups give the hyper-parameters. lr_schedule: None (constant), or a not yet stepped
        StepLR, MultiStepLR or LambdaLR of linear warmup + decay over that optimizer.
    grad_clip: None, or a max norm for torch.nn.utils.clip_grad_norm_ (norm 2) applied to the
        gradients of the optimized parameters before each update.
    golden_steps: PyTorch runs this many steps on the example batch, from copies of the model,
        optimizer and scheduler (the objects passed in are left as they are).
    eval_fn, eval_batch: the eval program, `eval_fn(model, *eval_batch)` traced in eval mode,
        returning a tensor or a tuple of tensors (e.g. a QA model's start and end logits); its
        weights are the loss program's, by name. eval_batch_names / eval_output_names name them.
    golden_device: where PyTorch runs the golden steps ("cuda" for a model too big for the CPU), in
        true float32 (TF32 off). golden_grads: "all" records every step's gradients, "first" only
        step 1's (a large model's gradients of 20 steps would not fit a package).
    accumulation_steps: K > 1 accumulates gradients over K micro-batches per update, as a PyTorch
        loop calling `(loss_fn(model, *micro) / K).backward()` K times, then `optimizer.step()`:
        example_batch is one whole update's batch, cut into K micro-batches along the first
        dimension, and the programs take one micro-batch.
    warpforge_binary: the `warpforge` executable that writes train_step.mlir (value and grad of
        the loss, then the update, as one function); default: $WARPFORGE, then `warpforge` on
        PATH. Without one the package has no train_step.mlir and the trainer derives it.
    autocast: torch.bfloat16 (or torch.float16) runs loss_fn under
        `torch.autocast(device_type of golden_device, dtype=autocast)`, as a PyTorch AMP loop runs
        its forward and loss; a loss_fn that enters torch.autocast itself is recognised as well.
        The programs carry the casts autocast inserts; parameters and optimizer state stay float32
        (master weights). The golden run is PyTorch's under autocast, and a float64 run of the same
        steps is recorded as the reference that `validate --training` judges both by.
    rng_seed: the key of the RNG state that dropout draws from in training (THREE_FRY; the
        state is carried from step to step and saved in checkpoints).
    world_size, golden_data: also record a data-parallel golden run: PyTorch's
        DistributedDataParallel on `world_size` processes (gloo; nccl for a CUDA golden_device),
        `golden_steps` steps, each rank taking its share of `golden_data` (a dict of the batch
        tensors by batch name, all examples along the first dimension, or the path of the
        safetensors file `warpforge train --data` reads) in `warpforge train`'s order for
        `golden_seed` and `golden_shuffle` (WarpForge's sampler, sharded as DistributedSampler
        shards). Per rank: batches, losses, gradients before the all-reduce, averaged gradients,
        weights and optimizer state (golden/ddp/rank<r>/, manifest `training.golden_ddp`). The
        ranks are forked from this process; loss_fn is called with the DDP wrapper as its model.
    single_golden_steps: with world_size, the steps of the single-process golden run (on the
        example batch, what `validate --training` replays without a job); default golden_steps.
        A large model's package is mostly golden tensors: 1 keeps the single-process run to its
        first step when the data-parallel run is what is being validated.
    The model is traced in train mode. Dropout (nn.Dropout, F.dropout, attention dropout) draws
    its masks from WarpForge's RNG; the golden run is PyTorch's with dropout off, which the
    package's dropout switch reproduces. BatchNorm's running statistics become extra results of
    the loss program."""
    if isinstance(example_batch, torch.Tensor):
        example_batch = (example_batch,)
    batch = tuple(example_batch)
    if not batch or not all(isinstance(x, torch.Tensor) for x in batch):
        raise TypeError("example_batch must be a tensor or a tuple of tensors")
    batch_names = list(batch_names) if batch_names else [f"batch{i}" for i in range(len(batch))]
    if len(batch_names) != len(batch):
        raise ValueError(f"{len(batch_names)} batch names for {len(batch)} batch tensors")
    if golden_steps < 1:
        raise ValueError("golden_steps must be at least 1")
    if single_golden_steps is not None and (world_size is None or not 1 <= single_golden_steps <= golden_steps):
        raise ValueError("single_golden_steps needs world_size and must be between 1 and golden_steps")
    single_steps = golden_steps if single_golden_steps is None else single_golden_steps
    micro_batches = _split_micro_batches(batch, accumulation_steps)
    name = name or type(model).__name__
    if torch.device(golden_device).type == "cuda" and not torch.cuda.is_available():
        raise TrainingExportError(f"golden_device={golden_device!r}: PyTorch finds no CUDA device here")
    traced_loss_fn, loss_fn = _with_autocast(loss_fn, autocast, golden_device)
    _check_padding_rows(model)

    param_names = {}
    for pname, p in model.named_parameters():
        param_names.setdefault(id(p), pname)
    # Tied parameters (GPT-2's lm_head.weight is transformer.wte.weight): one tensor under several
    # names. The loss program may take it once per name; every name but the first is marked
    # `tied_to` the first, and the trainer feeds the first's value to all of them, so the
    # gradient sums every use, as autograd's does.
    tied = {pname: param_names[id(p)] for pname, p in model.named_parameters(remove_duplicate=False)}
    spec = describe_optimizer(optimizer, param_names, grad_clip)
    schedule = describe_schedule(lr_schedule, optimizer)

    # the loss in train mode, on a copy (BatchNorm would update the user's running statistics)
    probe = copy.deepcopy(model).train()
    with torch.no_grad():
        ref = traced_loss_fn(probe, *micro_batches[0])
    if not isinstance(ref, torch.Tensor) or ref.dim() != 0 or not ref.is_floating_point():
        what = (f"a tensor of shape {list(ref.shape)} and dtype {ref.dtype}" if isinstance(ref, torch.Tensor)
                else type(ref).__name__)
        raise TrainingExportError(f"loss_fn must return a scalar floating-point tensor, it returned {what}")

    lowered, ep = _lower_loss(model, traced_loss_fn, micro_batches[0], batch_names, name)
    low = _autocast_dtype(ep, autocast)
    if low is not None and torch.device(golden_device).type != "cpu":
        wider_than_golden = _check_autocast_casts(model, traced_loss_fn, loss_fn, micro_batches[0], golden_device)
    else:
        wider_than_golden = []
    weights = _weight_values(ep, lowered, rng_seed)
    trainable = {p.name for p in spec.params}
    missing = [n for n in trainable if n not in weights]
    if missing:
        raise TrainingExportError(f"optimized parameters missing from the loss program: {missing}")

    # manifest: the loss program
    out_val = output_vals(ep)[0]
    arguments = []
    for i, a in enumerate(lowered.inputs):
        arguments.append({"name": a.name, "argument": i, "kind": "batch", "dtype": a.value.type.dtype,
                          "shape": list(a.value.type.shape)})
    for j, w in enumerate(lowered.weights):
        kind = _ARGUMENT_KINDS.get(w.kind, w.kind)
        entry = {"name": w.name, "argument": len(lowered.inputs) + j, "kind": kind, "dtype": w.value.type.dtype,
                 "shape": list(w.value.type.shape)}
        if kind == "parameter":
            entry["trainable"] = w.name in trainable
            if w.name in tied and tied[w.name] != w.name:
                entry["tied_to"] = tied[w.name]
        arguments.append(entry)
    results = [{"name": "loss", "result": 0, "dtype": lowered.outputs[0].type.dtype, "shape": list(out_val.shape)}]
    for k, bname in enumerate(lowered.mutated_buffers):
        v = lowered.outputs[1 + k]
        results.append({"name": bname, "result": 1 + k, "kind": "buffer_update", "buffer": bname,
                        "dtype": v.type.dtype, "shape": list(v.type.shape)})

    # optimizer program
    opt_text = optimizer_program(spec)
    state0 = initial_state(spec)
    n = len(spec.params)
    opt_args = ([{"name": p.name, "kind": "param", "argument": i} for i, p in enumerate(spec.params)]
                + [{"name": f"grad.{p.name}", "kind": "grad", "param": p.name, "argument": n + i}
                   for i, p in enumerate(spec.params)]
                + [{"name": s, "kind": "state", "argument": 2 * n + i} for i, s in enumerate(spec.state_names)]
                + [{"name": "step", "kind": "step", "argument": 2 * n + len(spec.state_names), "dtype": "i64",
                    "shape": []},
                   {"name": "lr", "kind": "lr", "argument": 2 * n + len(spec.state_names) + 1, "dtype": "f32",
                    "shape": [len(spec.groups)]}])
    opt_results = ([{"name": p.name, "kind": "param", "result": i} for i, p in enumerate(spec.params)]
                   + [{"name": s, "kind": "state", "result": n + i} for i, s in enumerate(spec.state_names)])

    if golden_grads not in ("all", "first"):
        raise ValueError(f"golden_grads must be 'all' or 'first', not {golden_grads!r}")
    golden, golden_files = _golden_run(model, optimizer, lr_schedule, loss_fn, batch, batch_names, spec, schedule,
                                       single_steps, weights, golden_device, golden_grads == "all",
                                       accumulation_steps)
    if low is not None:
        golden["low_precision"] = _low_precision_reference(model, optimizer, lr_schedule, loss_fn, batch, batch_names,
                                                           spec, schedule, single_steps, weights, golden_device,
                                                           accumulation_steps, golden_files, low)
    elif single_steps > 1:
        golden["float64"] = _float64_trajectory(model, optimizer, lr_schedule, loss_fn, batch, batch_names, spec,
                                                schedule, single_steps, weights, golden_device, accumulation_steps,
                                                golden_files)

    eval_section, eval_text, eval_constants = None, None, {}
    if eval_fn is not None:
        eval_section, eval_text, eval_constants = _export_eval(model, eval_fn, eval_batch, eval_batch_names,
                                                               eval_output_names, name, arguments)
    binary = _find_warpforge(warpforge_binary)
    # From here to the package's write nothing raises but the data-parallel run and the write
    # itself, which remove the staged golden files of the ranks on failure.
    ddp_section = None
    if world_size is not None:
        if world_size < 1:
            raise ValueError(f"world_size must be at least 1, not {world_size}")
        if golden_data is None:
            raise ValueError("world_size needs golden_data: the examples the ranks of the data-parallel run share")
        from .training_ddp import ddp_golden_run
        # The ranks write their golden tensors beside the package, whence _write moves them in.
        parent = os.path.dirname(os.path.abspath(os.fspath(out_dir)))
        os.makedirs(parent, exist_ok=True)
        staging = tempfile.mkdtemp(prefix=".warpforge-ddp-golden-", dir=parent)
        try:
            ddp_section, ddp_files = ddp_golden_run(
                model, optimizer, loss_fn, _golden_data(golden_data, batch_names), batch_names, spec,
                schedule, golden_steps, weights, world_size=world_size, batch_size=int(micro_batches[0][0].shape[0]),
                accumulation_steps=accumulation_steps, seed=golden_seed, shuffle=golden_shuffle, device=golden_device,
                low_precision=low, all_grads=golden_grads == "all", staging=staging)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        golden_files.update(ddp_files)

    manifest = {
        "format": "warpforge.training-package",
        "format_version": 1,
        "name": name,
        "producer": {"name": "warpforge.export_training", "version": __version__, "torch": torch.__version__},
        "dtype": "f32",
        "tolerances": TRAINING_TOLERANCES,
        "training": {
            "loss": {"file": "loss.mlir", "entry": "main", "arguments": arguments, "results": results},
            "batch": [a["name"] for a in arguments if a["kind"] == "batch"],
            "params": [p.name for p in spec.params],
            "frozen": [a["name"] for a in arguments if a["kind"] == "parameter" and not a["trainable"]],
            "buffers": [a["name"] for a in arguments if a["kind"] in ("buffer", "constant")],
            "buffer_updates": list(lowered.mutated_buffers),
            "weights": "weights.safetensors",
            "optimizer": {"file": "optimizer.mlir", "entry": "optimizer_update", **spec.manifest(),
                          "state_file": "optimizer_state.safetensors", "step_counter": "step",
                          "arguments": opt_args, "results": opt_results},
            "lr_schedule": schedule,
            "grad_clip": spec.grad_clip,
            "accumulation_steps": accumulation_steps,
            "autocast": None if low is None else {"dtype": low, "device_type": torch.device(golden_device).type,
                                                  "master_weights": "f32", "traced_under": "cpu",
                                                  "wider_than_golden": wider_than_golden},
            "dropout": _dropout_section(lowered, rng_seed),
            "mode": "train",
            "golden": golden,
            "golden_ddp": ddp_section,
            "eval": eval_section,
            "train_step": None,
        },
    }
    try:
        _write(out_dir, manifest, lowered.text, opt_text, weights, state0, golden_files, eval_text, eval_constants,
               binary)
    finally:
        if ddp_section is not None:
            shutil.rmtree(staging, ignore_errors=True)
    return manifest


def write_checkpoint(package_dir, model: torch.nn.Module, optimizer, step: int, path, *, batch: int, examples: int,
                     seed: int = 0, accumulation: int = 1, world_size: int = 1) -> None:
    """Writes PyTorch's training state after `step` updates as a WarpForge checkpoint of the training
    package in `package_dir` (docs/training.md, "Checkpoints"), so that `warpforge train PKG
    --checkpoint-dir DIR --resume` (with `path` = DIR/checkpoint.safetensors) continues the run that
    PyTorch started: the package's weights from `model`'s parameters and buffers, its optimizer state
    from `optimizer.state` (zeros for a parameter not yet stepped, as torch creates them), `trainer.step`
    = `step`, and the data position the trainer checks on resume (`seed`, `batch`, `examples`,
    `accumulation`, `world_size`). A weight the model does not hold (dropout's RNG state) keeps the
    package's initial value. Written as the trainer writes its own: a temporary file, fsynced, renamed
    over `path`, the directory fsynced."""
    from safetensors import safe_open

    package_dir = pathlib.Path(package_dir)
    manifest = json.loads((package_dir / "manifest.json").read_text())
    training = manifest.get("training")
    if not training:
        raise TrainingExportError(f"{package_dir}: not a training package (its manifest has no 'training' section)")
    held = {**dict(model.named_buffers()), **dict(model.named_parameters())}
    tensors = {}
    with safe_open(str(package_dir / training["weights"]), "pt") as f:
        for name in f.keys():
            value = held.get(name)
            if value is None:
                if not name.startswith("warpforge."):
                    raise TrainingExportError(f"{package_dir}: the model has no parameter or buffer '{name}'")
                value = f.get_tensor(name)
            tensors[f"weight.{name}"] = value
    params = dict(model.named_parameters())
    for entry in training["optimizer"]["state"]:
        p = params.get(entry["param"])
        if p is None:
            raise TrainingExportError(f"{package_dir}: the model has no parameter '{entry['param']}'")
        value = optimizer.state.get(p, {}).get(entry["slot"])
        tensors[f"state.{entry['name']}"] = value if value is not None else torch.zeros_like(p, dtype=torch.float32)
    for key, value in {"step": step, "seed": seed, "batch": batch, "examples": examples,
                       "accumulation": accumulation, "world_size": world_size}.items():
        tensors[f"trainer.{key}"] = torch.tensor(int(value), dtype=torch.int64)
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + path.name + ".tmp-", dir=path.parent)
    os.close(fd)
    try:
        save_file(_tensors(tensors), tmp, metadata={"format": "warpforge.checkpoint", "format_version": "1",
                                                    "package": manifest["name"],
                                                    "optimizer": training["optimizer"]["kind"]})
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _golden_data(data, batch_names) -> dict:
    """golden_data as {batch name: tensor}: a dict, a tuple in batch order, or a safetensors path."""
    if isinstance(data, (str, os.PathLike)):
        from safetensors.torch import load_file
        data = load_file(str(data))
    if isinstance(data, (tuple, list)):
        if len(data) != len(batch_names):
            raise ValueError(f"golden_data has {len(data)} tensors, the batch {len(batch_names)}")
        data = dict(zip(batch_names, data))
    if not isinstance(data, dict):
        raise TypeError("golden_data must be a dict of tensors by batch name, a tuple of them, or a safetensors path")
    sizes = {len(data[n]) for n in batch_names if n in data}
    if len(sizes) > 1:
        raise ValueError(f"golden_data's tensors have different numbers of examples: {sorted(sizes)}")
    return data


_LOW_DTYPES = {torch.bfloat16: "bf16", torch.float16: "f16"}


class _AutocastLoss:
    """loss_fn under torch.autocast(device_type, dtype): a class, not a closure, so that the ranks
    of the data-parallel golden run (started with spawn) can unpickle it."""

    def __init__(self, loss_fn, device_type, dtype):
        self.loss_fn, self.device_type, self.dtype = loss_fn, device_type, dtype

    def __call__(self, model, *batch):
        with torch.autocast(self.device_type, dtype=self.dtype):
            return self.loss_fn(model, *batch)


def _with_autocast(loss_fn, dtype, device):
    """(traced, golden): loss_fn under torch.autocast as the programs are traced (on the CPU, so
    CPU autocast) and as the golden run computes it (autocast of `device`'s type); loss_fn itself
    twice for dtype None. Where the two autocasts would place their casts differently for the
    model, export_training says so (_check_autocast_casts)."""
    if dtype is None:
        return loss_fn, loss_fn
    if dtype not in _LOW_DTYPES:
        raise ValueError(f"autocast must be torch.bfloat16 or torch.float16, not {dtype!r}")
    return _AutocastLoss(loss_fn, "cpu", dtype), _AutocastLoss(loss_fn, torch.device(device).type, dtype)


# The ops whose result type autocast decides (its low-precision and float32 lists, and what
# follows their results): compared between the CPU trace and the golden device's run. Views,
# copies and casts are left out, as their number differs between devices' decompositions.
_AUTOCAST_COMPARED = ("mm", "bmm", "addmm", "baddbmm", "matmul", "linear", "convolution", "scaled_dot_product",
                      "softmax", "log_softmax", "layer_norm", "group_norm", "batch_norm", "nll_loss", "mse_loss",
                      "cross_entropy", "gelu", "relu", "silu", "tanh", "sigmoid", "exp", "embedding")


class _ResultTypes(TorchDispatchMode):
    """The result type of every compared op (below autocast, so after its casts), in order."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = func.overloadpacket.__name__.lstrip("_")
        # Each device's attention kernel (flash for the CPU, flash, efficient or cuDNN on CUDA): one op.
        key = "scaled_dot_product_attention" if "scaled_dot_product" in name else name
        first = out[0] if isinstance(out, (tuple, list)) and out else out
        if (isinstance(first, torch.Tensor) and first.is_floating_point()
                and any(key == c or key.startswith(c + "_") or key.endswith("_" + c) for c in _AUTOCAST_COMPARED)):
            self.seen.append((key, first.dtype))
        return out


_WIDTH = {torch.float64: 3, torch.float32: 2, torch.bfloat16: 1, torch.float16: 1}


def _check_autocast_casts(model, traced_fn, golden_fn, batch, device) -> list:
    """The programs are traced under CPU autocast; the golden run computes under `device`'s. The
    two lists of ops differ (CUDA's float32 list has layer_norm, exp, sum...; the CPU's has
    cross_entropy_loss, which CUDA's lacks), so they agree only for some models: both run once,
    the result type of each compared op is recorded, and the programs may compute an op in a wider
    type than the golden run (validate judges WarpForge by its distance from the float64 run, which
    extra precision only shortens), never in a narrower one: that, or a different sequence of ops,
    is an error naming the first op concerned. Returns the ops computed wider, as
    {"op", "program", "golden", "count"}. (Attention is one op in both; inside it, the CPU
    decomposition the programs carry computes in float32, where CUDA's fused kernels multiply in
    the low precision: a difference of accuracy of the same kind.)"""
    def types(fn, dev):
        m = copy.deepcopy(model).to(dev).train()
        b = tuple(x.to(dev) for x in batch)
        with torch.no_grad(), _DropoutOff(), _ResultTypes() as rec:
            fn(m, *b)
        return rec.seen

    cpu, gpu = types(traced_fn, "cpu"), types(golden_fn, torch.device(device))
    wider = {}
    for i, (a, b) in enumerate(zip(cpu, gpu)):
        if a[0] != b[0]:
            raise TrainingExportError(f"autocast on {device} and on the CPU (where the programs are traced) run different "
                                      f"ops at compared op #{i}: {b[0]} on {device}, {a[0]} on the CPU")
        if a[1] != b[1]:
            if _WIDTH.get(a[1], 0) < _WIDTH.get(b[1], 0):
                raise TrainingExportError(
                    f"autocast on {device} and on the CPU (where the programs are traced) disagree at compared op #{i}: "
                    f"{b[0]} computes in {b[1]} on {device}, in {a[1]} on the CPU (narrower); export with "
                    "golden_device='cpu', or cast explicitly in the model")
            key = (a[0], _DTYPE_NAMES[a[1]], _DTYPE_NAMES[b[1]])
            wider[key] = wider.get(key, 0) + 1
    if len(cpu) != len(gpu):
        raise TrainingExportError(f"autocast on {device} runs {len(gpu)} compared ops, on the CPU (where the programs "
                                  f"are traced) {len(cpu)}: the programs would not compute what the golden run does")
    found = [{"op": op, "program": p, "golden": g, "count": n} for (op, p, g), n in wider.items()]
    if found:
        warnings.warn(f"autocast on {device} computes in a narrower type than the programs (traced under CPU "
                      "autocast): " + ", ".join(f"{f['op']} x{f['count']} ({f['golden']} there, {f['program']} here)"
                                                for f in found)
                      + "; validate --training judges both by the float64 run")
    return found


_DTYPE_NAMES = {torch.float64: "f64", torch.float32: "f32", torch.bfloat16: "bf16", torch.float16: "f16"}


def _autocast_dtype(ep, requested):
    """The low-precision type the traced loss computes in where its parameters are float32 (the
    casts of an autocast region), or None."""
    if requested is not None:
        return _LOW_DTYPES[requested]
    found = {n.meta["val"].dtype for n in ep.graph.nodes
             if isinstance(n.meta.get("val"), torch.Tensor) and n.meta["val"].dtype in _LOW_DTYPES}
    params = {p.dtype for p in ep.state_dict.values() if p.is_floating_point()}
    if len(found) > 1:
        raise TrainingExportError(f"the loss computes in several low-precision types {sorted(map(str, found))}")
    return _LOW_DTYPES[found.pop()] if found and params <= {torch.float32} else None


def _float64_trajectory(model, optimizer, scheduler, loss_fn, batch, batch_names, spec, schedule, steps, weights0,
                        device, accumulation_steps, golden_files) -> dict:
    """The golden steps again in float64, from the same weights on the same batches, and how far
    PyTorch's float32 run is from that one at every step: the loss, every recorded gradient (its
    largest absolute difference, per step and parameter) and the final weights and optimizer state (per tensor).
    After step 1 the two float32 runs, PyTorch's and WarpForge's, each carry their own rounding
    forward, where a ReLU or BatchNorm can amplify it; `validate --training` lets WarpForge differ
    from PyTorch by the tolerance plus twice PyTorch's own distance from the float64 run (compare.h's
    float64 rule, at the later steps)."""
    recorded = golden_files.get("golden/grads.safetensors", {})
    names = [p.name for p in spec.params]
    grad_error = torch.zeros(steps, len(names), dtype=torch.float64)

    def compare(step, grads):
        for j, name in enumerate(names):
            g32 = recorded.get(f"{step}.{name}")
            if g32 is not None and name in grads:
                grad_error[step - 1, j] = (g32.double() - grads[name].double().cpu()).abs().max()

    with _DropoutOff():
        _, ref = _golden_steps(model, optimizer, scheduler, loss_fn, batch, batch_names, spec, schedule, steps,
                               weights0, torch.device(device), False, accumulation_steps, dtype=torch.float64,
                               on_grads=compare)
    torch_loss = golden_files["golden/loss.safetensors"]["loss"].double()
    ref_loss = ref["golden/loss.safetensors"]["loss"].double()
    tensors = {"loss": ref_loss, "loss_error": (torch_loss - ref_loss).abs(), "grad_error": grad_error}
    final32, final64 = golden_files["golden/weights_final.safetensors"], ref["golden/weights_final.safetensors"]
    for k, w in final32.items():
        if k in final64 and w.is_floating_point():
            tensors[f"weight_error.{k}"] = (w.double() - final64[k].double()).abs().max().reshape(())
    state32, state64 = (golden_files["golden/optimizer_state_final.safetensors"],
                        ref["golden/optimizer_state_final.safetensors"])
    for k, v in state32.items():
        if k in state64 and v.is_floating_point():
            tensors[f"state_error.{k}"] = (v.double() - state64[k].double()).abs().max().reshape(())
    golden_files["golden/float64.safetensors"] = tensors
    return {"file": "golden/float64.safetensors", "params": names}


def _rel_l2(x, ref):
    """||x - ref|| / ||ref|| in float64 (0 where both are zero, None where only ref is)."""
    d = (x.double() - ref.double()).norm().item()
    n = ref.double().norm().item()
    if n == 0:
        return 0.0 if d == 0 else None
    return d / n


def _errors(have: dict, ref: dict, base: dict | None = None) -> dict:
    """Per tensor and over all tensors ("*"): relative L2 error of `have` against `ref`, both as
    changes from `base` where given (weights: the update, not the weight, carries the error)."""
    out, num, den = {}, 0.0, 0.0
    for k, r in ref.items():
        if k not in have or not r.is_floating_point():
            continue
        h = have[k].double()
        r = r.double()
        if base is not None and k in base:
            h, r = h - base[k].double(), r - base[k].double()
        e = _rel_l2(h, r)
        if e is not None:
            out[k] = e
        num += (h - r).norm().item() ** 2
        den += r.norm().item() ** 2
    out["*"] = (num ** 0.5 / den ** 0.5) if den > 0 else 0.0
    return out


def _low_precision_reference(model, optimizer, scheduler, loss_fn, batch, batch_names, spec, schedule, steps,
                             weights0, device, accumulation_steps, golden_files, low) -> dict:
    """The float64 run of the golden steps (autocast casts no float64 tensor, so the same loss_fn
    runs there without them) and PyTorch's own low-precision error against it, per step and per
    tensor: what `validate --training` holds WarpForge's error to."""
    with _DropoutOff():
        _, ref = _golden_steps(model, optimizer, scheduler, loss_fn, batch, batch_names, spec, schedule, steps,
                               weights0, torch.device(device), False, accumulation_steps, dtype=torch.float64)
    run = {k: golden_files[f"golden/{k}.safetensors"] for k in _REFERENCE_KEYS + ("grads_step1", "grads_step1_f64")}
    section = low_precision_section(run, {k: ref[f"golden/{k}.safetensors"] for k in _REFERENCE_KEYS}, weights0, low,
                                    lambda name: f"golden/{name}.safetensors", golden_files)
    section["torch_error"]["loss_noise"] = _loss_rounding_noise(model, loss_fn, _split_micro_batches(
        batch, accumulation_steps), torch.device(device))
    section["torch_error"]["loss_noise_draws"] = _LOSS_NOISE_DRAWS
    return section


_LOSS_NOISE_DRAWS = 8
_LOSS_NOISE_SPREAD = 1e-2


def _loss_rounding_noise(model, loss_fn, micro_batches, device) -> float:
    """How far PyTorch's low-precision loss typically lies from the float64 loss at the initial
    weights: the root mean square of its relative error over _LOSS_NOISE_DRAWS evaluations, each
    with every parameter scaled by (1 + 1e-2 N(0, 1)) and the same float32 weights widened for the
    float64 side. A step's loss is one number, and PyTorch's error on it one draw of its rounding:
    on BERT-large bf16 the golden run's step-1 error was 8.3e-5 and torch.compile's 3.4e-5, so
    twice one draw is no bound on a second implementation rounding independently. 1e-2 is 2.5
    bf16 units: no weight keeps its rounding from one draw to the next, while the loss moves by
    about 1e-2 of itself, far from any other regime."""
    gen = torch.Generator(device=device).manual_seed(0x5eed)
    low = copy.deepcopy(model).to(device).train()
    wide = copy.deepcopy(model).to(device=device, dtype=torch.float64).train()
    base = {k: p.detach().clone() for k, p in low.named_parameters() if p.is_floating_point()}
    wide_params = dict(wide.named_parameters())
    wide_batches = [tuple(x.to(device=device, dtype=torch.float64) if x.is_floating_point() else x.to(device)
                          for x in micro) for micro in micro_batches]
    low_batches = [tuple(x.to(device) for x in micro) for micro in micro_batches]
    errors = []
    with _DropoutOff(), torch.no_grad():
        for _ in range(_LOSS_NOISE_DRAWS):
            for k, p in low.named_parameters():
                if k in base:
                    noise = torch.randn(base[k].shape, generator=gen, dtype=torch.float32, device=device)
                    p.copy_(base[k] * (1 + _LOSS_NOISE_SPREAD * noise))
                    wide_params[k].copy_(p.double())
            have = sum(float(loss_fn(low, *m)) for m in low_batches) / len(low_batches)
            want = sum(float(loss_fn(wide, *m)) for m in wide_batches) / len(wide_batches)
            errors.append(abs(have - want) / abs(want) if want != 0 else abs(have - want))
    return (sum(e * e for e in errors) / len(errors)) ** 0.5


_REFERENCE_KEYS = ("loss", "weights_step1", "weights_final", "optimizer_state_step1", "optimizer_state_final")


def low_precision_section(run: dict, ref: dict, weights0: dict, low: str, path, files: dict) -> dict:
    """The manifest's `low_precision` section of a mixed-precision golden run (the single-process
    one, or one rank's of the data-parallel one): the float64 run's files (`ref`, by
    _REFERENCE_KEYS; `path(name)` is where each goes in the package, added to `files`) and PyTorch's
    own error against it. `run`: PyTorch's low-precision run by the same keys, with step 1's
    gradients (`grads_step1`) and their float64 values (`grads_step1_f64`)."""
    section = {"dtype": low, "reference": "float64", "stored_as": "f32"}
    for key in _REFERENCE_KEYS:
        rel = path(f"reference_{key}")
        files[rel] = ref[key] if key == "loss" else _narrowed(ref[key])
        section[f"reference_{key}"] = rel
    rel = path("grads_step1_f64")
    files[rel] = _narrowed(run["grads_step1_f64"])
    section["reference_grads_step1"] = rel
    torch_loss, ref_loss = run["loss"]["loss"].double(), ref["loss"]["loss"].double()
    state0 = {k: torch.zeros_like(v) for k, v in ref["optimizer_state_final"].items()}
    section["torch_error"] = {
        "loss": [abs(a - b).item() / abs(b).item() if b != 0 else abs(a - b).item() for a, b in zip(torch_loss, ref_loss)],
        "gradients": _errors(run["grads_step1"], run["grads_step1_f64"]),
        **{key: _errors(run[key], ref[key], weights0 if key.startswith("weights") else state0)
           for key in _REFERENCE_KEYS[1:]},
    }
    return section


def _narrowed(tensors: dict) -> dict:
    """A mixed-precision package's float64 references stored in float32: their errors are bf16's
    (1e-3 and up, relative to a weight's update), 1e-7 of float32 rounding is far below, and a
    large model's references take half the space (BERT-large: 8 GB a run instead of 16)."""
    return {k: v.float() if v.dtype == torch.float64 else v for k, v in tensors.items()}


# The RNG's arguments of the loss program as the trainer treats them: the state is a buffer each
# step updates (carried, checkpointed), the switch a constant it binds (off for validation).
_ARGUMENT_KINDS = {"rng_state": "buffer", "dropout_switch": "constant"}


def _weight_values(ep, lowered, rng_seed) -> dict:
    """The initial value of every weight argument of the loss program: the model's, and the RNG
    state (key `rng_seed`, counter 0) and dropout switch (on) where it draws random numbers."""
    model_weights = [w for w in lowered.weights if w.kind not in _ARGUMENT_KINDS]
    values = dict(zip((w.name for w in model_weights), weight_tensors(ep, SimpleNamespace(weights=model_weights))))
    for w in lowered.weights:
        if w.kind == "rng_state":
            if not 0 <= rng_seed < 2 ** 64:
                raise ValueError(f"rng_seed must be in [0, 2**64), not {rng_seed}")
            values[w.name] = torch.tensor([rng_seed, 0], dtype=torch.uint64)
        elif w.kind == "dropout_switch":
            values[w.name] = torch.tensor(True)
    return values


def _dropout_section(lowered, rng_seed):
    """The manifest's `training.dropout`: "none" for a loss without dropout, else where its RNG is."""
    kinds = {w.kind: w.name for w in lowered.weights}
    if "rng_state" not in kinds:
        return "none"
    return {"rng_state": kinds["rng_state"], "switch": kinds["dropout_switch"], "algorithm": RNG_ALGORITHM,
            "seed": rng_seed, "golden": "off"}


def _split_micro_batches(batch, k) -> list:
    """The example batch cut into `k` micro-batches along the first dimension (gradient
    accumulation); [batch] for k = 1."""
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise ValueError(f"accumulation_steps must be a positive integer, not {k!r}")
    if k == 1:
        return [batch]
    for i, x in enumerate(batch):
        if x.dim() == 0 or x.shape[0] % k:
            raise ValueError(f"accumulation_steps={k}: batch tensor {i} of shape {list(x.shape)} does not split into "
                             f"{k} micro-batches along its first dimension")
    return [tuple(x.chunk(k, dim=0)[m].contiguous() for x in batch) for m in range(k)]


def _find_warpforge(explicit):
    if explicit:
        if not os.access(explicit, os.X_OK):
            raise FileNotFoundError(f"warpforge_binary {explicit!r} is not an executable")
        return explicit
    env = os.environ.get("WARPFORGE")
    if env and os.access(env, os.X_OK):
        return env
    return shutil.which("warpforge")


class _EvalModule(torch.nn.Module):
    def __init__(self, model, eval_fn):
        super().__init__()
        self.model = model
        self.eval_fn = eval_fn

    def forward(self, *batch):
        out = self.eval_fn(self.model, *batch)
        return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def _export_eval(model, eval_fn, eval_batch, eval_batch_names, eval_output_names, name, loss_arguments):
    """The eval program: eval_fn traced with the model in eval mode, weights named as in the loss
    program; tensors it lifts that the loss program lacks go to eval_constants.safetensors."""
    if eval_batch is None:
        raise TypeError("eval_fn needs eval_batch, the example inputs of the eval program")
    if isinstance(eval_batch, torch.Tensor):
        eval_batch = (eval_batch,)
    eval_batch = tuple(eval_batch)
    names = list(eval_batch_names) if eval_batch_names else [f"eval{i}" for i in range(len(eval_batch))]
    if len(names) != len(eval_batch):
        raise ValueError(f"{len(names)} eval batch names for {len(eval_batch)} eval batch tensors")
    wrapper = _EvalModule(copy.deepcopy(model), eval_fn).eval()
    with torch.no_grad():
        ep = torch.export.export(wrapper, eval_batch, strict=False)
    ep = ep.run_decompositions(decomposition_table())
    lowered = lower_program(ep, names, {}, module_symbol(name + "_eval"), weight_name=_strip)
    outputs = list(eval_output_names) if eval_output_names else [f"output{i}" for i in range(len(lowered.outputs))]
    if len(outputs) != len(lowered.outputs):
        raise ValueError(f"{len(outputs)} eval output names for {len(lowered.outputs)} eval outputs")
    loss_names = {a["name"]: a for a in loss_arguments if a["kind"] != "batch"}
    values = {w.name: t for w, t in zip(lowered.weights, weight_tensors(ep, lowered))}
    args, constants = [], {}
    for i, a in enumerate(lowered.inputs):
        args.append({"name": a.name, "argument": i, "kind": "batch", "dtype": a.value.type.dtype,
                     "shape": list(a.value.type.shape)})
    for j, w in enumerate(lowered.weights):
        entry = {"name": w.name, "argument": len(lowered.inputs) + j, "dtype": w.value.type.dtype,
                 "shape": list(w.value.type.shape)}
        if w.name in loss_names and list(loss_names[w.name]["shape"]) == entry["shape"]:
            entry["kind"] = "weight"
        else:
            entry["kind"] = "constant"  # a value of the eval trace only: never trained
            constants[w.name] = values[w.name]
        args.append(entry)
    section = {"file": "eval.mlir", "entry": "main", "arguments": args, "outputs": outputs,
               "constants": "eval_constants.safetensors" if constants else None}
    return section, lowered.text, constants


def _lower_loss(model, loss_fn, batch, batch_names, name):
    wrapper = _LossModule(copy.deepcopy(model), loss_fn).train()
    ep = torch.export.export(wrapper, batch, strict=False)
    ep = ep.run_decompositions(_training_decompositions())
    random = sorted({str(n.target) for n in ep.graph.nodes if n.op == "call_function"
                     and any(r in _op_name(n.target) for r in _RANDOM_OPS)
                     and _op_name(n.target) not in _WARPFORGE_RANDOM_OPS})
    if random:
        raise TrainingExportError(f"the loss uses random ops {random}: only dropout has WarpForge's RNG in training; "
                                  "remove them")
    lowered = lower_program(ep, batch_names, {}, module_symbol(name + "_loss"), buffer_mutations=True,
                            weight_name=_strip, rng=True)
    if len(lowered.outputs) != 1 + len(lowered.mutated_buffers):
        raise TrainingExportError(f"the loss program has {len(lowered.outputs) - len(lowered.mutated_buffers)} "
                                  "outputs; loss_fn must return one scalar tensor")
    return lowered, ep


def _op_name(target) -> str:
    """`native_dropout` for aten.native_dropout.default."""
    parts = str(target).split(".")
    return parts[1] if len(parts) > 2 else parts[-1]


def _embedding_for_training(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """aten.embedding with PyTorch's gradient: rows at `padding_idx` get none
    (embedding_dense_backward skips them). The plain gather that inference lowers would send them
    the cotangent; multiplying the gathered rows by (index != padding_idx) gives the same values
    (the padding row is zero: _check_padding_rows) and a zero gradient there."""
    rows = weight[indices]
    if padding_idx is None or padding_idx < 0:
        return rows
    keep = (indices != padding_idx).unsqueeze(-1).to(rows.dtype)
    return rows * keep


def _check_padding_rows(model: torch.nn.Module):
    """The masked embedding is exact only while the padding row is zero (nn.Embedding's own
    initialisation makes it so, and a row without gradient stays zero under SGD and Adam(W))."""
    for path, m in model.named_modules():
        if isinstance(m, torch.nn.Embedding) and m.padding_idx is not None:
            if m.scale_grad_by_freq or m.sparse:
                raise TrainingExportError(f"{path}: nn.Embedding with scale_grad_by_freq or sparse gradients is not "
                                          "supported for training")
            if bool(m.weight.detach()[m.padding_idx].ne(0).any()):
                raise TrainingExportError(f"{path}: the padding row {m.padding_idx} of the embedding is not zero; "
                                          "PyTorch never updates it, WarpForge's training program needs it zero")


def _training_decompositions():
    table = decomposition_table()
    table[torch.ops.aten.embedding.default] = _embedding_for_training
    # BatchNorm: in train mode kept whole, lowered to stablehlo.batch_norm_training (whose
    # gradient WarpForge's autodiff writes as one batch_norm_grad; lowering/norm.py); in eval mode
    # decomposed, as before.
    from torch._decomp import get_decompositions
    for op, decomposition in get_decompositions([torch.ops.aten._native_batch_norm_legit_functional,
                                                 torch.ops.aten._native_batch_norm_legit.default,
                                                 torch.ops.aten.native_batch_norm]).items():
        table[op] = _eval_mode_only(decomposition)
    return table


def _eval_mode_only(decomposition):
    """A batch-norm decomposition (args: input, weight, bias, running_mean, running_var, training,
    momentum, eps) applied in eval mode only: in train mode it declines (NotImplemented), and
    the op stays in the graph for the lowering."""

    def batch_norm(*args, **kwargs):
        training = args[5] if len(args) > 5 else kwargs.get("training")
        if training:
            return NotImplemented
        return decomposition(*args, **kwargs)

    return batch_norm


def _golden_run(model, optimizer, scheduler, loss_fn, batch, batch_names, spec, schedule, steps, weights0,
                device="cpu", all_grads_recorded=True, accumulation_steps=1):
    """PyTorch's own training steps on the example batch, from copies of the user's objects, on
    `device` (true float32 there: TF32 off for matmuls and convolutions). Every tensor recorded is
    brought back to the CPU."""
    with _true_fp32(device), _DropoutOff():
        return _golden_steps(model, optimizer, scheduler, loss_fn, batch, batch_names, spec, schedule, steps,
                             weights0, torch.device(device), all_grads_recorded, accumulation_steps)


class _DropoutOff(torch.overrides.TorchFunctionMode):
    """PyTorch with dropout off while the model stays in train mode (BatchNorm keeps its batch
    statistics): every dropout function returns its input, and attention runs without dropout.
    The golden run is deterministic so; WarpForge's programs compute the same with their dropout
    switch off."""

    _IDENTITY = {F.dropout, F.dropout1d, F.dropout2d, F.dropout3d, F.alpha_dropout, F.feature_alpha_dropout,
                 torch.dropout, torch.feature_dropout, torch.alpha_dropout, torch.feature_alpha_dropout,
                 torch.dropout_, torch.feature_dropout_, torch.alpha_dropout_, torch.feature_alpha_dropout_}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in self._IDENTITY:
            return args[0] if args else kwargs["input"]
        if func is F.scaled_dot_product_attention:
            if len(args) > 4:  # (query, key, value, attn_mask, dropout_p, ...)
                args = args[:4] + (0.0,) + tuple(args[5:])
            else:
                kwargs = {**kwargs, "dropout_p": 0.0}
        return func(*args, **kwargs)


class _true_fp32:
    def __init__(self, device):
        self.cuda = torch.device(device).type == "cuda"

    def __enter__(self):
        if self.cuda:
            self.saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False

    def __exit__(self, *exc):
        if self.cuda:
            torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = self.saved


def _host(t):
    """A CPU copy: never the tensor itself (clipping and the optimizer change theirs in place)."""
    return t.detach().to("cpu", copy=True)


def _cpu(tensors: dict) -> dict:
    return {k: _host(v) for k, v in tensors.items()}


def _backward(model, loss_fn, micro_batches):
    """Gradient accumulation as a PyTorch loop does it: `(loss / K).backward()` on each of the K
    micro-batches. Returns the micro-batch losses and their mean (what such a loop reports)."""
    k = len(micro_batches)
    losses = []
    for micro in micro_batches:
        loss = loss_fn(model, *micro)
        (loss / k if k > 1 else loss).backward()
        losses.append(_host(loss))
    mean = losses[0] if k == 1 else torch.tensor(sum(float(x) / k for x in losses), dtype=losses[0].dtype)
    return losses, mean


def _golden_steps(model, optimizer, scheduler, loss_fn, batch, batch_names, spec, schedule, steps, weights0, device,
                  all_grads_recorded, accumulation_steps=1, dtype=None, on_grads=None):
    """dtype: run in that floating type instead of the model's (the float64 reference of a mixed
    precision package), without the float64 gradients. on_grads(step, {param name: gradient}) is
    called at every step, before the update."""
    g_model, g_opt, g_sched = copy.deepcopy((model, optimizer, scheduler))
    g_model.to(device=device, dtype=dtype)  # moves the parameters in place: the copied optimizer keeps them
    g_model.train()
    files = {"golden/batch.safetensors": dict(zip(batch_names, batch))}
    batch = tuple(x.to(device=device, dtype=dtype) if dtype is not None and x.is_floating_point() else x.to(device)
                  for x in batch)
    micro_batches = _split_micro_batches(batch, accumulation_steps)
    params = dict(g_model.named_parameters())
    if spec.grad_clip is not None:
        clip_params = [params[p.name] for p in spec.params]
    losses, micro_losses, lrs, all_grads = [], [], [], {}
    if dtype is None:
        files["golden/grads_step1_f64.safetensors"] = _float64_grads(model, loss_fn, micro_batches, spec, device)
    for step in range(1, steps + 1):
        group_lrs = [float(g["lr"]) for g in g_opt.param_groups]
        expect = lr_at(schedule, step)
        if any(abs(a - b) > 1e-12 * max(abs(b), 1e-30) for a, b in zip(group_lrs, expect)):
            raise TrainingExportError(f"step {step}: the scheduler gives lr {group_lrs}, the manifest's schedule "
                                      f"{expect}")
        lrs.append(group_lrs)
        g_opt.zero_grad(set_to_none=True)
        step_losses, loss = _backward(g_model, loss_fn, micro_batches)
        micro_losses.append(torch.stack(step_losses))
        losses.append(loss)
        if on_grads is not None:
            on_grads(step, {p.name: params[p.name].grad for p in spec.params if params[p.name].grad is not None})
        if all_grads_recorded or step == 1:
            all_grads.update({f"{step}.{p.name}": _host(params[p.name].grad) for p in spec.params
                              if params[p.name].grad is not None})
        if step == 1:
            none = [p.name for p in spec.params if params[p.name].grad is None]
            if none:
                raise TrainingExportError(f"optimized parameters get no gradient from the loss: {none}; torch.optim "
                                          "skips them, the update program would not: leave them out of the optimizer")
            files["golden/grads_step1.safetensors"] = {p.name: _host(params[p.name].grad)
                                                       for p in spec.params}
        if spec.grad_clip is not None:
            torch.nn.utils.clip_grad_norm_(clip_params, spec.grad_clip["max_norm"])
        g_opt.step()
        if g_sched is not None:
            with warnings.catch_warnings():
                # the copied optimizer's step() lost the scheduler's call-order marker, not its order
                warnings.filterwarnings("ignore", message=".*optimizer.step\\(\\)` has been overridden")
                g_sched.step()
        if step == 1:
            files["golden/weights_step1.safetensors"] = _state_by_arg(g_model, weights0)
            files["golden/optimizer_state_step1.safetensors"] = _cpu(torch_state(spec, g_opt, params))
    files["golden/loss.safetensors"] = {"loss": torch.stack(losses)}
    if accumulation_steps > 1:
        # [steps, K]: each micro-batch's loss; `loss` is their mean
        files["golden/loss.safetensors"]["micro_loss"] = torch.stack(micro_losses)
    files["golden/grads.safetensors"] = all_grads
    files["golden/weights_final.safetensors"] = _state_by_arg(g_model, weights0)
    state = _cpu(torch_state(spec, g_opt, params))
    state["step"] = torch.tensor(steps, dtype=torch.int64)
    files["golden/optimizer_state_final.safetensors"] = state
    files["golden/lr.safetensors"] = {"lr": torch.tensor(lrs, dtype=torch.float64)}
    summary = {"steps": steps, "loss": [float(x) for x in losses], "lr": lrs}
    if accumulation_steps > 1:
        summary["micro_loss"] = [[float(x) for x in row] for row in micro_losses]
    files["golden/summary.json"] = summary
    golden = {
        "steps": steps,
        "batch": "golden/batch.safetensors",
        "loss": "golden/loss.safetensors",
        "lr": "golden/lr.safetensors",
        "summary": "golden/summary.json",
        "grads_step1": "golden/grads_step1.safetensors",
        "grads_step1_f64": "golden/grads_step1_f64.safetensors",
        "grads": "golden/grads.safetensors",
        "weights_step1": "golden/weights_step1.safetensors",
        "optimizer_state_step1": "golden/optimizer_state_step1.safetensors",
        "weights_final": "golden/weights_final.safetensors",
        "optimizer_state_final": "golden/optimizer_state_final.safetensors",
    }
    return golden, files


def _float64_grads(model, loss_fn, micro_batches, spec, device) -> dict:
    """Step 1's gradients computed in float64: where float32 rounding decides a ReLU or a sum
    cancels, PyTorch's float32 gradient can be further from the exact one than WarpForge's;
    `validate --training` then judges both by their distance to these (DESIGN.md's float64
    arbitration)."""
    m64 = copy.deepcopy(model).to(device=device, dtype=torch.float64).train()
    _backward(m64, loss_fn, [tuple(x.to(torch.float64) if x.is_floating_point() else x for x in micro)
                             for micro in micro_batches])
    params = dict(m64.named_parameters())
    return {p.name: _host(params[p.name].grad) for p in spec.params if params[p.name].grad is not None}


def _state_by_arg(model, weights0: dict) -> dict:
    """The model's parameters and buffers under the loss program's argument names (not the RNG
    state, which the golden run, with dropout off, does not have)."""
    sd = model.state_dict()
    return {k: (_host(sd[k]) if k in sd else v) for k, v in weights0.items() if k not in (RNG_STATE, DROPOUT_SWITCH)}


def _write(out_dir, manifest, loss_text, opt_text, weights, state0, golden_files, eval_text=None,
           eval_constants=None, binary=None):
    def fill(tmp):
        with open(os.path.join(tmp, "loss.mlir"), "w") as f:
            f.write(loss_text)
        with open(os.path.join(tmp, "optimizer.mlir"), "w") as f:
            f.write(opt_text)
        save_file(_tensors(weights), os.path.join(tmp, "weights.safetensors"))
        save_file(_tensors(state0), os.path.join(tmp, "optimizer_state.safetensors"))
        os.makedirs(os.path.join(tmp, "golden"))
        for rel, content in golden_files.items():
            os.makedirs(os.path.dirname(os.path.join(tmp, rel)), exist_ok=True)
            if rel.endswith(".json"):
                write_json(os.path.join(tmp, rel), content)
            elif isinstance(content, pathlib.Path):
                shutil.move(content, os.path.join(tmp, rel))  # written by a rank beside the package: a rename
            else:
                save_file(_tensors(content), os.path.join(tmp, rel))
        if eval_text is not None:
            with open(os.path.join(tmp, "eval.mlir"), "w") as f:
                f.write(eval_text)
            if eval_constants:
                save_file(_tensors(eval_constants), os.path.join(tmp, "eval_constants.safetensors"))
        write_json(os.path.join(tmp, "manifest.json"), manifest)
        if binary:
            # The train-step program as the trainer will run it: written by WarpForge's own
            # autodiff from the two programs above, then named in the manifest.
            out = os.path.join(tmp, "train_step.mlir")
            proc = subprocess.run([binary, "autodiff", tmp, "-o", out], capture_output=True, text=True)
            if proc.returncode != 0:
                raise TrainingExportError(f"{binary} autodiff could not derive the train-step program: "
                                          f"{proc.stderr.strip() or proc.stdout.strip()}")
            manifest["training"]["train_step"] = {"file": "train_step.mlir", "entry": "train_step",
                                                  "value_and_grad": "loss_value_and_grad",
                                                  "producer": "warpforge autodiff"}
            write_json(os.path.join(tmp, "manifest.json"), manifest)

    write_dir_atomically(out_dir, fill)


__all__ = ["export_training", "TrainingExportError", "UnsupportedOptimizerError",
           "TRAINING_TOLERANCES", "lr_at"]
