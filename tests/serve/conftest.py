"""Fixtures of the `warpforge serve` suite: exported packages (session-scoped) and a helper that
starts the server on a free port and stops it with SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "python" / "tests"))

import warpforge  # noqa: E402


def warpforge_binary() -> str:
    path = os.environ.get("WARPFORGE", str(ROOT / "build" / "warpforge"))
    if not Path(path).exists():
        pytest.skip(f"warpforge binary not found at {path} (set WARPFORGE)")
    return path


class Server:
    """`warpforge serve ARGS --port 0`; `url` once it listens. stop() sends SIGTERM and returns
    the exit code; the JSON-lines log is in `log_lines()`."""

    def __init__(self, args, startup_timeout=120):
        self.proc = subprocess.Popen([warpforge_binary(), "serve", "--port", "0", "--host", "127.0.0.1", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self._log = []
        self._stderr = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr.start()
        line = self.proc.stdout.readline()
        if "listening on" not in line:
            self.proc.kill()
            self.proc.wait()
            raise RuntimeError(f"warpforge serve did not start: {line!r}\n" + "".join(self._log))
        self.url = line.strip().rsplit(" ", 1)[-1]
        self.host_port = self.url.split("//", 1)[1]
        self.port = int(self.host_port.rsplit(":", 1)[1])

    def _read_stderr(self):
        for line in self.proc.stderr:
            self._log.append(line)

    def log_lines(self):
        return list(self._log)

    def terminate(self):
        self.proc.send_signal(signal.SIGTERM)

    def stop(self, timeout=60) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=timeout)
        self._stderr.join(timeout=5)
        return code

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.stop()


@pytest.fixture
def serve():
    servers = []

    def start(*args, **kwargs):
        s = Server(list(args), **kwargs)
        servers.append(s)
        return s

    yield start
    for s in servers:
        if s.proc.poll() is None:
            s.proc.kill()
            s.proc.wait()


class MLP(torch.nn.Module):
    def __init__(self, d=64, h=128, o=10):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(d, h), torch.nn.ReLU(), torch.nn.Linear(h, o))

    def forward(self, x):
        return self.net(x)


class Slow(torch.nn.Module):
    """A chain of square matmuls, its layers run `repeats` times: a batch of 64 rows takes a
    noticeable while on the CPU, and a run of seconds fits in a request body under the server's
    64 MiB limit even on a fast AVX-512 machine (a few thousand rows)."""

    def __init__(self, d=1024, layers=12, repeats=4):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(d, d) for _ in range(layers))
        self.repeats = repeats

    def forward(self, x):
        for _ in range(self.repeats):
            for layer in self.layers:
                x = torch.tanh(layer(x))
        return x


@pytest.fixture(scope="session")
def packages(tmp_path_factory):
    """Exports the suite's packages once: name -> directory."""
    base = tmp_path_factory.mktemp("serve_packages")
    from zoo import bert_small, mobilenet_v3_small

    out = {}
    torch.manual_seed(0)
    warpforge.export(MLP().eval(), (torch.randn(2, 64),), base / "mlp", dynamic_batch=True, name="mlp")
    out["mlp"] = base / "mlp"
    torch.manual_seed(1)
    warpforge.export(Slow().eval(), (torch.randn(2, 1024),), base / "slow", dynamic_batch=True, name="slow")
    out["slow"] = base / "slow"
    model, inputs = mobilenet_v3_small()
    warpforge.export(model.eval(), inputs, base / "mobilenet", dynamic_batch=True, name="mobilenet")
    out["mobilenet"] = base / "mobilenet"
    model, inputs = bert_small(seq=16, batch=2)
    warpforge.export(model, inputs, base / "bert", dynamic_batch=True, name="bert")
    out["bert"] = base / "bert"
    return out
