"""Distributed jobs (docs/distributed.md): a StableHLO program with every collective run by
several `warpforge run` processes, launched by `warpforge launch` and by torchrun, checked against
numpy on fresh random data; the launcher's teardown; and a rank killed mid-job, which the others
name and exit on within the timeout."""
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from helpers import WARPFORGE

# Each rank computes y = x * (r + 1) + r from the same x (r = replica_id), then every collective.
PROGRAM = """
func.func @main(%x: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<32x4xf32>, tensor<2x4xf32>, tensor<8x4xf32>,
                                         tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xi64>) {
  %rid = stablehlo.replica_id : tensor<ui32>
  %r = stablehlo.convert %rid : (tensor<ui32>) -> tensor<f32>
  %rb = stablehlo.broadcast_in_dim %r, dims = [] : (tensor<f32>) -> tensor<8x4xf32>
  %one = stablehlo.constant dense<1.0> : tensor<8x4xf32>
  %s = stablehlo.add %rb, %one : tensor<8x4xf32>
  %xs = stablehlo.multiply %x, %s : tensor<8x4xf32>
  %y = stablehlo.add %xs, %rb : tensor<8x4xf32>
  %sum = "stablehlo.all_reduce"(%y) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %c = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %c : tensor<f32>
  }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %gathered = "stablehlo.all_gather"(%y) {all_gather_dim = 0 : i64,
      replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<8x4xf32>) -> tensor<32x4xf32>
  %scattered = "stablehlo.reduce_scatter"(%y) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %c = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %c : tensor<f32>
  }) {scatter_dimension = 0 : i64,
      replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<8x4xf32>) -> tensor<2x4xf32>
  %swapped = "stablehlo.all_to_all"(%y) {split_dimension = 0 : i64, concat_dimension = 0 : i64, split_count = 4 : i64,
      replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %permuted = "stablehlo.collective_permute"(%y) {
      source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0]]> : tensor<4x2xi64>} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %broadcast = "stablehlo.collective_broadcast"(%y) {
      replica_groups = dense<[[2, 0, 1, 3]]> : tensor<1x4xi64>} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %pairmax = "stablehlo.all_reduce"(%y) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %c = stablehlo.maximum %a, %b : tensor<f32>
      stablehlo.return %c : tensor<f32>
  }) {replica_groups = dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %yi = stablehlo.convert %y : (tensor<8x4xf32>) -> tensor<8x4xi64>
  %isum = "stablehlo.all_reduce"(%yi) ({
    ^bb0(%a: tensor<i64>, %b: tensor<i64>):
      %c = stablehlo.add %a, %b : tensor<i64>
      stablehlo.return %c : tensor<i64>
  }) {replica_groups = dense<[[3, 1, 0, 2]]> : tensor<1x4xi64>} : (tensor<8x4xi64>) -> tensor<8x4xi64>
  return %sum, %gathered, %scattered, %swapped, %permuted, %broadcast, %pairmax, %isum
      : tensor<8x4xf32>, tensor<32x4xf32>, tensor<2x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>,
        tensor<8x4xf32>, tensor<8x4xi64>
}
"""

N = 4


def expected(x, rank):
    ys = [(x * np.float32(r + 1) + np.float32(r)).astype(np.float32) for r in range(N)]
    y64 = [y.astype(np.float64) for y in ys]
    parts = lambda y: np.split(y, N, axis=0)  # noqa: E731
    return [
        sum(y64),
        np.concatenate(ys, axis=0),
        sum(y64)[rank * 2:(rank + 1) * 2],
        np.concatenate([parts(ys[k])[rank] for k in range(N)], axis=0),
        ys[(rank - 1) % N],
        ys[2],
        np.maximum(ys[rank % 2], ys[rank % 2 + 2]),
        sum(y.astype(np.int64) for y in ys),
    ]


def check_outputs(out_dirs):
    for rank, out in enumerate(out_dirs):
        want = expected(np.load(out.parent / "x.npy"), rank)
        for i, w in enumerate(want):
            got = np.load(out / f"out{i}.npy")
            assert got.shape == w.shape, f"rank {rank} result {i}: shape {got.shape}, want {w.shape}"
            if got.dtype == np.int64:
                np.testing.assert_array_equal(got, w, err_msg=f"rank {rank} result {i}")
            else:
                np.testing.assert_allclose(got, w, rtol=1e-6, atol=1e-6, err_msg=f"rank {rank} result {i}")


