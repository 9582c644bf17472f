"""Request scopes and shutdown: a deadline or a client disconnect takes queued work out of the
queue (it never runs); a full queue answers 503 at once; SIGTERM drains in-flight requests and
exits 0; dynamic batching merges concurrent requests and splits the outputs back exactly."""

from __future__ import annotations

import concurrent.futures as cf
import http.client
import json
import socket
import time

import numpy as np
from prometheus_client.parser import text_string_to_metric_families

from test_bad_requests import request


def infer_body(x: np.ndarray, name="x", **extra):
    """A binary-tensor request asking for binary outputs (so that large inputs and outputs cost
    the client and the server little: as JSON, one run of the slow model's output took seconds to
    write and to parse): (body, headers)."""
    head = json.dumps({"inputs": [{"name": name, "datatype": "FP32", "shape": list(x.shape),
                                   "parameters": {"binary_data_size": x.nbytes}}],
                       "parameters": {"binary_data_output": True}, **extra}).encode()
    return head + x.tobytes(), {"Inference-Header-Content-Length": str(len(head))}


def json_body(x: np.ndarray, name="x"):
    return json.dumps({"inputs": [{"name": name, "datatype": "FP32", "shape": list(x.shape),
                                   "data": x.ravel().tolist()}]}).encode(), {}


def post(server, model, body_and_headers, headers=None):
    body, extra = body_and_headers
    start = time.monotonic()
    status, res_headers, data = request(server, "POST", f"/v2/models/{model}/infer", body, {**extra, **(headers or {})})
    # A response with binary outputs: the JSON header, then the tensors' bytes.
    head_length = {k.lower(): v for k, v in res_headers.items()}.get("inference-header-content-length")
    if head_length is not None:
        data = data[:int(head_length)]
    return status, json.loads(data) if data else None, time.monotonic() - start, time.monotonic()


def metrics(server) -> dict:
    """name -> list of (labels, value) from GET /metrics, parsed with the Prometheus parser."""
    _, _, text = request(server, "GET", "/metrics")
    out = {}
    for family in text_string_to_metric_families(text.decode()):
        for sample in family.samples:
            out.setdefault(sample.name, []).append((sample.labels, sample.value))
    return out


def sample(m, name, **labels):
    return sum(v for l, v in m.get(name, []) if all(l.get(k) == val for k, val in labels.items()))


def slow_rows(server, target_seconds=0.5):
    """Rows that make one run of the slow model take at least about `target_seconds` on this
    machine: the model run itself, read from warpforge_run_duration_seconds (so that transfer and
    JSON encoding, which happen outside the run, do not count), best of two warm runs, growing
    until it does, so that one noisy timing on a busy machine cannot make the run short."""
    def run_seconds(rows):
        before = sample(metrics(server), "warpforge_run_duration_seconds_sum", model="slow")
        assert post(server, "slow", infer_body(np.ones((rows, 1024), np.float32)))[0] == 200
        return sample(metrics(server), "warpforge_run_duration_seconds_sum", model="slow") - before

    # The most rows whose request fits the server's default 64 MiB body limit (1024 f32 a row).
    most = 16000
    rows = 64
    while True:
        took = min(run_seconds(rows) for _ in range(2))
        if took >= target_seconds or rows >= most:
            return rows
        rows = min(most, max(2 * rows, int(rows * 1.2 * target_seconds / max(took, 1e-3))))


def wait_until_inflight(server, requests):
    """Until `requests` requests are in flight (besides the /metrics request that asks): a request
    counts as in flight from when its body is read until its response is ready."""
    deadline = time.monotonic() + 30
    while sample(metrics(server), "warpforge_inflight_requests") < requests + 1:
        assert time.monotonic() < deadline
        time.sleep(0.005)


def wait_until_running(server, model="slow"):
    """Until a batch of `model` is running (its inputs read and queued, its run started): what
    follows happens while that run lasts, however long the first request took to arrive."""
    deadline = time.monotonic() + 30
    while sample(metrics(server), "warpforge_running_batches", model=model) < 1:
        assert time.monotonic() < deadline
        time.sleep(0.005)


