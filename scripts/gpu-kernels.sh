#!/usr/bin/env bash
# Where a model package's device time goes, kernel by kernel: Nsight Compute times every kernel
# of one run of `warpforge bench` (clocks left alone, caches not flushed, so the times are what the
# kernels take in a run), and scripts/ncu_kernel_table.py sums them by kernel name. Unlike
# `bench --profile`, whose per-op events include launch gaps, this is device time only.
#
#   WF_GPU_BUILD=build scripts/gpu-kernels.sh PACKAGE [PACKAGE...]
#
# Each package is first benched (filling the kernel cache, so that the profiled run times no
# algorithm candidates), then one run without CUDA graphs is profiled: only the kernels inside
# the executor's NVTX range of a run ("warpforge run main"), not the hoisted work done once.
# WF_BENCH_ARGS adds arguments to `warpforge bench`. Logs go to $WF_GPU_LOGS (default $OUT, else
# /tmp/wf-gpu-kernels): PACKAGE-NAME.ncu.csv and PACKAGE-NAME.kernels.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${WF_GPU_BUILD:-build}
LOGS=${WF_GPU_LOGS:-${OUT:-/tmp/wf-gpu-kernels}}
mkdir -p "$LOGS"
source "$ROOT/scripts/gpu-carry.sh"
wf_gpu_start "$BUILD" || exit 1
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[[ -n "$NCU" ]] || { echo "ncu not found" >&2; exit 1; }
status=0
for pkg in "$@"; do
  name=$(basename "$pkg")
  # shellcheck disable=SC2086
  "$WARPFORGE" bench "$pkg" --device cuda --iters 3 --warmup 1 ${WF_BENCH_ARGS:-} >"$LOGS/$name.bench.txt" 2>&1 ||
    { echo "=== $name: bench failed"; tail -5 "$LOGS/$name.bench.txt"; status=1; continue; }
  # shellcheck disable=SC2086
  "$NCU" --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv \
    --nvtx --nvtx-include "warpforge run ${WF_ENTRY:-main}/" \
    --log-file "$LOGS/$name.ncu.csv" \
    "$WARPFORGE" bench "$pkg" --device cuda --iters 1 --warmup 0 --no-cuda-graphs ${WF_BENCH_ARGS:-} \
    >"$LOGS/$name.ncu-bench.txt" 2>&1 || { echo "=== $name: ncu failed"; tail -5 "$LOGS/$name.ncu-bench.txt"; status=1; continue; }
  echo "=== $name ($(grep -m1 '^latency' "$LOGS/$name.bench.txt"))"
  python3 scripts/ncu_kernel_table.py "$LOGS/$name.ncu.csv" | tee "$LOGS/$name.kernels.txt" | head -45
done
exit $status
