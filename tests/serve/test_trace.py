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
