#!/usr/bin/env python3
"""The StableHLO interpreter tests that run interpreter.run_parallel grids, run as processes: one
`warpforge launch -n N -- warpforge check --json FILES` job, where each grid of n processes runs
process k on rank k (the other ranks sit it out) and its collectives go through the Gloo
communicator between the ranks (docs/distributed.md). Every rank evaluates every check, so
every rank must report every function as passing, as the in-process grids do.

Registered with ctest as conformance.processes.
    python3 tests/conformance/run_processes.py --warpforge build/warpforge --interpret-dir DIR
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

FILES = ["all_gather.mlir", "all_reduce.mlir", "all_to_all.mlir", "collective_broadcast.mlir",
         "collective_permute.mlir", "collective_reduce.mlir", "infeed.mlir", "outfeed.mlir", "partition_id.mlir",
         "reduce_scatter.mlir", "replica_id.mlir", "send_recv.mlir"]


def grid_sizes(text):
    """Processes of each interpreter.run_parallel grid in an MLIR file."""
    sizes = []
    for m in re.finditer(r"programs\s*=\s*\[(.*?)\]\s*\}", text, re.S):
        rows = re.findall(r"\[([^\[\]]*)\]", m.group(1))
        sizes.append(sum(len([x for x in r.split(",") if x.strip()]) for r in rows))
    return sizes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--warpforge", required=True)
    ap.add_argument("--interpret-dir", required=True)
    args = ap.parse_args()
    paths = [os.path.join(args.interpret_dir, f) for f in FILES]
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        print(f"conformance.processes: missing {missing}")
        return 1
    ranks = max(max(grid_sizes(open(p).read()) or [1]) for p in paths)
    cmd = [args.warpforge, "launch", "-n", str(ranks), "--", args.warpforge, "check", "--json"] + paths
    env = dict(os.environ, WARPFORGE_DIST_TIMEOUT="120")
    start = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env)
    seconds = time.time() - start
    per_rank = {r: [] for r in range(ranks)}
    for line in proc.stdout.splitlines():
        m = re.match(r"\[rank (\d+)\] (.*)$", line)
        if not m:
            print(f"conformance.processes: unprefixed output line {line!r}")
            return 1
        per_rank[int(m.group(1))].append(m.group(2))
    failures = 0
    passed = None
    for r in range(ranks):
        try:
            results = json.loads("\n".join(per_rank[r]))
        except json.JSONDecodeError:
            print(f"rank {r}: no JSON report; exit {proc.returncode}\n{proc.stderr[-3000:]}")
            return 1
        bad = [x for x in results if x["status"] != "pass"]
        for x in bad:
            print(f"rank {r}: {os.path.basename(x['file'])}:{x.get('line', 0)}: @{x['function']}: "
                  f"{x['status']}: {x['message']}")
        failures += len(bad)
        if passed is None:
            passed = len(results) - len(bad)
    print(f"conformance.processes: {len(FILES)} files on {ranks} ranks, {passed} functions passed per rank, "
          f"{failures} failures over all ranks, {seconds:.1f} s (launch exit {proc.returncode})")
    if proc.returncode != 0 and failures == 0:
        print(proc.stderr[-3000:])
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
