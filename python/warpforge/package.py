"""Writes a model package (docs/model-package.md) atomically: everything goes to a temporary
directory beside the target, which is renamed into place last."""

from __future__ import annotations

import json
import os
import shutil
import tempfile

import torch
from safetensors.torch import save_file


def _tensors(d: dict) -> dict:
    # safetensors refuses tensors that share storage (tied weights): give each its own copy.
    return {k: v.detach().to("cpu").contiguous().clone() for k, v in d.items()}


def write_dir_atomically(out_dir, fill) -> None:
    """Calls fill(tmp) to write the package's files into a fresh temporary directory beside
    `out_dir`, then renames it to `out_dir` (replacing what was there); nothing is left behind
    when fill raises."""
    out_dir = os.path.abspath(os.fspath(out_dir))
    parent = os.path.dirname(out_dir)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="." + os.path.basename(out_dir) + ".tmp-", dir=parent)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o777 & ~umask)
        fill(tmp)
        old = None
        if os.path.lexists(out_dir):
            old = tempfile.mkdtemp(prefix="." + os.path.basename(out_dir) + ".old-", dir=parent)
            os.rename(out_dir, os.path.join(old, "pkg"))
        os.rename(tmp, out_dir)
        if old:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_json(path, obj) -> None:
    with open(path, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")


def write_package(out_dir, manifest: dict, mlir_text: str, weights: dict, inputs: dict, outputs: dict,
                  activations: dict | None, reference64: tuple | None = None):
    def fill(tmp):
        with open(os.path.join(tmp, "model.mlir"), "w") as f:
            f.write(mlir_text)
        save_file(_tensors(weights), os.path.join(tmp, "weights.safetensors"))
        os.makedirs(os.path.join(tmp, "golden"))
        save_file(_tensors(inputs), os.path.join(tmp, "golden", "inputs.safetensors"))
        save_file(_tensors(outputs), os.path.join(tmp, "golden", "outputs.safetensors"))
        if activations:
            save_file(_tensors(activations), os.path.join(tmp, "golden", "activations.safetensors"))
        if reference64 is not None:
            outputs64, activations64 = reference64
            save_file(_tensors(outputs64), os.path.join(tmp, "golden", "outputs64.safetensors"))
            if activations and activations64:
                save_file(_tensors(activations64), os.path.join(tmp, "golden", "activations64.safetensors"))
        write_json(os.path.join(tmp, "manifest.json"), manifest)

    write_dir_atomically(out_dir, fill)


def default_name(out_dir) -> str:
    """A package's name when none is given: its directory's name (the model-repository
    convention of Triton), so that `warpforge serve out/mlp` serves the model `mlp`."""
    return os.path.basename(os.path.abspath(os.fspath(out_dir))) or "model"


def read_manifest(pkg) -> dict:
    with open(os.path.join(pkg, "manifest.json")) as f:
        return json.load(f)


__all__ = ["write_package", "default_name", "write_dir_atomically", "write_json", "read_manifest", "torch"]
