"""The data-parallel golden run of `export_training(..., world_size=N, golden_data=...)`: PyTorch's
DistributedDataParallel itself, N processes on `torch.distributed` (gloo on the CPU, nccl on CUDA),
each rank taking its share of every epoch in WarpForge's sampler order (DistributedSampler's
sharding, warpforge.data.sampler), as `warpforge train` under N ranks does.

Each rank records, for every step, its batch, its loss, its own gradients BEFORE the all-reduce
(captured by a DDP communication hook from each bucket before it calls DDP's allreduce_hook), the
averaged gradients the update used, and the weights and optimizer state after step 1 and after
the last step: what `warpforge validate --training` checks rank by rank in a job of N ranks
(docs/distributed.md, "Data-parallel training").

A mixed-precision (autocast) loss adds, on every rank, a float64 twin of the run: a second
DistributedDataParallel model in float64 on the same process group, stepped on the same batches
(autocast casts no float64 tensor). Its losses, weights and optimizer state are the reference
each rank's low-precision run is judged by, through PyTorch's own distance from it (the rule of
the single-process mixed-precision golden run, rank by rank)."""

from __future__ import annotations

import contextlib
import os
import pathlib
import pickle
import socket
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel

from .data import sampler
from .optimizers import lr_at, torch_state


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_batches(data: dict, names, batch_size: int, accumulation_steps: int, steps: int, seed: int, shuffle: bool,
                 rank: int, world_size: int) -> list:
    """The example indices of each update on `rank`, in `warpforge train`'s order: the epoch's
    permutation (sampler.epoch_permutation) sharded as DistributedSampler shards it, then
    consecutive groups of batch_size * accumulation_steps (a partial last group dropped), epoch
    after epoch."""
    n = len(data[names[0]])
    per_update = batch_size * accumulation_steps
    per_rank = -(-n // world_size)
    per_epoch = per_rank // per_update
    if per_epoch == 0:
        raise ValueError(f"golden_data: {n} examples, {per_rank} per rank of {world_size}, fewer than one update of "
                         f"{accumulation_steps} batch(es) of {batch_size}")
    out, order, order_epoch = [], None, -1
    for step in range(1, steps + 1):
        epoch, within = divmod(step - 1, per_epoch)
        if epoch != order_epoch:
            order = sampler.epoch_indices(n, seed, epoch, shuffle, rank, world_size)
            order_epoch = epoch
        out.append(order[within * per_update:(within + 1) * per_update])
    return out


def ddp_golden_run(model, optimizer, loss_fn, data: dict, batch_names, spec, schedule, steps, weights0,
                   *, world_size: int, batch_size: int, accumulation_steps: int, seed: int, shuffle: bool,
                   device: str, low_precision: str | None = None, all_grads: bool = True,
                   staging: str) -> tuple[dict, dict]:
    """Runs DDP on `world_size` forked processes; returns the manifest's `training.golden_ddp`
    section and the files to write (package-relative path -> JSON, or the pathlib.Path of a
    safetensors file each rank wrote under `staging`, a directory beside the package that the
    caller removes). Each rank writes its own golden tensors, once, in parallel: a large model's
    are tens of gigabytes, which a round trip through this process would copy twice more.
    all_grads False records the gradients of step 1 only (a large model's gradients of every
    step would not fit a package)."""
    missing = [n for n in batch_names if n not in data]
    if missing:
        raise ValueError(f"golden_data has no tensor {missing[0]!r} (it must hold every batch tensor: {batch_names})")
    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="warpforge-ddp-") as tmp:
        args = (world_size, port, tmp, model, optimizer, loss_fn, data, list(batch_names), spec, schedule, steps,
                weights0, batch_size, accumulation_steps, seed, shuffle, device, low_precision, all_grads, staging)
        # spawn: autograd has run in this process, and its threads do not survive a fork. The
        # ranks get pickled copies of the model and optimizer (one pickle: the optimizer keeps
        # the model's parameters); the scheduler's lr comes from the manifest's schedule (lr_at,
        # checked against the scheduler by the single-process golden run), as lambdas do not pickle.
        try:
            pickle.dumps((loss_fn, model, optimizer))
        except Exception as e:
            raise TypeError("the data-parallel golden run starts its ranks with spawn: loss_fn, the model and the "
                            f"optimizer must be picklable (loss_fn a module-level function): {e}") from e
        if torch.device(device).type == "cuda":
            torch.cuda.empty_cache()  # the single-process golden run's memory, for the rank on the same GPU
        mp.start_processes(_rank_main, args=args, nprocs=world_size, join=True, start_method="spawn")
        results = [torch.load(os.path.join(tmp, f"rank{r}.pt"), weights_only=False) for r in range(world_size)]
    files, ranks = {}, []
    for entry, staged, _ in results:
        files.update(staged)
        ranks.append(entry)
    section = {
        "world_size": world_size,
        "backend": "nccl" if torch.device(device).type == "cuda" else "gloo",
        "steps": steps,
        "seed": seed,
        "shuffle": shuffle,
        "batch_size": batch_size,
        "accumulation_steps": accumulation_steps,
        "bucket_cap_mb": 25,
        "first_bucket_bytes": dist._DEFAULT_FIRST_BUCKET_BYTES,
        # DDP's buckets as its communication hook saw them at the last step (after the rebuild
        # of the first iteration, in the order gradients became ready): parameter names per bucket
        "buckets": results[0][2],
        "ranks": ranks,
    }
    return section, files


