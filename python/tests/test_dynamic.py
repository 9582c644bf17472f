"""dynamic_batch=True: the batch dimension is `?` in the StableHLO types, and one package runs
any batch size."""

import re

import pytest
import torch

import warpforge
from helpers import compare, run_package, validate
from zoo import ZOO, bert_small

class DynamicOps(torch.nn.Module):
    """Ops whose lowering needs the runtime batch size: dynamic_gather (index_select keeps the
    batch dimension in its slice), dynamic_pad, dynamic_iota (arange over the batch),
    real_dynamic_slice, and products of the batch size in reshapes."""

    def __init__(self):
        super().__init__()
        self.register_buffer("idx", torch.tensor([3, 0, 2, 2]))
        self.lin = torch.nn.Linear(5, 5)

    def forward(self, x):
        b = x.shape[0]
        y = torch.index_select(x, 2, self.idx)                      # [B, 3, 4]
        y = torch.nn.functional.pad(y, (1, 0, 2, 1), value=-1.0)    # [B, 6, 5]
        pos = torch.arange(b, dtype=torch.float32).view(b, 1, 1)    # [B, 1, 1]
        flat = self.lin(y).reshape(b * 6, 5)                        # [B*6, 5]
        z = flat[:, 1:4].reshape(b, 6, 3) * pos
        return z.softmax(-1), torch.gather(x, 1, x.argmax(1, keepdim=True))


def dynamic_ops():
    torch.manual_seed(0)
    return DynamicOps(), (torch.randn(2, 3, 5),)


def bert_masked():
    model, (ids,) = bert_small(seq=16, batch=2)
    mask = torch.ones_like(ids)
    mask[0, 10:] = 0
    mask[1, 5:] = 0
    return model, (ids, mask, torch.randint(0, 2, ids.shape, generator=torch.Generator().manual_seed(3)))


MODELS = {"dynamic_ops": dynamic_ops, "bert_masked": bert_masked, "embednet": ZOO["embednet"], "bert_small": bert_small, "convnet": ZOO["convnet"], "lstm": ZOO["lstm"],
          "mha": ZOO["mha"], "resnet18": ZOO["resnet18"], "mobilenet_v3_small": ZOO["mobilenet_v3_small"],
          "gpt2": lambda: ZOO["gpt2"](seq=8), "llama": lambda: ZOO["llama"](seq=8)}


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
    validate(pkg)
