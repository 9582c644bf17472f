"""Export coverage (docs/export_coverage.md): `aten.as_strided` as a view, models that return a
key/value cache, train-mode exports, the package name default, and the low-precision verdict of
`warpforge validate` judged against PyTorch's own bf16 error."""

import copy
import json
import pathlib
import subprocess
import sys

import pytest
import torch
from safetensors.torch import load_file, save_file

import warpforge
from helpers import WARPFORGE, check_package, manifest, validate
from warpforge.lowering import LoweringError

REPO = pathlib.Path(__file__).resolve().parents[2]


class AsStrided(torch.nn.Module):
    def __init__(self, size, stride, offset=0, pre=None):
        super().__init__()
        self.size, self.stride, self.offset, self.pre = size, stride, offset, pre

    def forward(self, x):
        x = x * 2.0  # a value computed by the graph, not the input itself
        if self.pre == "t":
            x = x.transpose(0, 1)
        return torch.as_strided(x, self.size, self.stride, self.offset) + 1.0


def _ops(pkg):
    return (pathlib.Path(pkg) / "model.mlir").read_text()


@pytest.mark.parametrize("case,size,stride,offset,pre,want_op", [
    ("reshape", (4, 6), (6, 1), 0, None, None),                     # contiguous strides: a reshape
    ("offset", (2, 6), (6, 1), 6, None, "stablehlo.slice"),         # a contiguous run at an offset
    ("transpose", (6, 4), (1, 6), 0, None, "stablehlo.transpose"),  # permuted contiguous strides
    ("of_transposed", (4, 6), (6, 1), 0, "t", "stablehlo.transpose"),  # over a transposed tensor
    ("step", (4, 3), (6, 2), 0, None, "stablehlo.gather"),          # every other column
    ("windows", (11, 4), (2, 1), 0, None, "stablehlo.gather"),      # overlapping windows (unfold)
])
def test_as_strided(case, size, stride, offset, pre, want_op, tmp_path, monkeypatch):
    from warpforge.lowering import LOWERINGS

    calls = []
    lower = LOWERINGS["aten.as_strided.default"]
    monkeypatch.setitem(LOWERINGS, "aten.as_strided.default", lambda *a, **k: calls.append(1) or lower(*a, **k))
    torch.manual_seed(0)
    x = torch.randn(4, 6) if pre != "t" else torch.randn(6, 4)
    model = AsStrided(size, stride, offset, pre)
    pkg = tmp_path / case
    warpforge.export(model, (x,), pkg)
    assert calls, "the exported graph has no aten.as_strided"
    text = _ops(pkg)
    if want_op:
        assert want_op in text
    else:
        assert "stablehlo.gather" not in text and "stablehlo.slice" not in text
    stats = check_package(pkg, tmp_path / "work")
    assert stats["max_abs"] <= 1e-6
    validate(pkg)


def test_as_strided_of_a_sparse_view_is_an_error(tmp_path):
    class M(torch.nn.Module):
        def forward(self, x):
            y = (x * 2.0)[:, ::2]  # strides (6, 2): its memory is not a value of the graph
            return torch.as_strided(y, (4, 3), (6, 2)) + 1.0

    with pytest.raises(LoweringError) as e:
        warpforge.export(M(), (torch.randn(4, 6),), tmp_path / "bad")
    assert "as_strided" in str(e.value) and "not dense" in str(e.value), str(e.value)


