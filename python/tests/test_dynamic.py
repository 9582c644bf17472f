"""dynamic_batch=True: the batch dimension is `?` in the StableHLO types, and one package runs
any batch size."""

import re

import pytest
import torch

import warpforge
from helpers import compare, has_validate, run_package, validate
from zoo import ZOO, bert_small

MODELS = {"embednet": ZOO["embednet"], "bert_small": bert_small, "convnet": ZOO["convnet"], "lstm": ZOO["lstm"],
          "mha": ZOO["mha"], "resnet18": ZOO["resnet18"], "llama": lambda: ZOO["llama"](seq=8)}


def _like(x: torch.Tensor, batch: int, gen: torch.Generator) -> torch.Tensor:
    shape = (batch,) + tuple(x.shape[1:])
    if x.is_floating_point():
        return torch.randn(shape, generator=gen, dtype=x.dtype)
    return torch.randint(0, int(x.max()) + 1, shape, generator=gen, dtype=x.dtype)


@pytest.mark.parametrize("name", list(MODELS))
def test_dynamic_batch(name, tmp_path):
    model, inputs = MODELS[name]()
    pkg = tmp_path / name
    man = warpforge.export(model, inputs, pkg, dynamic_batch=True)
    assert man["dynamic_dims"] == {"batch": {"min": 1, "max": None}}
    assert all(i["shape"][0] == "batch" for i in man["inputs"])
    text = (pkg / "model.mlir").read_text()
    sig = text[:text.index(") -> (")]
    assert len(re.findall(r"tensor<\?x", sig)) == len(man["inputs"]), "inputs must have a dynamic batch"
    gen = torch.Generator().manual_seed(1)
    for batch in (1, 3):
        xs = tuple(_like(x, batch, gen) for x in inputs)
        with torch.no_grad():
            expected = model.eval()(*xs)
        leaves = [t for t in torch.utils._pytree.tree_leaves(expected) if isinstance(t, torch.Tensor)]
        results = run_package(pkg, tmp_path / f"work{batch}",
                              inputs={spec["name"]: x for spec, x in zip(man["inputs"], xs)})
        for spec, want in zip(man["outputs"], leaves):
            compare(results[spec["result"]], want, man["tolerances"], f"{name} batch {batch} {spec['name']}")
    if has_validate():
        validate(pkg)
