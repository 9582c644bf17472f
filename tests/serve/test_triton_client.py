"""A client no one here wrote, tritonclient[http] from PyPI, against `warpforge serve`: outputs
equal `warpforge run`'s on the same inputs, with JSON and with binary tensors, several models on
one server."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
import tritonclient.http as httpclient

from conftest import warpforge_binary


def run_cli(package, inputs: dict, tmp_path) -> dict:
    """`warpforge run PKG --input NAME=FILE.npy -o DIR`: outputs by name."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    args = [warpforge_binary(), "run", str(package), "-o", str(tmp_path / "out")]
    for name, value in inputs.items():
        np.save(tmp_path / f"{name}.npy", value)
        args += ["--input", f"{name}={tmp_path / f'{name}.npy'}"]
    subprocess.run(args, check=True, capture_output=True)
    return {p.stem: np.load(p) for p in (tmp_path / "out").glob("*.npy")}


def triton_infer(client, model, inputs: dict, binary: bool, outputs=None):
    dtypes = {np.float32: "FP32", np.int64: "INT64"}
    infer_inputs = []
    for name, value in inputs.items():
        t = httpclient.InferInput(name, list(value.shape), dtypes[value.dtype.type])
        t.set_data_from_numpy(value, binary_data=binary)
        infer_inputs.append(t)
    requested = [httpclient.InferRequestedOutput(o, binary_data=binary) for o in outputs] if outputs else None
    result = client.infer(model, infer_inputs, outputs=requested, request_id="t-1")
    return result


@pytest.mark.parametrize("binary", [False, True], ids=["json", "binary"])
def test_tritonclient_matches_warpforge_run(packages, serve, tmp_path, binary):
    server = serve(f"mobilenet={packages['mobilenet']}", f"bert={packages['bert']}", f"mlp={packages['mlp']}")
    client = httpclient.InferenceServerClient(url=server.host_port)
    assert client.is_server_live() and client.is_server_ready()
    for model in ("mobilenet", "bert", "mlp"):
        assert client.is_model_ready(model)
    meta = client.get_model_metadata("mobilenet")
    assert meta["name"] == "mobilenet"
    assert meta["inputs"][0]["datatype"] == "FP32" and meta["inputs"][0]["shape"] == [-1, 3, 224, 224]
    server_meta = client.get_server_metadata()
    assert "binary_tensor_data" in server_meta["extensions"]

    rng = np.random.default_rng(0)
    image = rng.standard_normal((2, 3, 224, 224), dtype=np.float32)
    expected = run_cli(packages["mobilenet"], {"x": image}, tmp_path / "mobilenet")
    result = triton_infer(client, "mobilenet", {"x": image}, binary)
    out = result.as_numpy("output")
    assert out.dtype == np.float32 and out.shape == expected["output"].shape
    np.testing.assert_array_equal(out, expected["output"])
    assert result.get_response()["id"] == "t-1"

    ids = rng.integers(0, 1000, size=(3, 16), dtype=np.int64)
    bert_meta = client.get_model_metadata("bert")
    input_name = bert_meta["inputs"][0]["name"]
    expected = run_cli(packages["bert"], {input_name: ids}, tmp_path / "bert")
    names = [o["name"] for o in bert_meta["outputs"]]
    result = triton_infer(client, "bert", {input_name: ids}, binary, outputs=names)
    for name in names:
        np.testing.assert_array_equal(result.as_numpy(name), expected[name])
    # Only the output asked for comes back.
    result = triton_infer(client, "bert", {input_name: ids}, binary, outputs=names[:1])
    assert [o["name"] for o in result.get_response()["outputs"]] == names[:1]
    assert server.stop() == 0


def test_binary_inputs_with_json_outputs_and_back(packages, serve, tmp_path):
    server = serve(str(packages["mlp"]))
    client = httpclient.InferenceServerClient(url=server.host_port)
    x = np.random.default_rng(1).standard_normal((5, 64), dtype=np.float32)
    expected = run_cli(packages["mlp"], {"x": x}, tmp_path)["output"]
    t = httpclient.InferInput("x", [5, 64], "FP32")
    t.set_data_from_numpy(x, binary_data=True)
    for binary_out in (False, True):
        result = client.infer("mlp", [t], outputs=[httpclient.InferRequestedOutput("output", binary_data=binary_out)])
        np.testing.assert_array_equal(result.as_numpy("output"), expected)
    t = httpclient.InferInput("x", [5, 64], "FP32")
    t.set_data_from_numpy(x, binary_data=False)
    result = client.infer("mlp", [t], outputs=[httpclient.InferRequestedOutput("output", binary_data=True)])
    np.testing.assert_array_equal(result.as_numpy("output"), expected)
    assert server.stop() == 0
