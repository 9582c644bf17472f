"""bfloat16 / float16 exports: golden outputs are the float32 model's, judged by relative L2
error (under 1e-2)."""

import pytest
import torch
from safetensors.torch import load_file

import warpforge
from helpers import check_package, manifest, validate
from zoo import ZOO


@pytest.mark.parametrize("name,dtype", [("bert", torch.bfloat16), ("llama", torch.bfloat16),
                                        ("embednet", torch.float16), ("convnet", torch.bfloat16),
                                        ("resnet18", torch.float16)])
def test_low_precision(name, dtype, tmp_path):
    model, inputs = ZOO[name]()
    pkg = tmp_path / name
    man = warpforge.export(model, inputs, pkg, dtype=dtype)
    et = {torch.bfloat16: "bf16", torch.float16: "f16"}[dtype]
    assert man["dtype"] == et
    assert man["tolerances"] == {"rel_l2": 1e-2}
    assert all(w["dtype"] == et for w in man["weights"] if w["kind"] == "parameter")
    weights = load_file(str(pkg / "weights.safetensors"))
    assert all(weights[w["name"]].dtype == dtype for w in man["weights"] if w["kind"] == "parameter")
    # golden outputs are the float32 model's
    golden = load_file(str(pkg / "golden" / "outputs.safetensors"))
    with torch.no_grad():
        ref = model.float().eval()(*inputs)
    first = ref if isinstance(ref, torch.Tensor) else [t for t in torch.utils._pytree.tree_leaves(ref)][0]
    assert golden[man["outputs"][0]["name"]].dtype == torch.float32
    assert torch.equal(golden[man["outputs"][0]["name"]], first)
    assert man["outputs"][0]["dtype"] == et
    stats = check_package(pkg, tmp_path / "work")
    print(f"{name} {et}: relative L2 error {stats['rel_l2']:.3g}")
    assert manifest(pkg)["tolerances"]["rel_l2"] == 1e-2
    validate(pkg)


def test_bf16_with_dynamic_batch(tmp_path):
    from zoo import llama

    model, inputs = llama(seq=8, batch=2)
    pkg = tmp_path / "llama"
    man = warpforge.export(model, inputs, pkg, dtype=torch.bfloat16, dynamic_batch=True)
    assert man["inputs"][0]["shape"] == ["batch", 8]
    # activations are computed (and named) in f32 inside a bf16 export
    assert [a["dtype"] for a in man["activations"]] == ["f32", "f32"]
    stats = check_package(pkg, tmp_path / "work")
    assert stats["rel_l2"] <= 1e-2
    validate(pkg)
