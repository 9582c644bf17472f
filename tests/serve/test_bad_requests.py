"""Bad requests get a 4xx status with a KServe error body {"error": "..."}, and the server keeps
serving: every bad request below is followed by a good one on the same server."""

from __future__ import annotations

import http.client
import json
import socket

import numpy as np
import pytest

GOOD_X = np.random.default_rng(0).standard_normal((2, 64), dtype=np.float32)


def request(server, method, path, body=b"", headers=None):
    conn = http.client.HTTPConnection(server.host_port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        res = conn.getresponse()
        return res.status, dict(res.getheaders()), res.read()
    finally:
        conn.close()


def infer_json(inputs, **extra):
    return json.dumps({"inputs": inputs, **extra}).encode()


def x_input(**overrides):
    entry = {"name": "x", "datatype": "FP32", "shape": [2, 64], "data": GOOD_X.ravel().tolist()}
    entry.update(overrides)
    return entry


def binary_body(header: dict, payload: bytes):
    head = json.dumps(header).encode()
    return head + payload, {"Inference-Header-Content-Length": str(len(head)),
                            "Content-Type": "application/octet-stream"}


def raw_exchange(server, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as s:
        s.sendall(data)
        chunks = []
        while True:
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks)


X_BYTES = GOOD_X.tobytes()
INFER = "/v2/models/mlp/infer"

# (description, method, path, body, headers, expected status)
BAD = [
    ("malformed JSON", "POST", INFER, b"{bad", {}, 400),
    ("empty body", "POST", INFER, b"", {}, 400),
    ("JSON array, not object", "POST", INFER, b"[]", {}, 400),
    ("no inputs", "POST", INFER, b"{}", {}, 400),
    ("inputs not an array", "POST", INFER, b'{"inputs": 5}', {}, 400),
    ("inputs empty", "POST", INFER, infer_json([]), {}, 400),
    ("input not an object", "POST", INFER, infer_json([1]), {}, 400),
    ("input without name", "POST", INFER, infer_json([{"datatype": "FP32", "shape": [1, 64], "data": [0] * 64}]), {}, 400),
    ("name not a string", "POST", INFER, infer_json([x_input(name=3)]), {}, 400),
    ("no datatype", "POST", INFER, infer_json([{"name": "x", "shape": [1, 64], "data": [0] * 64}]), {}, 400),
    ("BYTES datatype", "POST", INFER, infer_json([x_input(datatype="BYTES")]), {}, 400),
    ("unknown datatype", "POST", INFER, infer_json([x_input(datatype="FLOAT")]), {}, 400),
    ("wrong dtype (INT64 for FP32)", "POST", INFER, infer_json([x_input(datatype="INT64", data=[1] * 128)]), {}, 400),
    ("wrong dtype (FP64 for FP32)", "POST", INFER, infer_json([x_input(datatype="FP64")]), {}, 400),
    ("no shape", "POST", INFER, infer_json([{"name": "x", "datatype": "FP32", "data": [0] * 64}]), {}, 400),
    ("negative dimension", "POST", INFER, infer_json([x_input(shape=[-2, 64])]), {}, 400),
    ("fractional dimension", "POST", INFER, infer_json([x_input(shape=[2.5, 64])]), {}, 400),
    ("wrong rank", "POST", INFER, infer_json([x_input(shape=[128], data=[0] * 128)]), {}, 400),
    ("wrong static dimension", "POST", INFER, infer_json([x_input(shape=[2, 63], data=[0] * 126)]), {}, 400),
    ("too few elements", "POST", INFER, infer_json([x_input(data=[0.5] * 10)]), {}, 400),
    ("too many elements", "POST", INFER, infer_json([x_input(data=[0.5] * 129)]), {}, 400),
    ("string elements", "POST", INFER, infer_json([x_input(data=["a"] * 128)]), {}, 400),
    ("boolean elements for FP32", "POST", INFER, infer_json([x_input(data=[True] * 128)]), {}, 400),
    ("unknown input name", "POST", INFER, infer_json([x_input(name="y")]), {}, 400),
    ("input given twice", "POST", INFER, infer_json([x_input(), x_input()]), {}, 400),
    ("no data", "POST", INFER, infer_json([{"name": "x", "datatype": "FP32", "shape": [2, 64]}]), {}, 400),
    ("unknown output", "POST", INFER, infer_json([x_input()], outputs=[{"name": "logits"}]), {}, 400),
    ("outputs not an array", "POST", INFER, infer_json([x_input()], outputs={"name": "output"}), {}, 400),
    ("binary_data not a boolean", "POST", INFER,
     infer_json([x_input()], outputs=[{"name": "output", "parameters": {"binary_data": "yes"}}]), {}, 400),
    ("classification extension", "POST", INFER,
     infer_json([x_input()], outputs=[{"name": "output", "parameters": {"classification": 3}}]), {}, 400),
    ("negative timeout parameter", "POST", INFER, infer_json([x_input()], parameters={"timeout": -5}), {}, 400),
    ("bad Inference-Timeout-Ms", "POST", INFER, infer_json([x_input()]), {"Inference-Timeout-Ms": "soon"}, 400),
    ("unknown model", "POST", "/v2/models/nosuch/infer", infer_json([x_input()]), {}, 404),
    ("unknown model metadata", "GET", "/v2/models/nosuch", b"", {}, 404),
    ("unknown version", "POST", "/v2/models/mlp/versions/7/infer", infer_json([x_input()]), {}, 404),
    ("unknown route", "GET", "/v3/models", b"", {}, 404),
    ("GET on infer", "GET", INFER, b"", {}, 405),
    ("POST on health", "POST", "/v2/health/live", b"{}", {}, 405),
    ("truncated binary tensor", "POST", INFER,
     *binary_body({"inputs": [{"name": "x", "datatype": "FP32", "shape": [2, 64],
                               "parameters": {"binary_data_size": len(X_BYTES)}}]}, X_BYTES[:100]), 400),
    ("binary size not matching the shape", "POST", INFER,
     *binary_body({"inputs": [{"name": "x", "datatype": "FP32", "shape": [2, 64],
                               "parameters": {"binary_data_size": 100}}]}, X_BYTES[:100]), 400),
    ("binary bytes left over", "POST", INFER,
     *binary_body({"inputs": [{"name": "x", "datatype": "FP32", "shape": [2, 64],
                               "parameters": {"binary_data_size": len(X_BYTES)}}]}, X_BYTES + b"1234"), 400),
    ("binary and data both", "POST", INFER,
     *binary_body({"inputs": [x_input(parameters={"binary_data_size": len(X_BYTES)})]}, X_BYTES), 400),
    ("header length beyond the body", "POST", INFER, b'{"inputs": []}',
     {"Inference-Header-Content-Length": "5000"}, 400),
    ("header length not a number", "POST", INFER, infer_json([x_input()]),
     {"Inference-Header-Content-Length": "ten"}, 400),
    ("body over the size limit", "POST", INFER, b"{" + b" " * (2 << 20) + b"}", {}, 413),
]


def good_request(server):
    status, _, body = request(server, "POST", INFER, infer_json([x_input()]), {"Content-Type": "application/json"})
    assert status == 200, body
    out = np.array(json.loads(body)["outputs"][0]["data"], dtype=np.float32)
    return out


def check_error(status, headers, body, expected, what):
    assert status == expected, f"{what}: got {status} {body[:300]!r}"
    assert 400 <= status < 500
    payload = json.loads(body)
    assert set(payload) == {"error"} and isinstance(payload["error"], str) and payload["error"], what


def test_bad_requests_get_4xx_and_the_server_keeps_serving(packages, serve):
    server = serve(f"mlp={packages['mlp']}", "--max-body-mb", "1")
    reference = good_request(server)
    sent = 0
    for what, method, path, body, headers, expected in BAD:
        status, res_headers, res_body = request(server, method, path, body, headers)
        check_error(status, res_headers, res_body, expected, what)
        sent += 1
        np.testing.assert_array_equal(good_request(server), reference)

    # Below the HTTP layer: a malformed request line, oversized headers, a chunked body over the limit.
    raw_cases = [
        ("malformed request line", b"GARBAGE\r\n\r\n", 400),
        ("header fields over 64 KiB", b"GET /v2 HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (70 * 1024) + b"\r\n\r\n", 431),
        ("chunked body over the limit", b"POST " + INFER.encode() + b" HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
         + b"".join(b"100000\r\n" + b" " * 0x100000 + b"\r\n" for _ in range(2)) + b"0\r\n\r\n", 413),
    ]
    for what, data, expected in raw_cases:
        reply = raw_exchange(server, data)
        head, _, body = reply.partition(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        check_error(status, {}, body, expected, what)
        sent += 1
        np.testing.assert_array_equal(good_request(server), reference)
    assert sent >= 30

    # The errors are counted by model and status, and logged with request ids.
    _, _, metrics = request(server, "GET", "/metrics")
    assert 'warpforge_requests_total{code="400",model="mlp"}' in metrics.decode()
    assert server.stop() == 0
    logged = [json.loads(line) for line in server.log_lines() if line.startswith("{")]
    errors = [e for e in logged if e.get("event") == "request" and e.get("status", 0) >= 400]
    assert len(errors) >= sent and all(e.get("request_id") for e in errors)