def test_decoder_with_default_cache(tmp_path):
    """A decoder built with its default config (use_cache=True) returns a DynamicCache; the
    exporter drops it and exports the logits."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2, vocab_size=500)
    assert cfg.use_cache
    model = LlamaForCausalLM(cfg).eval()
    ids = torch.randint(0, 500, (2, 8))
    with torch.no_grad():
        out = model(ids)
    assert type(out.past_key_values).__name__ == "DynamicCache"
    man = warpforge.export(model, (ids,), tmp_path / "llama")
    assert [o["name"] for o in man["outputs"]] == ["logits"]
    golden = load_file(str(tmp_path / "llama" / "golden" / "outputs.safetensors"))
    assert torch.equal(golden["logits"], out.logits)
    validate(tmp_path / "llama")


def test_encoder_decoder_with_default_cache(tmp_path):
    from transformers import T5Config, T5ForConditionalGeneration

    torch.manual_seed(0)
    cfg = T5Config(d_model=32, d_ff=64, d_kv=8, num_layers=1, num_decoder_layers=1, num_heads=4, vocab_size=300)
    model = T5ForConditionalGeneration(cfg).eval()
    inputs = {"input_ids": torch.randint(0, 300, (1, 6)), "decoder_input_ids": torch.randint(0, 300, (1, 4))}
    man = warpforge.export(model, inputs, tmp_path / "t5")
    assert [o["name"] for o in man["outputs"]] == ["logits", "encoder_last_hidden_state"]
    validate(tmp_path / "t5")


def test_train_mode_batchnorm(tmp_path):
    """train=True traces model.train(): BatchNorm normalises with the batch statistics, and the
    caller's module keeps its running statistics."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                                torch.nn.Flatten(), torch.nn.Linear(8 * 6 * 6, 4)).eval()
    x = torch.randn(4, 3, 8, 8) * 3 + 1
    before = {k: v.clone() for k, v in model.state_dict().items()}
    warpforge.export(model, (x,), tmp_path / "train", train=True)
    assert not model.training
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    golden = load_file(str(tmp_path / "train" / "golden" / "outputs.safetensors"))["output"]
    with torch.no_grad():
        want = copy.deepcopy(model).train()(x)
        evaluated = model(x)
    assert torch.allclose(golden, want, atol=1e-6)
    assert not torch.allclose(golden, evaluated, atol=1e-2)  # batch statistics, not running ones
    validate(tmp_path / "train")


def test_adaptive_avg_pool_to_a_larger_size(tmp_path):
    model = torch.nn.Sequential(torch.nn.AdaptiveAvgPool2d((7, 5)), torch.nn.Flatten())
    warpforge.export(model, (torch.randn(2, 3, 3, 10),), tmp_path / "pool")
    validate(tmp_path / "pool")


def test_name_defaults_to_the_directory(tmp_path):
    model = torch.nn.Linear(4, 2)
    man = warpforge.export(model, (torch.randn(1, 4),), tmp_path / "mlp")
    assert man["name"] == "mlp" and manifest(tmp_path / "mlp")["name"] == "mlp"
    man = warpforge.export(model, (torch.randn(1, 4),), str(tmp_path / "out" / "linear") + "/")
    assert man["name"] == "linear"
    man = warpforge.export(model, (torch.randn(1, 4),), tmp_path / "x", name="given")
    assert man["name"] == "given"
    out = subprocess.run([WARPFORGE, "validate", str(tmp_path / "mlp"), "--json"], capture_output=True, text=True)
    assert json.loads(out.stdout)["name"] == "mlp"


# ---- low-precision verdicts ------------------------------------------------------------------

def _chaotic_mlp():
    """16 tanh layers with gains above 1: bf16 rounding grows through the layers, so PyTorch's own
    bf16 result is several times the fixed rel_l2 limit (1e-2) from the fp32 one."""
    torch.manual_seed(0)
    layers = []
    for _ in range(16):
        lin = torch.nn.Linear(64, 64)
        torch.nn.init.normal_(lin.weight, std=0.25)
        layers += [lin, torch.nn.Tanh()]
    return torch.nn.Sequential(*layers[:-1]).eval(), (torch.randn(4, 64),)


def _validate_json(pkg):
    proc = subprocess.run([WARPFORGE, "validate", str(pkg), "--json"], capture_output=True, text=True, timeout=300)
    return proc.returncode, json.loads(proc.stdout)


@pytest.fixture(scope="module")
def chaotic_bf16(tmp_path_factory):
    model, inputs = _chaotic_mlp()
    pkg = tmp_path_factory.mktemp("lp") / "chaotic"
    man = warpforge.export(model, inputs, pkg, dtype=torch.bfloat16)
    return pkg, man


def test_manifest_records_torch_low_precision_error(chaotic_bf16):
    pkg, man = chaotic_bf16
    err = man["torch_low_precision_error"]
    assert err["dtype"] == "bf16"
    model, inputs = _chaotic_mlp()
    with torch.no_grad():
        ref = model(*inputs)
        low = model.to(torch.bfloat16)(inputs[0].to(torch.bfloat16)).float()
    want = ((low.double() - ref.double()).norm() / ref.double().norm()).item()
    assert err["outputs"]["output"]["rel_l2"] == pytest.approx(want, rel=1e-6)
    assert err["outputs"]["output"]["max_abs_err"] == pytest.approx((low - ref).abs().max().item(), rel=1e-6)
    assert want > 2e-2  # the fixed limit alone would fail PyTorch itself


