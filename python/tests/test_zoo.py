"""The model zoo, exported in float32 and run on WarpForge: every output and every recorded
per-layer activation must match PyTorch within rtol 1e-3 / atol 1e-5."""

import pytest
import torch
from safetensors.torch import load_file

import warpforge
from helpers import check_package, float64_reference, manifest, validate
from zoo import ZOO

# which module paths each model records as its main stack
EXPECTED_ACTIVATIONS = {
    "resnet18": ["layer1", "layer2", "layer3", "layer4"],
    "resnet50": ["layer1", "layer2", "layer3", "layer4"],
    "mobilenet_v3_small": [f"features.{i}" for i in range(13)],
    "vit_b_16": [f"encoder.layers.encoder_layer_{i}" for i in range(12)],
    "bert": [f"encoder.layer.{i}" for i in range(12)],
    "bert_qa": [f"bert.encoder.layer.{i}" for i in range(12)],
    "gpt2": ["transformer.h.0", "transformer.h.1"],
    "llama": ["model.layers.0", "model.layers.1"],
    "embednet": ["blocks.0", "blocks.1", "blocks.2"],
    "mha": [],
    "lstm": [],
    "convnet": [],
}


@pytest.mark.parametrize("name", list(ZOO))
def test_zoo_fp32(name, tmp_path):
    model, inputs = ZOO[name]()
    pkg = tmp_path / name
    man = warpforge.export(model, inputs, pkg, name=name)

    # the golden outputs are PyTorch's outputs on the golden inputs
    golden_in = load_file(str(pkg / "golden" / "inputs.safetensors"))
    for spec, x in zip(man["inputs"], inputs):
        assert torch.equal(golden_in[spec["name"]], x)
    with torch.no_grad():
        expected = model.eval()(*inputs)
    leaves = [t for t in torch.utils._pytree.tree_leaves(expected) if isinstance(t, torch.Tensor)]
    golden_out = load_file(str(pkg / "golden" / "outputs.safetensors"))
    assert [o["name"] for o in man["outputs"]] == list(golden_out.keys()) or \
        sorted(o["name"] for o in man["outputs"]) == sorted(golden_out.keys())
    for spec, t in zip(man["outputs"], leaves):
        assert torch.equal(golden_out[spec["name"]], t), spec["name"]

    assert [a["name"] for a in man.get("activations", [])] == EXPECTED_ACTIVATIONS[name]
    ref64 = float64_reference(model, inputs, [a["name"] for a in man.get("activations", [])])
    stats = check_package(pkg, tmp_path / "work", reference64=ref64)
    print(f"{name}: max abs error {stats['max_abs']:.3g}, max rel error {stats['max_rel']:.3g}, "
          f"elements outside rtol/atol but no further from float64 than PyTorch: {stats.get('arbitrated', 0)}")
    # fp32 packages carry the float64 run that lets validate tell rounding noise from divergence
    assert man["golden"]["outputs64"] == "golden/outputs64.safetensors"
    if man.get("activations"):
        assert man["golden"]["activations64"] == "golden/activations64.safetensors"
    validate(pkg)


def test_manifest_names_outputs_after_model_structure(tmp_path):
    model, inputs = ZOO["lstm"]()
    man = warpforge.export(model, inputs, tmp_path / "lstm")
    assert [o["name"] for o in man["outputs"]] == ["output.0", "output.1.0", "output.1.1"]
    model, inputs = ZOO["embednet"]()
    man = warpforge.export(model, inputs, tmp_path / "embednet")
    assert [o["name"] for o in man["outputs"]] == ["output.0", "output.1"]
    assert manifest(tmp_path / "embednet")["inputs"][0]["name"] == "ids"
