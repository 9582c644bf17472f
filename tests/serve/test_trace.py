"""`warpforge serve --trace FILE`: Chrome trace-event JSON with a span per request, per model run
and per op, complete (a JSON array) once the server has exited."""

from __future__ import annotations

import json

import numpy as np

from test_lifecycle import infer_body, post


def test_trace_has_requests_runs_and_ops(packages, serve, tmp_path):
    trace = tmp_path / "serve.trace.json"
    server = serve(f"mlp={packages['mlp']}", "--trace", str(trace))
    for rows in (1, 3):
        assert post(server, "mlp", infer_body(np.ones((rows, 64), np.float32)), {"X-Request-Id": f"trace-{rows}"})[0] == 200
    assert server.stop() == 0
    events = json.loads(trace.read_text())
    lanes = {e["args"]["name"] for e in events if e["ph"] == "M"}
    assert "requests" in lanes and any(name.startswith("model mlp") for name in lanes)
    runs = [e for e in events if e["ph"] == "X" and e["cat"] == "run"]
    assert [r["args"]["rows"] for r in runs] == [1, 3] and all(r["args"]["device"] == "cpu" for r in runs)
    ops = [e for e in events if e["ph"] == "X" and e["cat"] == "op"]
    assert ops and all(e["name"].startswith("stablehlo.") and e["args"]["location"] for e in ops)
    for run in runs:  # ops lie inside their run
        inside = [o for o in ops if run["ts"] <= o["ts"] <= run["ts"] + run["dur"] + 1]
        assert any(o["name"] == "stablehlo.dot_general" for o in inside)
    begins = {e["id"]: e for e in events if e["ph"] == "b"}
    assert {"trace-1", "trace-3"} <= set(begins)
    assert begins["trace-3"]["args"]["status"] == 200 and begins["trace-3"]["args"]["batch_rows"] == 3


def test_run_and_bench_trace(packages, tmp_path):
    import subprocess

    from conftest import warpforge_binary

    run_trace, bench_trace = tmp_path / "run.json", tmp_path / "bench.json"
    subprocess.run([warpforge_binary(), "run", str(packages["mlp"]), "--trace", str(run_trace), "-o", str(tmp_path / "o")],
                   check=True, capture_output=True)
    subprocess.run([warpforge_binary(), "bench", str(packages["mlp"]), "--iters", "3", "--warmup", "1",
                    "--trace", str(bench_trace)], check=True, capture_output=True)
    for path, runs in ((run_trace, 1), (bench_trace, 3)):
        events = json.loads(path.read_text())
        run_spans = [e for e in events if e.get("cat") == "run"]
        ops = [e for e in events if e.get("cat") == "op"]
        assert len(run_spans) == runs and all(r["args"]["device"] == "cpu" for r in run_spans)
        assert ops and all(o["args"]["location"] and o["args"]["types"].startswith("tensor<") for o in ops)
    bad = subprocess.run([warpforge_binary(), "run", str(packages["mlp"]), "--trace", str(tmp_path / "no" / "t.json")],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "--trace" in bad.stderr
