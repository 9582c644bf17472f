"""Runs exported packages with the `warpforge` CLI and compares with PyTorch."""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess

import torch
from safetensors.torch import load_file, save_file
from torch import nn

REPO = pathlib.Path(__file__).resolve().parents[2]
WARPFORGE = os.environ.get("WARPFORGE", str(REPO / "build" / "warpforge"))


class MLP(nn.Module):
    """Linear-LayerNorm-ReLU-Linear (6 -> 16 -> 4): the small model of the training tests."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 16)
        self.norm = nn.LayerNorm(16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.norm(self.fc1(x))))


def manifest(pkg) -> dict:
    return json.loads((pathlib.Path(pkg) / "manifest.json").read_text())


def with_activation_results(mlir: str, man: dict) -> str:
    """model.mlir with the recorded activations appended to @main's results (to read them back
    with `warpforge run`)."""
    acts = man.get("activations", [])
    if not acts:
        return mlir
    types = {}
    for m in re.finditer(r"^\s*(%[A-Za-z0-9_$.\-]+) = .* -> (tensor<[^>]*>)(?: loc\(.*\))?$", mlir, re.M):
        types[m.group(1)] = m.group(2)
    names = [a["value"] for a in acts]
    missing = [n for n in names if n not in types]
    assert not missing, f"activation values not defined in model.mlir: {missing}"
    ret = re.search(r"^(\s*)func\.return (.*) : (.*)$", mlir, re.M)
    assert ret, "no func.return in model.mlir"
    vals = ret.group(2) + ", " + ", ".join(names)
    tys = ret.group(3) + ", " + ", ".join(types[n] for n in names)
    mlir = mlir[:ret.start()] + f"{ret.group(1)}func.return {vals} : {tys}" + mlir[ret.end():]
    sig = re.search(r"\) -> \((.*)\) \{\n", mlir)
    return mlir[:sig.start()] + f") -> ({tys}) {{\n" + mlir[sig.end():]


def run_package(pkg, workdir, inputs: dict | None = None, activations=False):
    """Runs the package's entry function on its golden inputs (or `inputs`), returning the list
    of results (outputs, then activations when asked) as float64 / integer numpy arrays."""
    pkg = pathlib.Path(pkg)
    workdir = pathlib.Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    man = manifest(pkg)
    mlir_path = pkg / "model.mlir"
    if activations and man.get("activations"):
        mlir_path = workdir / "model_with_activations.mlir"
        mlir_path.write_text(with_activation_results((pkg / "model.mlir").read_text(), man))
    in_path = pkg / "golden" / "inputs.safetensors"
    if inputs is not None:
        in_path = workdir / "inputs.safetensors"
        save_file({k: v.contiguous() for k, v in inputs.items()}, str(in_path))
    out_dir = workdir / "out"
    cmd = [WARPFORGE, "run", str(mlir_path), "--input", str(pkg / "weights.safetensors"), "--input", str(in_path),
           "--output-dir", str(out_dir), "--output-format", "safetensors"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stderr[-4000:]}"
    res = load_file(str(out_dir / "outputs.safetensors"))
    return [res[f"out{i}"].to(torch.float64) if res[f"out{i}"].is_floating_point() else res[f"out{i}"]
            for i in range(len(res))]


def compare(actual: torch.Tensor, expected: torch.Tensor, tol: dict, what: str, reference=None) -> dict:
    """Checks `actual` against `expected` under the manifest tolerance; returns error stats.

    With `reference` (the same model computed in float64), an element outside rtol/atol still
    passes where WarpForge's result is at least as close to the float64 result as PyTorch's
    float32 one (up to atol), or no further from it than twice PyTorch's worst float32 error on
    that tensor: a sum that cancels has an error of about n*eps*sum|terms|, so two correct
    float32 implementations can differ there by more than rtol of the small result."""
    assert tuple(actual.shape) == tuple(expected.shape), f"{what}: shape {tuple(actual.shape)} != {tuple(expected.shape)}"
    if not expected.is_floating_point():
        assert torch.equal(actual.to(expected.dtype), expected), f"{what}: integer results differ"
        return {"max_abs": 0.0, "max_rel": 0.0}
    a = actual.to(torch.float64)
    e = expected.to(torch.float64)
    assert torch.isfinite(a).all() == torch.isfinite(e).all(), f"{what}: non-finite values differ"
    diff = (a - e).abs()
    stats = {"max_abs": float(diff.max()) if diff.numel() else 0.0,
             "max_rel": float((diff / e.abs().clamp_min(1e-30)).max()) if diff.numel() else 0.0}
    if "rel_l2" in tol:
        rel = float(torch.linalg.vector_norm(a - e) / torch.linalg.vector_norm(e).clamp_min(1e-30))
        stats["rel_l2"] = rel
        assert rel <= tol["rel_l2"], f"{what}: relative L2 error {rel:.3g} > {tol['rel_l2']}"
    else:
        bad = diff > tol["atol"] + tol["rtol"] * e.abs()
        if bad.any() and reference is not None:
            ref = reference.to(torch.float64)
            ours = (a - ref).abs()[bad]
            theirs = (e - ref).abs()[bad]
            stats["arbitrated"] = int(bad.sum())
            stats["max_abs_vs_f64"] = float(ours.max())
            stats["torch_max_abs_vs_f64"] = float(theirs.max())
            # PyTorch's own worst float32 error on this tensor bounds the noise of a correct
            # float32 implementation; allow twice it
            envelope = 2 * float((e - ref).abs().max())
            bad = bad.clone()
            bad[bad.clone()] = (ours > theirs + tol["atol"]) & (ours > envelope)
        assert not bad.any(), (f"{what}: {int(bad.sum())} of {bad.numel()} elements outside rtol {tol['rtol']} "
                               f"atol {tol['atol']}; max abs {stats['max_abs']:.3g} max rel {stats['max_rel']:.3g}")
    return stats


def float64_reference(model, inputs, activation_paths):
    """The model's outputs and recorded activations computed in float64 (an arbiter for
    elements where float32 results of different summation orders legitimately differ)."""
    import copy

    from warpforge.activations import Recorder

    m = copy.deepcopy(model).double().eval()
    rec = Recorder(m, activation_paths)
    with torch.no_grad():
        out = m(*[x.double() if x.is_floating_point() else x for x in inputs])
    rec.remove()
    leaves = [t for t in torch.utils._pytree.tree_leaves(out) if isinstance(t, torch.Tensor)]
    return leaves, rec.values


def check_package(pkg, workdir, activations=True, reference64=None) -> dict:
    """Runs the package on its golden inputs and checks outputs (and activations) against the
    golden tensors under the manifest's tolerances. Returns the worst errors seen.
    `reference64`: (outputs, activations) of float64_reference, the arbiter of compare()."""
    man = manifest(pkg)
    results = run_package(pkg, workdir, activations=activations)
    golden = load_file(str(pathlib.Path(pkg) / man["golden"]["outputs"]))
    tol = man["tolerances"]
    worst = {"max_abs": 0.0, "max_rel": 0.0}
    for o in man["outputs"]:
        ref = reference64[0][o["result"]] if reference64 else None
        s = compare(results[o["result"]], golden[o["name"]], tol, f"output {o['name']}", ref)
        _merge(worst, s)
    if activations and man.get("activations"):
        acts = load_file(str(pathlib.Path(pkg) / man["golden"]["activations"]))
        n = len(man["outputs"])
        for i, a in enumerate(man["activations"]):
            # activations pass through more rounding steps than outputs in low precision;
            # fp32 uses the same elementwise bound as outputs
            ref = reference64[1].get(a["name"]) if reference64 else None
            s = compare(results[n + i], acts[a["name"]], tol, f"activation {a['name']}", ref)
            _merge(worst, s)
    return worst


def _merge(worst, s):
    for k, v in s.items():
        worst[k] = worst.get(k, 0) + v if k == "arbitrated" else max(worst.get(k, 0.0), v)


def validate(pkg, activations=True):
    cmd = [WARPFORGE, "validate", str(pkg)] + (["--activations"] if activations else [])
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


__all__ = ["run_package", "check_package", "compare", "manifest", "validate", "float64_reference"]


def run_mlir(mlir_path, inputs: dict, workdir, entry: str | None = None) -> list:
    """Runs a function of an MLIR file with `warpforge run`, every argument bound by name from
    `inputs` (written as one safetensors file); returns the results as torch tensors."""
    workdir = pathlib.Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    in_path = workdir / "inputs.safetensors"
    save_file({k: v.detach().contiguous().clone() for k, v in inputs.items()}, str(in_path))
    out_dir = workdir / "out"
    cmd = [WARPFORGE, "run", str(mlir_path), "--input", str(in_path), "--output-dir", str(out_dir),
           "--output-format", "safetensors"]
    if entry:
        cmd += ["--entry", entry]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stderr[-4000:]}"
    res = load_file(str(out_dir / "outputs.safetensors"))
    return [res[f"out{i}"] for i in range(len(res))]


def by_rank(text: str) -> dict:
    """Each rank's lines of `warpforge launch` output, without the `[rank k] ` prefix."""
    out = {}
    for line in text.splitlines():
        if line.startswith("[rank "):
            k, _, rest = line[len("[rank "):].partition("] ")
            out.setdefault(int(k), []).append(rest)
    return {k: "\n".join(v) for k, v in out.items()}
