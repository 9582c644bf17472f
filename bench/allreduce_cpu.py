#!/usr/bin/env python3
"""All-reduce on CPU across 4 processes: WarpForge's Gloo communicator beside torch.distributed's
gloo backend, on the same sizes (1 KB to 256 MB, float32 sum), on the same machine, in one run.
Prints the median time and the bus bandwidth, 2 (n - 1) / n * bytes / time, of each.

    python bench/allreduce_cpu.py [--ranks 4] [--iters 20] [--max-mb 256]
"""
import argparse
import json
import os
import pathlib
import socket
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[1]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torch_rank(rank, world, port, iters, max_bytes, queue):
    import torch
    import torch.distributed as dist
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    data = torch.rand(max_bytes // 4) * 2 - 1
    rows = []
    size = 1024
    while size <= max_bytes:
        view = data[: size // 4]
        reps = max(3, iters // 4) if size >= 64 << 20 else iters
        seconds = []
        for i in range(-2, reps):
            start = time.perf_counter()
            dist.all_reduce(view, op=dist.ReduceOp.SUM)
            if i >= 0:
                seconds.append(time.perf_counter() - start)
        seconds.sort()
        median = seconds[len(seconds) // 2]
        rows.append({"bytes": size, "seconds": median, "bus_gbps": 2 * (world - 1) / world * size / median / 1e9})
        size *= 4
    if rank == 0:
        queue.put(rows)
    dist.barrier()
    dist.destroy_process_group()


def run_torch(world, iters, max_bytes):
    import torch.multiprocessing as mp
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=torch_rank, args=(r, world, port, iters, max_bytes, queue)) for r in range(world)]
    for p in procs:
        p.start()
    rows = queue.get(timeout=1800)
    for p in procs:
        p.join()
    return {r["bytes"]: r for r in rows}


def run_warpforge(build, world, iters, max_bytes):
    cmd = [str(build / "warpforge"), "launch", "-n", str(world), "--", str(build / "bench" / "allreduce_bench"),
           "--iters", str(iters), "--max-bytes", str(max_bytes)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}")
    return rank0_rows(proc.stdout)


def rank0_rows(stdout):
    """allreduce_bench's JSON lines of rank 0 under `warpforge launch`, by message size."""
    rows = [json.loads(line.split("] ", 1)[1]) for line in stdout.splitlines() if line.startswith("[rank 0] {")]
    return {r["bytes"]: r for r in rows}


def human(n):
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024:
            return f"{n:g} {unit}"
        n /= 1024
    return f"{n:g} TB"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--max-mb", type=int, default=256)
    ap.add_argument("--build", default=str(REPO / "build"))
    args = ap.parse_args()
    max_bytes = args.max_mb << 20
    wf = run_warpforge(pathlib.Path(args.build), args.ranks, args.iters, max_bytes)
    th = run_torch(args.ranks, args.iters, max_bytes)
    print(f"all_reduce sum, float32, {args.ranks} processes on {os.cpu_count()} CPU cores, median of "
          f"{args.iters} (a quarter of that from 64 MB)")
    print(f"| size | WarpForge (gloo) ms | bus GB/s | torch.distributed gloo ms | bus GB/s |")
    print("|---|---|---|---|---|")
    for size in sorted(wf):
        w, t = wf[size], th.get(size)
        tcol = f"{t['seconds'] * 1e3:.3f} | {t['bus_gbps']:.3f}" if t else "- | -"
        print(f"| {human(size)} | {w['seconds'] * 1e3:.3f} | {w['bus_gbps']:.3f} | {tcol} |")


if __name__ == "__main__":
    main()
