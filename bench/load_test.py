"""Load test of `warpforge serve` over loopback: N concurrent clients for T seconds, each sending one
inference request after another on its own keep-alive connection (binary tensors, one row each),
once with dynamic batching (--max-batch B) and once with --max-batch 1. Prints a table of requests,
failures, throughput and p50/p99 latency per run, and the throughput ratio.

    python3 bench/load_test.py --warpforge build/warpforge --clients 64 --seconds 60
    python3 bench/load_test.py --package out/mlp --clients 16 --seconds 5 --min-speedup 2 --json

Without --package it exports a 3-layer MLP (2048 -> 4096 -> 4096 -> 1000 with the default --width,
random weights) with a dynamic batch dimension: at batch 1 a run reads every weight for one row,
which is what batching amortises. Clients run in several processes (--procs) so that the Python client is
not the bottleneck. Exit status 1 if any request failed, or the speedup is under --min-speedup.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def export_default_package(out: Path, width: int) -> Path:
    import torch
    sys.path.insert(0, str(ROOT / "python"))
    import warpforge

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(width // 2, width), torch.nn.ReLU(), torch.nn.Linear(width, width),
                                torch.nn.ReLU(), torch.nn.Linear(width, 1000)).eval()
    warpforge.export(model, (torch.randn(2, width // 2),), out, dynamic_batch=True, name="mlp")
    return out


class Server:
    def __init__(self, binary, package, extra):
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([binary, "serve", str(package), "--host", "127.0.0.1", "--port", "0", *extra],
                                     stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.proc.stdout.readline()
        if "listening on" not in line:
            self.proc.kill()
            self.log.seek(0)
            raise SystemExit(f"load_test: warpforge serve did not start: {line!r}\n{self.log.read().decode()[-2000:]}")
        self.url = line.strip().rsplit(" ", 1)[-1]
        self.host_port = self.url.split("//", 1)[1]

    def metrics(self) -> dict:
        from prometheus_client.parser import text_string_to_metric_families
        text = urllib.request.urlopen(self.url + "/metrics", timeout=30).read().decode()
        out = {}
        for family in text_string_to_metric_families(text):
            for s in family.samples:
                out[s.name] = out.get(s.name, 0) + s.value
        return out

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=120)


def model_request(host_port, model):
    meta = json.loads(urllib.request.urlopen(f"http://{host_port}/v2/models/{model}", timeout=30).read())
    spec = meta["inputs"][0]
    shape = [1] + [int(d) for d in spec["shape"][1:]]
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    head = json.dumps({"inputs": [{"name": spec["name"], "datatype": "FP32", "shape": shape,
                                   "parameters": {"binary_data_size": x.nbytes}}],
                       "outputs": [{"name": o["name"], "parameters": {"binary_data": True}} for o in meta["outputs"]]})
    head = head.encode()
    return head + x.tobytes(), {"Inference-Header-Content-Length": str(len(head)),
                                "Content-Type": "application/octet-stream"}


def client_process(host_port, model, threads, start_at, stop_at, results):
    # Hand the GIL over promptly: with the default 5 ms switch interval a client thread whose
    # response has arrived can wait that long behind a sibling, which would be measured as latency.
    sys.setswitchinterval(1e-4)
    body, headers = model_request(host_port, model)
    latencies, failures, errors = [], 0, []
    lock = threading.Lock()

    def client():
        nonlocal failures
        mine, bad = [], 0
        conn = http.client.HTTPConnection(host_port, timeout=60)
        while time.time() < start_at:
            time.sleep(0.001)
        while time.time() < stop_at:
            t0 = time.perf_counter()
            try:
                conn.request("POST", f"/v2/models/{model}/infer", body=body, headers=headers)
                res = conn.getresponse()
                data = res.read()
                ok = res.status == 200 and int(res.getheader("Inference-Header-Content-Length", "0")) > 0
                if not ok and len(errors) < 5:
                    errors.append(f"{res.status} {data[:200]!r}")
            except Exception as e:  # counted as a failure; reconnect
                ok = False
                if len(errors) < 5:
                    errors.append(repr(e))
                conn.close()
                conn = http.client.HTTPConnection(host_port, timeout=60)
            if ok:
                mine.append(time.perf_counter() - t0)
            else:
                bad += 1
        conn.close()
        with lock:
            latencies.extend(mine)
            failures += bad

    pool = [threading.Thread(target=client) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    results.put((latencies, failures, errors))


def run_load(server, model, clients, seconds, procs):
    # Warm-up: a few requests so that compilation caches and connections are in place.
    body, headers = model_request(server.host_port, model)
    for _ in range(3):
        conn = http.client.HTTPConnection(server.host_port, timeout=60)
        conn.request("POST", f"/v2/models/{model}/infer", body=body, headers=headers)
        assert conn.getresponse().read()
        conn.close()
    before = server.metrics()
    ctx = mp.get_context("fork")
    results = ctx.Queue()
    procs = max(1, min(procs, clients))
    start_at = time.time() + 1.0
    stop_at = start_at + seconds
    workers = []
    for i in range(procs):
        n = clients // procs + (1 if i < clients % procs else 0)
        p = ctx.Process(target=client_process, args=(server.host_port, model, n, start_at, stop_at, results))
        p.start()
        workers.append(p)
    latencies, failures, errors = [], 0, []
    for _ in workers:
        lat, bad, errs = results.get()
        latencies += lat
        failures += bad
        errors += errs
    for p in workers:
        p.join()
    after = server.metrics()
    runs = after.get("warpforge_batch_size_count", 0) - before.get("warpforge_batch_size_count", 0)
    rows = after.get("warpforge_batch_size_sum", 0) - before.get("warpforge_batch_size_sum", 0)
    lat = np.array(latencies) * 1000 if latencies else np.array([float("nan")])
    return {"requests": len(latencies), "failed": failures, "throughput": len(latencies) / seconds,
            "p50_ms": float(np.percentile(lat, 50)), "p99_ms": float(np.percentile(lat, 99)),
            "mean_batch": rows / runs if runs else float("nan"), "errors": errors[:5]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--warpforge", default=os.environ.get("WARPFORGE", str(ROOT / "build" / "warpforge")))
    ap.add_argument("--package", help="model package with a dynamic batch dimension (default: export an MLP)")
    ap.add_argument("--width", type=int, default=4096, help="hidden width of the default MLP (input: width / 2)")
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--procs", type=int, default=max(1, min(8, (os.cpu_count() or 2) // 2)))
    ap.add_argument("--max-batch", type=int, default=64)
    ap.add_argument("--batch-timeout-us", type=int, default=2000)
    ap.add_argument("--threads", type=int, help="warpforge serve --threads (CPU kernel threads)")
    ap.add_argument("--min-speedup", type=float, default=0, help="fail if batching gives less than this ratio")
    ap.add_argument("--json", action="store_true", help="also print the results as one JSON object")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        package = Path(args.package) if args.package else export_default_package(Path(tmp) / "mlp", args.width)
        model = json.loads((package / "manifest.json").read_text())["name"]
        common = ["--max-queue", str(max(1024, 4 * args.clients))]
        if args.threads:
            common += ["--threads", str(args.threads)]
        modes = [("batching", args.max_batch), ("no batching", 1)]
        rows = []
        for label, max_batch in modes:
            server = Server(args.warpforge, package,
                            common + ["--max-batch", str(max_batch), "--batch-timeout-us", str(args.batch_timeout_us)])
            try:
                result = run_load(server, model, args.clients, args.seconds, args.procs)
            finally:
                code = server.stop()
            result.update(mode=label, max_batch=max_batch, exit_code=code)
            rows.append(result)

    print(f"\nwarpforge serve load test: model '{model}', {args.clients} clients, {args.seconds:g} s per run, "
          f"loopback, binary tensors, {os.cpu_count()} cores")
    header = f"{'mode':<12} {'max-batch':>9} {'requests':>9} {'failed':>6} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'mean batch':>10}"
    print(header)
    print("-" * len(header))
    for r in rows:
        print(f"{r['mode']:<12} {r['max_batch']:>9} {r['requests']:>9} {r['failed']:>6} {r['throughput']:>9.1f} "
              f"{r['p50_ms']:>8.2f} {r['p99_ms']:>8.2f} {r['mean_batch']:>10.2f}")
    speedup = rows[0]["throughput"] / rows[1]["throughput"] if rows[1]["throughput"] else float("inf")
    print(f"throughput with batching / without: {speedup:.2f}x")
    for r in rows:
        for e in r["errors"]:
            print(f"  {r['mode']}: {e}")
    if args.json:
        print(json.dumps({"model": model, "clients": args.clients, "seconds": args.seconds, "runs": rows,
                          "speedup": speedup}))
    failed = sum(r["failed"] for r in rows) > 0 or any(r["exit_code"] != 0 for r in rows)
    if failed:
        print("load_test: FAILED: failed requests or a non-zero server exit", file=sys.stderr)
    if speedup < args.min_speedup:
        print(f"load_test: FAILED: speedup {speedup:.2f}x is under --min-speedup {args.min_speedup}", file=sys.stderr)
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
