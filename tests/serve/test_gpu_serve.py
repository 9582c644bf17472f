"""`warpforge serve --device cuda` with dynamic batching: concurrent requests of different row
counts are merged (padded to a power of two on the static-shape CUDA backend, one shape
specialization per power) and every client gets the rows `warpforge run` on the CPU gives.
Skipped without a GPU or a CUDA build (reported as skipped, never as passed)."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import urllib.request

import numpy as np
import pytest

from conftest import warpforge_binary


def gpu_available() -> bool:
    if not shutil.which("nvidia-smi"):
        return False
    probe = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
    return probe.returncode == 0 and "GPU" in probe.stdout


def infer(port, model, x):
    body = {"inputs": [{"name": "x", "shape": list(x.shape), "datatype": "FP32", "data": x.ravel().tolist()}]}
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v2/models/{model}/infer", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        out = json.loads(r.read())["outputs"][0]
    return np.array(out["data"], dtype=np.float32).reshape(out["shape"])


def test_dynamic_batching_on_cuda_matches_the_cpu(packages, serve, tmp_path):
    if not gpu_available():
        pytest.skip("no NVIDIA GPU")
    try:
        server = serve(f"mlp={packages['mlp']}", "--device", "cuda", "--max-batch", "8", "--batch-timeout-us", "20000")
    except RuntimeError as e:
        if "cuda" in str(e) and ("not built" in str(e) or "unknown device" in str(e)):
            pytest.skip(f"no CUDA backend in this build: {e}")
        raise
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((1 + i % 3, 64), dtype=np.float32) for i in range(24)]
    results = [None] * len(inputs)

    def client(i):
        results[i] = infer(server.port, "mlp", inputs[i])

    threads = [threading.Thread(target=client, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # The reference: the CPU backend on each request alone.
    for i, x in enumerate(inputs):
        np.save(tmp_path / "x.npy", x)
        out = tmp_path / f"out{i}"
        subprocess.run([warpforge_binary(), "run", str(packages["mlp"]), "--device", "cpu", "--input",
                        f"x={tmp_path / 'x.npy'}", "-o", str(out)], check=True, capture_output=True)
        want = np.load(out / "output.npy")
        assert results[i].shape == want.shape
        np.testing.assert_allclose(results[i], want, rtol=1e-4, atol=1e-5)
    # Requests were merged: some run held more rows than any one request.
    metrics = urllib.request.urlopen(f"http://127.0.0.1:{server.port}/metrics", timeout=10).read().decode()
    runs = [float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines()
            if line.startswith("warpforge_batch_size_count")]
    assert runs and sum(runs) < len(inputs), metrics[:2000]
    log = "".join(server.log_lines())
    assert '"device":"cuda' in log
    assert server.stop() == 0