def test_low_precision_passes_within_torch_error(chaotic_bf16):
    pkg, man = chaotic_bf16
    rc, v = _validate_json(pkg)
    out = v["outputs"][0]
    torch_err = man["torch_low_precision_error"]["outputs"]["output"]["rel_l2"]
    assert out["rel_l2"] > 1e-2 and out["rel_l2"] <= 1.25 * torch_err
    assert rc == 0 and v["pass"] and out["pass"]
    assert out["rule"] == "within_torch_error"
    assert out["torch_low_precision_error"]["rel_l2"] == pytest.approx(torch_err)
    assert v["low_precision_rule"]["torch_error_factor"] == 1.25
    assert v["low_precision_rule"]["rel_l2_limit"] == 1e-2
    text = validate(pkg, activations=False)
    assert "PyTorch bf16: rel_l2" in text and "within 1.25x PyTorch's own" in text


def _copy(pkg, dst):
    import shutil

    shutil.copytree(pkg, dst)
    return dst


def test_low_precision_fails_far_beyond_torch_error(chaotic_bf16, tmp_path):
    pkg = _copy(chaotic_bf16[0], tmp_path / "corrupt")
    w = load_file(str(pkg / "weights.safetensors"))
    w["30.weight"] = (w["30.weight"].float() * 1.5).to(torch.bfloat16)  # the last layer, corrupted
    save_file(w, str(pkg / "weights.safetensors"))
    rc, v = _validate_json(pkg)
    out = v["outputs"][0]
    assert rc != 0 and not v["pass"] and not out["pass"]
    assert out["rule"] == "rel_l2_limit"
    assert out["rel_l2"] > 1.25 * out["torch_low_precision_error"]["rel_l2"]
    text = subprocess.run([WARPFORGE, "validate", str(pkg)], capture_output=True, text=True).stdout
    assert "FAIL" in text and "PyTorch bf16: rel_l2" in text


def test_low_precision_nan_never_passes(chaotic_bf16, tmp_path):
    pkg = _copy(chaotic_bf16[0], tmp_path / "nan")
    w = load_file(str(pkg / "weights.safetensors"))
    w["30.bias"][0] = float("nan")
    save_file(w, str(pkg / "weights.safetensors"))
    rc, v = _validate_json(pkg)
    assert rc != 0 and not v["pass"] and v["outputs"][0]["nan_count"] > 0


def test_low_precision_old_package_keeps_fixed_limit(chaotic_bf16, tmp_path):
    """A package without the recorded error (exported before it existed) is judged by the
    fixed limit alone, as before."""
    pkg = _copy(chaotic_bf16[0], tmp_path / "old")
    man = manifest(pkg)
    del man["torch_low_precision_error"]
    (pkg / "manifest.json").write_text(json.dumps(man))
    rc, v = _validate_json(pkg)
    assert rc != 0 and not v["pass"]
    assert "rule" not in v["outputs"][0] and "low_precision_rule" not in v


def test_fp32_package_records_no_low_precision_error(tmp_path):
    man = warpforge.export(torch.nn.Linear(4, 2), (torch.randn(1, 4),), tmp_path / "fp32")
    assert "torch_low_precision_error" not in man


@pytest.mark.parametrize("family,models", [("torchvision", "squeezenet1_1"), ("transformers", "gpt2")])
def test_coverage_script(family, models, tmp_path):
    """A tiny subset of scripts/export_coverage.py (the whole run is not part of the suite)."""
    out = tmp_path / "rows.json"
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "export_coverage.py"), "--family", family,
                           "--models", models, "--mode", "both", "--json", str(out), "--warpforge", WARPFORGE],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = json.loads(out.read_text())
    assert [(r["model"], r["mode"], r["export"], r["validate"]) for r in rows] == [
        (models, "eval", True, True), (models, "train", True, True)], rows
    assert f"{family} eval: 1 models, export ok 1" in proc.stdout