def test_deadline_cancels_queued_work(packages, serve):
    server = serve(f"slow={packages['slow']}", "--max-batch", "1")
    rows = slow_rows(server)
    big = np.ones((rows, 1024), np.float32)
    small = np.ones((1, 1024), np.float32)
    with cf.ThreadPoolExecutor(4) as pool:
        runs_before = sample(metrics(server), "warpforge_batch_size_count", model="slow")
        first = pool.submit(post, server, "slow", infer_body(big))
        wait_until_running(server)  # the first request is running; the next ones queue behind it
        by_header = pool.submit(post, server, "slow", infer_body(small), {"Inference-Timeout-Ms": "50"})
        by_param = pool.submit(post, server, "slow", infer_body(small, parameters={"timeout": 50_000}))
        status, _, _, first_done = first.result()
        assert status == 200
        for future in (by_header, by_param):
            status, body, took, done = future.result()
            assert status == 504, body
            assert "deadline" in body["error"]
            assert done < first_done, "the deadline answer must not wait for the running request"
    m = metrics(server)
    assert sample(m, "warpforge_batch_size_count", model="slow") == runs_before + 1  # the cancelled ones never ran
    assert sample(m, "warpforge_requests_total", model="slow", code="504") == 2
    assert server.stop() == 0


def test_client_disconnect_cancels_queued_work(packages, serve):
    server = serve(f"slow={packages['slow']}", "--max-batch", "1")
    rows = slow_rows(server, 2.0)  # long enough that the second request is read and queued behind it
    with cf.ThreadPoolExecutor(2) as pool:
        runs_before = sample(metrics(server), "warpforge_batch_size_count", model="slow")
        first = pool.submit(post, server, "slow", infer_body(np.ones((rows, 1024), np.float32)))
        wait_until_running(server)  # the run lasts about 2 s from here
        body = infer_body(np.ones((1, 1024), np.float32), outputs=[{"name": "output"}])[0]
        head_len = body.index(b"]}") + 2  # the JSON header ends with the outputs list
        s = socket.create_connection(("127.0.0.1", server.port))
        s.sendall(b"POST /v2/models/slow/infer HTTP/1.1\r\nHost: x\r\nInference-Header-Content-Length: "
                  + str(head_len).encode() + b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        s.close()  # at once: the server reads the whole request, queues it behind the first, then sees EOF
        assert first.result()[0] == 200
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        m = metrics(server)
        if sample(m, "warpforge_requests_total", model="slow", code="499") == 1:
            break
        time.sleep(0.05)
    assert sample(m, "warpforge_requests_total", model="slow", code="499") == 1, "".join(server.log_lines()[-4:])
    time.sleep(0.2)
    assert sample(metrics(server), "warpforge_batch_size_count", model="slow") == runs_before + 1
    assert server.stop() == 0
    assert any('"status":499' in line and "client closed" in line for line in server.log_lines())


def test_full_queue_is_503_at_once(packages, serve):
    server = serve(f"slow={packages['slow']}", "--max-batch", "1", "--max-queue", "2")
    rows = slow_rows(server, 2.0)  # all six requests must arrive while the first one runs
    with cf.ThreadPoolExecutor(8) as pool:
        first = pool.submit(post, server, "slow", infer_body(np.ones((rows, 1024), np.float32)))
        wait_until_running(server)  # the run lasts about 2 s from here
        rest = [pool.submit(post, server, "slow", infer_body(np.ones((1, 1024), np.float32))) for _ in range(6)]
        results = [f.result() for f in rest]
        _, _, _, first_done = first.result()
    rejected = [r for r in results if r[0] == 503]
    assert len([r for r in results if r[0] == 200]) == 2 and len(rejected) == 4
    for status, body, took, done in rejected:
        assert "queued" in body["error"] and done < first_done
    assert server.stop() == 0


def test_sigterm_drains_in_flight_requests(packages, serve):
    server = serve(f"slow={packages['slow']}", "--max-batch", "1")
    rows = slow_rows(server, 0.3)
    with cf.ThreadPoolExecutor(4) as pool:
        inflight = [pool.submit(post, server, "slow", infer_body(np.ones((rows, 1024), np.float32))) for _ in range(4)]
        wait_until_inflight(server, 4)
        server.terminate()
        time.sleep(0.1)
        # Admission has stopped: a new connection is refused.
        refused = False
        try:
            conn = http.client.HTTPConnection(server.host_port, timeout=5)
            conn.request("GET", "/v2/health/ready")
            refused = conn.getresponse().status == 503
        except OSError:
            refused = True
        assert refused
        assert [f.result()[0] for f in inflight] == [200] * 4
    assert server.proc.wait(timeout=60) == 0
    events = [json.loads(line)["event"] for line in server.log_lines() if line.startswith("{")]
    assert "draining" in events and "drained" in events and events[-1] == "stopped"


def test_dynamic_batching_merges_and_splits_exactly(packages, serve):
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal((int(rng.integers(1, 4)), 64), dtype=np.float32) for _ in range(12)]
    reference = serve(f"mlp={packages['mlp']}", "--max-batch", "1")
    expected = [np.array(post(reference, "mlp", json_body(x))[1]["outputs"][0]["data"], np.float32) for x in xs]
    reference.stop()

    server = serve(f"mlp={packages['mlp']}", "--max-batch", "16", "--batch-timeout-us", "300000")
    with cf.ThreadPoolExecutor(len(xs)) as pool:
        results = list(pool.map(lambda x: post(server, "mlp", json_body(x)), xs))
    for x, want, (status, body, _, _) in zip(xs, expected, results):
        assert status == 200
        out = body["outputs"][0]
        assert out["shape"] == [x.shape[0], 10]
        np.testing.assert_allclose(np.array(out["data"], np.float32), want, rtol=1e-5, atol=1e-6)
    m = metrics(server)
    runs = sample(m, "warpforge_batch_size_count", model="mlp")
    assert sample(m, "warpforge_batch_size_sum", model="mlp") == sum(x.shape[0] for x in xs)
    assert runs < len(xs), "concurrent requests were not merged"
    assert server.stop() == 0