def _rank_main(rank, world_size, port, tmp, model, optimizer, loss_fn, data, batch_names, spec, schedule, steps,
               weights0, batch_size, accumulation_steps, seed, shuffle, device, low_precision, all_grads, staging):
    torch.set_num_threads(1)  # the ranks share the machine
    from .training import _DropoutOff, _float64_grads, _host, _state_by_arg, _true_fp32
    cuda = torch.device(device).type == "cuda"
    dist.init_process_group("nccl" if cuda else "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world_size)
    try:
        dev = torch.device(f"cuda:{rank}") if cuda else torch.device("cpu")
        with _true_fp32(device), _DropoutOff():
            files, buckets = _rank_steps(rank, world_size, model, optimizer, loss_fn, data, batch_names,
                                         spec, schedule, steps, weights0, batch_size, accumulation_steps, seed,
                                         shuffle, dev, _float64_grads, _host, _state_by_arg,
                                         low_precision is not None, all_grads)
        entry, staged = _stage_rank_files(rank, files, weights0, low_precision, staging)
        torch.save((entry, staged, buckets), os.path.join(tmp, f"rank{rank}.pt"))
    finally:
        dist.destroy_process_group()


def _stage_rank_files(rank, rank_files, weights0, low_precision, staging) -> tuple[dict, dict]:
    """One rank's golden files written under `staging` at their package paths (its low-precision
    section, against its float64 twin, computed here where the tensors are): the rank's manifest
    entry, and package path -> JSON content or the staged file's pathlib.Path."""
    from safetensors.torch import save_file
    from .package import _tensors
    base = f"golden/ddp/rank{rank}"
    files, entry = {}, {}
    reference = rank_files.pop("float64", None)
    for key, content in rank_files.items():
        rel = f"{base}/{key}.json" if key == "summary" else f"{base}/{key}.safetensors"
        files[rel] = content
        entry[key] = rel
    if reference is not None:
        from .training import low_precision_section
        step1 = {k.split(".", 1)[1]: v for k, v in rank_files["grads"].items() if k.startswith("1.")}
        entry["low_precision"] = low_precision_section({**rank_files, "grads_step1": step1}, reference, weights0,
                                                       low_precision, lambda name: f"{base}/{name}.safetensors", files)
    staged = {}
    for rel, content in files.items():
        if rel.endswith(".json"):
            staged[rel] = content
            continue
        path = os.path.join(staging, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        save_file(_tensors(content), path)
        staged[rel] = pathlib.Path(path)
    return entry, staged


def _rank_steps(rank, world_size, model, optimizer, loss_fn, data, batch_names, spec, schedule, steps,
                weights0, batch_size, k, seed, shuffle, device, _float64_grads, _host, _state_by_arg, float64_twin=False,
                all_grads=True):
    import copy
    g_model, g_opt = copy.deepcopy((model, optimizer))
    g_model.to(device)
    g_model.train()
    twin = _Float64Twin(model, optimizer, device, spec) if float64_twin else None
    params = dict(g_model.named_parameters())
    name_of = {id(p): n for n, p in params.items()}
    # DDP's defaults: bucket_cap_mb 25 (first bucket 1 MB), broadcast_buffers, find_unused_parameters off
    ddp = DistributedDataParallel(g_model, device_ids=[device.index] if device.type == "cuda" else None)

    captured, buckets_seen = {}, {}

    def capture_then_allreduce(state, bucket):
        # this rank's gradients before the all-reduce (with a hook registered the bucket holds
        # them undivided), then DDP's default hook: divide by the world size, all-reduce (sum)
        names = [name_of[id(p)] for p in bucket.parameters()]
        for name, g in zip(names, bucket.gradients()):
            captured[name] = _host(g)
        buckets_seen[bucket.index()] = names
        return default_hooks.allreduce_hook(state, bucket)

    ddp.register_comm_hook(None, capture_then_allreduce)
    updates = rank_batches(data, batch_names, batch_size, k, steps, seed, shuffle, rank, world_size)
    tensors = [data[n] for n in batch_names]
    clip_params = [params[p.name] for p in spec.params] if spec.grad_clip is not None else None
    losses, micro_losses, lrs = [], [], []
    files = {"batches": {}, "grads": {}, "averaged_grads": {}}
    for step in range(1, steps + 1):
        idx = torch.tensor(updates[step - 1], dtype=torch.int64)
        batch = tuple(t[idx] for t in tensors)
        files["batches"].update({f"{step}.{n}": b for n, b in zip(batch_names, batch)})
        batch = tuple(b.to(device) for b in batch)
        micro = list(zip(*(b.chunk(k) for b in batch))) if k > 1 else [batch]
        if step == 1:
            files["grads_step1_f64"] = _float64_grads(model, loss_fn, micro, spec, device)
        group_lrs = lr_at(schedule, step)
        for group, lr in zip(g_opt.param_groups, group_lrs):
            group["lr"] = lr  # what scheduler.step() would have set
        lrs.append(group_lrs)
        g_opt.zero_grad(set_to_none=True)
        captured.clear()
        buckets_seen.clear()
        step_losses = [_host(loss) for loss in _ddp_backward(ddp, loss_fn, micro)]
        loss = step_losses[0] if k == 1 else torch.tensor(sum(float(x) / k for x in step_losses),
                                                          dtype=step_losses[0].dtype)
        losses.append(loss)
        micro_losses.append(torch.stack(step_losses))
        for p in spec.params:
            if p.name not in captured:
                raise RuntimeError(f"step {step}: DDP all-reduced no gradient of {p.name!r}")
            if all_grads or step == 1:
                files["grads"][f"{step}.{p.name}"] = captured[p.name]
                files["averaged_grads"][f"{step}.{p.name}"] = _host(params[p.name].grad)
        if clip_params is not None:
            torch.nn.utils.clip_grad_norm_(clip_params, spec.grad_clip["max_norm"])
        g_opt.step()
        if twin is not None:
            twin.step(loss_fn, micro, group_lrs, step, weights0, _host, _state_by_arg)
        if step == 1:
            files["weights_step1"] = _state_by_arg(g_model, weights0)
            files["optimizer_state_step1"] = {k_: _host(v) for k_, v in torch_state(spec, g_opt, params).items()}
    files["loss"] = {"loss": torch.stack(losses)}
    if k > 1:
        files["loss"]["micro_loss"] = torch.stack(micro_losses)
    files["lr"] = {"lr": torch.tensor(lrs, dtype=torch.float64)}
    files["weights_final"] = _state_by_arg(g_model, weights0)
    state = {k_: _host(v) for k_, v in torch_state(spec, g_opt, params).items()}
    state["step"] = torch.tensor(steps, dtype=torch.int64)
    files["optimizer_state_final"] = state
    if twin is not None:
        files["float64"] = twin.finish(steps, weights0, _host, _state_by_arg)
    files["summary"] = {"rank": rank, "world_size": world_size, "steps": steps, "loss": [float(x) for x in losses],
                        "lr": lrs}
    return files, [buckets_seen[i] for i in sorted(buckets_seen)]


def _ddp_backward(ddp, loss_fn, micro) -> list:
    """One update's backward passes, as export_training's _backward under DDP: `(loss / K).backward()`
    on each of the K micro-batches, with DDP's no_sync on every one but the last (gradients
    accumulate locally, and the last backward all-reduces the accumulated ones). The losses."""
    k, losses = len(micro), []
    for m, mb in enumerate(micro):
        with ddp.no_sync() if m < k - 1 else contextlib.nullcontext():
            loss = loss_fn(ddp, *mb)
            (loss / k if k > 1 else loss).backward()
        losses.append(loss)
    return losses


class _Float64Twin:
    """The run again in float64 beside the low-precision one: its own DDP model on the same
    process group (its buckets all-reduce float64 gradients), the same batches and learning rates,
    DDP's default averaging. Records what training.low_precision_section judges the run by."""

    def __init__(self, model, optimizer, device, spec):
        import copy
        self.model, self.opt = copy.deepcopy((model, optimizer))
        self.model.to(device=device, dtype=torch.float64)  # in place: the copied optimizer keeps the parameters
        self.model.train()
        self.ddp = DistributedDataParallel(self.model, device_ids=[device.index] if device.type == "cuda" else None)
        self.params = dict(self.model.named_parameters())
        self.spec = spec
        self.losses, self.files = [], {}

    def step(self, loss_fn, micro, group_lrs, step, weights0, _host, _state_by_arg):
        for group, lr in zip(self.opt.param_groups, group_lrs):
            group["lr"] = lr
        self.opt.zero_grad(set_to_none=True)
        wide = [tuple(x.double() if x.is_floating_point() else x for x in mb) for mb in micro]
        losses = [float(loss) for loss in _ddp_backward(self.ddp, loss_fn, wide)]
        self.losses.append(sum(losses) / len(losses))
        if self.spec.grad_clip is not None:
            torch.nn.utils.clip_grad_norm_([self.params[p.name] for p in self.spec.params],
                                           self.spec.grad_clip["max_norm"])
        self.opt.step()
        if step == 1:
            self.files["weights_step1"] = _state_by_arg(self.model, weights0)
            self.files["optimizer_state_step1"] = {k_: _host(v) for k_, v in
                                                   torch_state(self.spec, self.opt, self.params).items()}

    def finish(self, steps, weights0, _host, _state_by_arg) -> dict:
        self.files["loss"] = {"loss": torch.tensor(self.losses, dtype=torch.float64)}
        self.files["weights_final"] = _state_by_arg(self.model, weights0)
        state = {k_: _host(v) for k_, v in torch_state(self.spec, self.opt, self.params).items()}
        state["step"] = torch.tensor(steps, dtype=torch.int64)
        self.files["optimizer_state_final"] = state
        return self.files
