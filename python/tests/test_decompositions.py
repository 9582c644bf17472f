"""The exporter's corrections to torch's decompositions.

torch 2.11's `aten.lstm.input` decomposition returns the final hidden and cell states as
[layers * directions, 1, batch, hidden] instead of [layers * directions, batch, hidden] (its
`one_layer_lstm` squeezes dimension 1 of each layer's [1, batch, hidden] state instead of
dimension 0). These tests put that behaviour into the installed torch and check that the
package still has the model's output shapes and values."""

import importlib

import pytest
import torch
from torch import nn
from torch._decomp import decompositions

import warpforge
from helpers import compare, run_package, validate

export_module = importlib.import_module("warpforge.export")


@pytest.fixture
def lstm_states_squeezed_at_1(monkeypatch):
    """torch's one-layer LSTM decomposition as torch 2.11 has it: each layer's last states are
    returned as `hx.squeeze(1)` of the [1, batch, hidden] step state."""
    original = decompositions.one_layer_lstm
    calls = []

    def one_layer_lstm(inp, hidden, params, has_biases, reverse=False):
        calls.append(1)
        out, (h, c) = original(inp, hidden, params, has_biases, reverse=reverse)
        if h.dim() == hidden[0].dim():  # a torch whose decomposition squeezes dimension 0
            h, c = h.unsqueeze(0), c.unsqueeze(0)
        return out, (h.squeeze(1), c.squeeze(1))

    monkeypatch.setattr(decompositions, "one_layer_lstm", one_layer_lstm)
    return calls


def _seeded(make):
    torch.manual_seed(0)
    return make()


LSTMS = {
    "two_layers_batch_first": lambda: (nn.LSTM(16, 32, num_layers=2, batch_first=True), torch.randn(2, 7, 16)),
    "bidirectional": lambda: (nn.LSTM(8, 12, num_layers=2, bidirectional=True), torch.randn(5, 3, 8)),
    "projection": lambda: (nn.LSTM(8, 12, proj_size=6, batch_first=True), torch.randn(3, 4, 8)),
    "batch_1": lambda: (nn.LSTM(8, 12, batch_first=True), torch.randn(1, 4, 8)),
}


@pytest.mark.parametrize("name", list(LSTMS))
def test_lstm_final_states_keep_their_shape(name, tmp_path, lstm_states_squeezed_at_1):
    model, x = _seeded(LSTMS[name])
    with torch.no_grad():
        out, (h, c) = model.eval()(x)
    pkg = tmp_path / name
    man = warpforge.export(model, (x,), pkg)
    assert lstm_states_squeezed_at_1, "the LSTM was not decomposed through one_layer_lstm"
    assert [o["shape"] for o in man["outputs"]] == [list(out.shape), list(h.shape), list(c.shape)]
    text = (pkg / "model.mlir").read_text()
    sig = text[text.index(") -> ("):text.index("\n", text.index(") -> ("))]
    for t in (h, c):
        assert "tensor<" + "x".join(map(str, t.shape)) + "xf32>" in sig
    validate(pkg)


def test_lstm_final_states_dynamic_batch(tmp_path, lstm_states_squeezed_at_1):
    model, x = _seeded(LSTMS["two_layers_batch_first"])
    pkg = tmp_path / "lstm"
    man = warpforge.export(model, (x,), pkg, dynamic_batch=True)
    assert [o["shape"] for o in man["outputs"]] == [["batch", 7, 32], [2, "batch", 32], [2, "batch", 32]]
    x3 = torch.randn(3, 7, 16, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        out, (h, c) = model.eval()(x3)
    results = run_package(pkg, tmp_path / "work", inputs={man["inputs"][0]["name"]: x3})
    for spec, want in zip(man["outputs"], (out, h, c)):
        compare(results[spec["result"]], want, man["tolerances"], spec["name"])


def test_wrong_output_shape_is_an_export_error(tmp_path, monkeypatch, lstm_states_squeezed_at_1):
    """Without the correction the exported program's outputs have another shape than the
    model's; the export refuses to write such a package."""
    monkeypatch.setattr(export_module, "_lstm_state_shapes", lambda decomposition: decomposition)
    model, x = _seeded(LSTMS["two_layers_batch_first"])
    with pytest.raises(RuntimeError, match=r"output 'output.1.0': the exported program gives shape \[2, 1, 2, 32\]"):
        warpforge.export(model, (x,), tmp_path / "lstm")
    assert not (tmp_path / "lstm").exists()