@pytest.fixture()
def job_dir(tmp_path):
    (tmp_path / "prog.mlir").write_text(PROGRAM)
    x = np.random.default_rng().standard_normal((8, 4)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    return tmp_path


def rank_command(job_dir):
    # Every rank runs the same command; --output-dir takes the rank from the environment.
    return ["bash", "-c", f'exec "{WARPFORGE}" run "{job_dir}/prog.mlir" --input 0="{job_dir}/x.npy" '
                          f'--output-dir "{job_dir}/out$RANK"']


def test_launch_runs_every_collective_across_processes(job_dir):
    proc = subprocess.run([WARPFORGE, "launch", "-n", str(N), "--"] + rank_command(job_dir),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    check_outputs([job_dir / f"out{r}" for r in range(N)])
    # Every line of a rank's output carries its prefix.
    for line in proc.stderr.splitlines():
        assert line.startswith("[rank "), line


# A self-checking file: every rank's checks see the whole job's values.
CHECKS = """
func.func @collectives() {
  %rid = stablehlo.replica_id : tensor<ui32>
  %r = stablehlo.convert %rid : (tensor<ui32>) -> tensor<i64>
  %r1 = stablehlo.reshape %r : (tensor<i64>) -> tensor<1xi64>
  %all = "stablehlo.all_gather"(%r1) {all_gather_dim = 0 : i64,
      replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<1xi64>) -> tensor<4xi64>
  check.expect_eq_const %all, dense<[0, 1, 2, 3]> : tensor<4xi64>
  %sum = "stablehlo.all_reduce"(%r1) ({
    ^bb0(%a: tensor<i64>, %b: tensor<i64>):
      %c = stablehlo.add %a, %b : tensor<i64>
      stablehlo.return %c : tensor<i64>
  }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<1xi64>) -> tensor<1xi64>
  check.expect_eq_const %sum, dense<[6]> : tensor<1xi64>
  func.return
}
"""


def test_torchrun_launches_warpforge_directly(job_dir):
    torchrun = shutil.which("torchrun") or str(pathlib.Path(sys.executable).parent / "torchrun")
    if not os.path.exists(torchrun):
        pytest.skip("torchrun is not installed")
    # The binary itself, as in `torchrun --nproc-per-node N --no-python build/warpforge check ...`.
    (job_dir / "checks.mlir").write_text(CHECKS)
    proc = subprocess.run([torchrun, "--nproc-per-node", str(N), "--standalone", "--no-python",
                           WARPFORGE, "check", "-v", str(job_dir / "checks.mlir")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.stdout.count("1 passed, 0 failed") == N, proc.stdout
    # And the random-data program, each rank writing to the directory its RANK names.
    script = job_dir / "rank.sh"
    script.write_text(f'#!/bin/sh\nexec "{WARPFORGE}" run "{job_dir}/prog.mlir" --input 0="{job_dir}/x.npy" '
                      f'--output-dir "{job_dir}/out$RANK"\n')
    script.chmod(0o755)
    proc = subprocess.run([torchrun, "--nproc-per-node", str(N), "--standalone", "--no-python", str(script)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    check_outputs([job_dir / f"out{r}" for r in range(N)])


def test_launch_tears_the_job_down_when_a_rank_fails(tmp_path):
    start = time.time()
    proc = subprocess.run([WARPFORGE, "launch", "-n", "3", "--grace", "2", "--", "bash", "-c",
                           'echo "hello from $RANK"; if [ "$RANK" = 1 ]; then sleep 0.5; exit 7; fi; sleep 60'],
                          capture_output=True, text=True, timeout=120)
    elapsed = time.time() - start
    assert proc.returncode == 7, proc.stderr
    assert "rank 1 exited with code 7" in proc.stderr
    assert elapsed < 20, f"teardown took {elapsed:.1f} s"
    for r in range(3):
        assert f"[rank {r}] hello from {r}" in proc.stdout


# A program whose rank 2 spins in a loop before the all_reduce the others wait in.
SPIN = """
func.func @main(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %rid = stablehlo.replica_id : tensor<ui32>
  %two = stablehlo.constant dense<2> : tensor<ui32>
  %is2 = stablehlo.compare EQ, %rid, %two : (tensor<ui32>, tensor<ui32>) -> tensor<i1>
  %big = stablehlo.constant dense<1000000000000> : tensor<i64>
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %limit = stablehlo.select %is2, %big, %zero : tensor<i1>, tensor<i64>
  %end:2 = stablehlo.while(%i = %zero, %acc = %x) : tensor<i64>, tensor<1024xf32>
    cond {
      %lt = stablehlo.compare LT, %i, %limit : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i64>
      %next = stablehlo.add %i, %one : tensor<i64>
      stablehlo.return %next, %acc : tensor<i64>, tensor<1024xf32>
    }
  %sum = "stablehlo.all_reduce"(%end#1) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %c = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %c : tensor<f32>
  }) {replica_groups = dense<[[0, 1, 2]]> : tensor<1x3xi64>} : (tensor<1024xf32>) -> tensor<1024xf32>
  return %sum : tensor<1024xf32>
}
"""


def test_killed_rank_is_named_by_the_others_within_the_timeout(tmp_path):
    """Ranks started as separate processes (no launcher to tear the job down): rank 2 is killed
    while ranks 0 and 1 wait for it in an all_reduce; they must exit non-zero naming rank 2, well
    within the 60 s timeout."""
    (tmp_path / "spin.mlir").write_text(SPIN)
    np.save(tmp_path / "x.npy", np.random.default_rng().standard_normal(1024).astype(np.float32))
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = []
    for r in range(3):
        env = dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE="3", MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port), WARPFORGE_DIST_TIMEOUT="60")
        procs.append(subprocess.Popen([WARPFORGE, "run", str(tmp_path / "spin.mlir"), "--input",
                                       f"0={tmp_path / 'x.npy'}", "--output-dir", str(tmp_path / f"out{r}")],
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    time.sleep(3)  # every rank joined; 0 and 1 wait in the all_reduce, 2 spins
    assert procs[2].poll() is None, procs[2].communicate()
    killed_at = time.time()
    procs[2].send_signal(signal.SIGKILL)
    procs[2].wait()
    for r in (0, 1):
        out, err = procs[r].communicate(timeout=60)
        elapsed = time.time() - killed_at
        assert procs[r].returncode != 0, f"rank {r} succeeded:\n{err}"
        assert "rank 2 has left the job" in err, f"rank {r} does not name rank 2:\n{err}"
        assert elapsed < 30, f"rank {r} took {elapsed:.1f} s to fail"
