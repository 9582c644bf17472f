"""A short run of bench/load_test.py (the full one is 64 clients for 60 s): every request
succeeds with and without dynamic batching, and the server exits 0 after each run."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import ROOT, warpforge_binary


def test_load_test_short_run(packages):
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "load_test.py"), "--warpforge", warpforge_binary(),
                          "--package", str(packages["mlp"]), "--clients", "16", "--seconds", "3", "--procs", "2",
                          "--json"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "p50 ms" in out.stdout and "p99 ms" in out.stdout
    result = json.loads(out.stdout.strip().splitlines()[-1])
    for run in result["runs"]:
        assert run["failed"] == 0 and run["requests"] > 0 and run["exit_code"] == 0
    batching, single = result["runs"]
    assert single["mean_batch"] == 1 and batching["mean_batch"] > 1