def test_metrics_parse_with_the_prometheus_parser(packages, serve):
    server = serve(f"mlp={packages['mlp']}")
    x = np.ones((2, 64), np.float32)
    for _ in range(3):
        assert post(server, "mlp", infer_body(x))[0] == 200
    post(server, "mlp", (b"{bad", {}))
    _, headers, text = request(server, "GET", "/metrics")
    assert headers["Content-Type"].startswith("text/plain; version=0.0.4")
    families = {f.name: f for f in text_string_to_metric_families(text.decode())}
    expected = {"warpforge_requests": "counter", "warpforge_request_duration_seconds": "histogram",
                "warpforge_queue_time_seconds": "histogram", "warpforge_batch_size": "histogram",
                "warpforge_queue_depth": "gauge", "warpforge_device_memory_bytes": "gauge",
                "warpforge_inflight_requests": "gauge"}
    for name, kind in expected.items():
        assert name in families and families[name].type == kind, name
    m = metrics(server)
    assert sample(m, "warpforge_requests_total", model="mlp", code="200") == 3
    assert sample(m, "warpforge_requests_total", model="mlp", code="400") == 1
    assert sample(m, "warpforge_request_duration_seconds_count", model="mlp") == 4
    assert sample(m, "warpforge_request_duration_seconds_bucket", model="mlp", le="+Inf") == 4
    assert sample(m, "warpforge_queue_time_seconds_count", model="mlp") == 3
    assert sample(m, "warpforge_batch_size_sum", model="mlp") == 6
    assert sample(m, "warpforge_device_memory_bytes", model="mlp", device="cpu") > 0
    assert sample(m, "warpforge_queue_depth", model="mlp") == 0
    assert server.stop() == 0
