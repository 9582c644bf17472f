"""Golden per-layer activations: which modules form the model's main stack, forward hooks that
record their outputs, and the graph node of the exported program that computes each output
(found through torch.export's `nn_module_stack` metadata)."""

from __future__ import annotations

import re

import torch
from torch import nn


def _params(m: nn.Module) -> int:
    return sum(p.numel() for p in m.parameters())


def find_main_stack(model: nn.Module) -> list[str]:
    """The module paths of the direct children of the model's main stack.

    ResNet-like models whose stages are numbered children of the root (`layer1` .. `layer4`)
    holding most of the parameters give those stages; otherwise the ModuleList/Sequential with
    the most children that hold parameters (ties: the most parameters) gives its children
    (`encoder.layer.N`, `model.layers.N`, `transformer.h.N`, `features.N`, ...)."""
    total = max(_params(model), 1)
    groups: dict = {}
    for name, child in model.named_children():
        m = re.fullmatch(r"(.*?)(\d+)", name)
        if m and isinstance(child, (nn.Sequential, nn.ModuleList)):
            groups.setdefault(m.group(1), []).append((int(m.group(2)), name, child))
    for members in groups.values():
        if len(members) >= 2 and sum(_params(c) for _, _, c in members) > total / 2:
            return [name for _, name, _ in sorted(members)]
    best, best_key = None, None
    for name, mod in model.named_modules():
        if not isinstance(mod, (nn.Sequential, nn.ModuleList)):
            continue
        kids = [(n, c) for n, c in mod.named_children() if _params(c) > 0]
        if len(kids) < 2:
            continue
        key = (len(kids), _params(mod))
        if best_key is None or key > best_key:
            best, best_key = (name, [n for n, _ in mod.named_children()]), key
    if best is None:
        return []
    prefix, kids = best
    return [f"{prefix}.{k}" if prefix else k for k in kids]


def first_tensor(out):
    if isinstance(out, torch.Tensor):
        return out
    leaves, _ = torch.utils._pytree.tree_flatten(out)
    for leaf in leaves:
        if isinstance(leaf, torch.Tensor):
            return leaf
    return None


class Recorder:
    """Forward hooks that keep the first tensor each named module returns."""

    def __init__(self, model: nn.Module, paths: list[str]):
        self.values: dict = {}
        self._handles = []
        modules = dict(model.named_modules())
        for p in paths:
            self._handles.append(modules[p].register_forward_hook(self._hook(p)))

    def _hook(self, path):
        def hook(_module, _inputs, output):
            t = first_tensor(output)
            if t is not None:
                self.values[path] = t.detach().clone()

        return hook

    def remove(self):
        for h in self._handles:
            h.remove()
        self._handles = []


def normalize_path(path: str) -> str:
    """`L['self'].encoder.layer[0]` / `encoder.layer.0` -> `encoder.layer.0`."""
    path = re.sub(r"^L\['self'\]\.?", "", path)
    path = re.sub(r"\[(\d+)\]", r".\1", path)
    path = re.sub(r"\._modules\['([^']+)'\]", r".\1", path)
    path = re.sub(r"\['([^']+)'\]", r".\1", path)
    return path.strip(".")


def module_paths(node) -> list[str]:
    stack = node.meta.get("nn_module_stack") or {}
    return [normalize_path(v[0]) for v in stack.values()]


def _in_module(node, path, cache):
    if node in cache:
        return path in cache[node]
    paths = set(module_paths(node))
    if not paths and node.op == "call_function" and "getitem" in str(node.target) and node.args:
        src = node.args[0]
        if hasattr(src, "meta"):
            paths = set(module_paths(src))
    cache[node] = paths
    return path in paths


def output_nodes(graph, recorded: dict) -> dict:
    """For each recorded module path, the graph node computing its (first) output."""
    nodes = list(graph.nodes)
    cache: dict = {}
    found = {}
    for path, tensor in recorded.items():
        inside = [n for n in nodes if n.op == "call_function" and _in_module(n, path, cache)]
        inside_set = set(inside)
        candidates = []
        for n in inside:
            val = n.meta.get("val")
            if not isinstance(val, torch.Tensor):
                continue
            if not _shape_matches(val.shape, tensor.shape):
                continue
            if any(u not in inside_set for u in n.users):
                candidates.append(n)
        if candidates:
            found[path] = candidates[-1]
    return found


def _shape_matches(sym_shape, shape):
    """Static sizes equal; symbolic sizes match anything. (Never compares a SymInt with an int:
    that would add a guard and specialise the dynamic dimension.)"""
    if len(sym_shape) != len(shape):
        return False
    for a, b in zip(sym_shape, shape):
        if isinstance(a, torch.SymInt):
            expr = a.node.expr
            if expr.is_Integer and int(expr) != b:
                return False
        elif int(a) != int(b):
            return False
    return True
