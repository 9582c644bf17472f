"""The package layout of docs/model-package.md: manifest fields, weights as entry-function
arguments keyed by state_dict names, locations, activation SSA names, and text the WarpForge
parser accepts."""

import json
import re
import subprocess

import torch
from safetensors.torch import load_file
from torch import nn

import warpforge
from helpers import WARPFORGE, check_package


class TinyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.stages = nn.ModuleList([nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU()) for _ in range(3)])
        self.register_buffer("scale", torch.tensor(0.5))
        self.head = nn.Linear(8, 4)

    def forward(self, image, bias):
        h = self.bn(self.stem(image))
        for s in self.stages:
            h = s(h) + h
        h = torch.nn.functional.max_pool2d(h, 2)
        return self.head(h.mean(dim=(2, 3)) * self.scale) + bias * torch.tensor([1.0, 2.0, 3.0, 4.0])


def _export(tmp_path, **kw):
    torch.manual_seed(0)
    model = TinyNet()
    inputs = (torch.randn(2, 3, 8, 8), torch.randn(2, 4))
    return model, inputs, warpforge.export(model, inputs, tmp_path / "tiny", name="tiny", **kw)


def test_manifest_and_weights(tmp_path):
    model, _, man = _export(tmp_path)
    pkg = tmp_path / "tiny"
    assert json.loads((pkg / "manifest.json").read_text()) == man
    assert man["format"] == "warpforge.package" and man["format_version"] == 1
    assert man["entry"] == "main" and man["name"] == "tiny" and man["dtype"] == "f32"
    assert man["producer"]["name"] == "warpforge.export" and man["producer"]["torch"] == torch.__version__
    assert man["tolerances"] == {"rtol": 1e-3, "atol": 1e-5}
    assert [(i["name"], i["argument"], i["shape"]) for i in man["inputs"]] == [("image", 0, [2, 3, 8, 8]),
                                                                                ("bias", 1, [2, 4])]
    assert [w["argument"] for w in man["weights"]] == list(range(2, 2 + len(man["weights"])))
    sd = model.state_dict()
    kinds = {w["name"]: w["kind"] for w in man["weights"]}
    for name in sd:
        if name.endswith("num_batches_tracked"):
            continue  # unused by the eval-mode graph
        assert name in kinds, name
    assert kinds["stem.weight"] == "parameter" and kinds["bn.running_mean"] == "buffer" and kinds["scale"] == "buffer"
    assert [k for k, v in kinds.items() if v == "constant"], "the lifted tensor constant is a weight argument"
    weights = load_file(str(pkg / "weights.safetensors"))
    assert sorted(weights) == sorted(kinds)
    for w in man["weights"]:
        assert list(weights[w["name"]].shape) == w["shape"]
        if w["name"] in sd:
            assert torch.equal(weights[w["name"]], sd[w["name"]])
    assert man["outputs"] == [{"name": "output", "result": 0, "dtype": "f32", "shape": [2, 4]}]
    assert [a["name"] for a in man["activations"]] == ["stages.0", "stages.1", "stages.2"]
    acts = load_file(str(pkg / "golden" / "activations.safetensors"))
    assert sorted(acts) == ["stages.0", "stages.1", "stages.2"]


def test_mlir_arguments_locations_and_ssa_names(tmp_path):
    _, _, man = _export(tmp_path)
    text = (tmp_path / "tiny" / "model.mlir").read_text()
    header = text[:text.index(") -> (")]
    args = re.findall(r"(%[A-Za-z0-9_$.\-]+): (tensor<[^>]*>) \{mhlo.name = \"([^\"]+)\"\}", header)
    names = [i["name"] for i in man["inputs"]] + [w["name"] for w in man["weights"]]
    assert [a[2] for a in args] == names
    # weights are never inlined: every constant is a splat or a short shape/index list
    for m in re.finditer(r"value = dense<(.*?)> : tensor<([^>]*)>", text):
        assert not m.group(1).startswith("[") or m.group(1).count(",") < 8, m.group(0)
    # locations carry the module path and the source line
    assert re.search(r'loc\("stem"\("[^"]+conv\.py":\d+:0\)\)', text)
    assert re.search(r'loc\((?:"[^"]*"\()?"' + re.escape(__file__) + r'":\d+:0\)', text)
    for a in man["activations"]:
        assert re.search(r"^\s*" + re.escape(a["value"]) + " = ", text, re.M), a


def test_warpforge_parses_prints_and_runs(tmp_path):
    _export(tmp_path)
    pkg = tmp_path / "tiny"
    proc = subprocess.run([WARPFORGE, "print", str(pkg / "model.mlir")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "stablehlo.convolution" in proc.stdout
    stats = check_package(pkg, tmp_path / "work")
    assert stats["max_abs"] < 1e-4


def test_console_script_entry(tmp_path):
    from warpforge import cli

    rc = cli.main(["test_package:TinyNet", str(tmp_path / "cli"), "--input-shape", "1,3,8,8", "--input-shape", "1,4",
                   "--dynamic-batch"])
    assert rc == 0
    man = json.loads((tmp_path / "cli" / "manifest.json").read_text())
    assert man["inputs"][0]["shape"] == ["batch", 3, 8, 8]
    check_package(tmp_path / "cli", tmp_path / "work")


def test_keyword_inputs(tmp_path):
    from zoo import bert_small

    model, (ids,) = bert_small(seq=8, batch=2)
    mask = torch.ones_like(ids)
    mask[1, 5:] = 0
    # given out of forward's order: the package keeps the order and names of the dict
    inputs = {"attention_mask": mask, "input_ids": ids}
    man = warpforge.export(model, inputs, tmp_path / "kw", dynamic_batch=True)
    assert [(i["name"], i["argument"]) for i in man["inputs"]] == [("attention_mask", 0), ("input_ids", 1)]
    golden = load_file(str(tmp_path / "kw" / "golden" / "inputs.safetensors"))
    assert torch.equal(golden["attention_mask"], mask) and torch.equal(golden["input_ids"], ids)
    with torch.no_grad():
        want = model(input_ids=ids, attention_mask=mask).last_hidden_state
    assert torch.equal(load_file(str(tmp_path / "kw" / "golden" / "outputs.safetensors"))["last_hidden_state"], want)
    check_package(tmp_path / "kw", tmp_path / "work")
