#!/usr/bin/env python3
"""All-reduce on GPUs, one process per GPU: WarpForge's NCCL communicator beside torch.distributed's
nccl backend, on the same sizes (1 MB to 1 GB, doubling, float32 sum), on the same machine, in one
run. Each all-reduce is timed by CUDA events around it on its stream; the table gives the median
of --iters after two warm-ups, and the bus bandwidth as nccl-tests define it,
2 (n - 1) / n * bytes / time.

    python bench/allreduce_gpu.py --warpforge build/warpforge --bench build/bench/allreduce_bench \\
        [--ranks 2] [--iters 20] [--min-mb 1] [--max-mb 1024] [--json out.json] [--floor 0.8]

--floor: from 64 MB up, WarpForge's bus bandwidth must reach this fraction of torch's (both drive
NCCL, so they should match): the script exits 1 when it does not, 2 when a run fails.
"""
import argparse
import json
import os
import subprocess
import sys

from allreduce_cpu import free_port, human, rank0_rows  # the same table helpers as the CPU benchmark

# NVLink multicast (NVLS) stays off on shared machines, in every process this starts.
os.environ.update(NCCL_NVLS_ENABLE="0", TORCH_SYMM_MEM_DISABLE_MULTICAST="1", NVSHMEM_DISABLE_NVLS="1")


def torch_rank(rank, world, port, iters, min_bytes, max_bytes, queue):
    import torch
    import torch.distributed as dist
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", rank))
    gen = torch.Generator(device="cuda").manual_seed(rank + 1)
    data = torch.rand(max_bytes // 4, device="cuda", generator=gen) * 2 - 1
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters + 2)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters + 2)]
    rows = []
    size = min_bytes
    while size <= max_bytes:
        view = data[: size // 4]
        for i in range(iters + 2):
            starts[i].record()
            dist.all_reduce(view, op=dist.ReduceOp.SUM)
            ends[i].record()
        torch.cuda.synchronize()
        seconds = sorted(starts[i].elapsed_time(ends[i]) / 1e3 for i in range(2, iters + 2))
        median = seconds[len(seconds) // 2]
        rows.append({"bytes": size, "seconds": median, "bus_gbps": 2 * (world - 1) / world * size / median / 1e9})
        size *= 2
    if rank == 0:
        queue.put(rows)
    dist.barrier()
    dist.destroy_process_group()


def run_torch(world, iters, min_bytes, max_bytes):
    import torch.multiprocessing as mp
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=torch_rank, args=(r, world, port, iters, min_bytes, max_bytes, queue))
             for r in range(world)]
    for p in procs:
        p.start()
    try:
        rows = queue.get(timeout=600)
    finally:
        for p in procs:
            p.join(timeout=60)
            if p.is_alive():
                p.kill()
    return {r["bytes"]: r for r in rows}


def run_warpforge(warpforge, bench, world, iters, min_bytes, max_bytes):
    cmd = [warpforge, "launch", "-n", str(world), "--", bench, "--device", "cuda", "--iters", str(iters),
           "--min-bytes", str(min_bytes), "--max-bytes", str(max_bytes)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        print(f"{' '.join(cmd)} failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}", file=sys.stderr)
        sys.exit(2)
    return rank0_rows(proc.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--warpforge", default="build/warpforge")
    ap.add_argument("--bench", default="build/bench/allreduce_bench")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--min-mb", type=int, default=1)
    ap.add_argument("--max-mb", type=int, default=1024)
    ap.add_argument("--json", help="write both series here")
    ap.add_argument("--floor", type=float, default=0.8)
    args = ap.parse_args()
    if args.ranks < 2:
        sys.exit("allreduce_gpu.py: bus bandwidth needs 2 ranks or more")
    min_bytes, max_bytes = args.min_mb << 20, args.max_mb << 20
    wf = run_warpforge(args.warpforge, args.bench, args.ranks, args.iters, min_bytes, max_bytes)
    th = run_torch(args.ranks, args.iters, min_bytes, max_bytes)
    import torch
    gpu = torch.cuda.get_device_name(0)
    print(f"all_reduce sum, float32, {args.ranks} processes on {args.ranks} x {gpu}, median of {args.iters} "
          f"(CUDA events), bus bandwidth 2 (n - 1) / n * bytes / time; torch {torch.__version__}, "
          f"NCCL {'.'.join(map(str, torch.cuda.nccl.version()))} in torch")
    print("| size | WarpForge (nccl) ms | bus GB/s | torch.distributed nccl ms | bus GB/s | WarpForge / torch |")
    print("|---|---|---|---|---|---|")
    missed = []
    for size in sorted(wf):
        w, t = wf[size], th.get(size)
        ratio = w["bus_gbps"] / t["bus_gbps"] if t and t["bus_gbps"] > 0 else float("nan")
        tcol = f"{t['seconds'] * 1e3:.3f} | {t['bus_gbps']:.1f}" if t else "- | -"
        print(f"| {human(size)} | {w['seconds'] * 1e3:.3f} | {w['bus_gbps']:.1f} | {tcol} | {ratio:.2f} |")
        if size >= 64 << 20 and not ratio >= args.floor:
            missed.append(human(size))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"ranks": args.ranks, "gpu": gpu, "warpforge": list(wf.values()), "torch": list(th.values())}, f,
                      indent=1)
    if len(wf) != len(th) or not wf:
        print(f"sizes differ: WarpForge {len(wf)}, torch {len(th)}")
        sys.exit(2)
    if missed:
        print(f"floor missed: WarpForge under {args.floor:.2f} x torch's bus bandwidth at {', '.join(missed)}")
        sys.exit(1)
    print(f"floor met: WarpForge at least {args.floor:.2f} x torch's bus bandwidth from 64 MB up")


if __name__ == "__main__":
    main()
