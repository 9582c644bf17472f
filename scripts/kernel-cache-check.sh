#!/usr/bin/env bash
# The persistent kernel cache (src/backends/cuda/codegen/kernel_cache.h) on a GPU machine: its GPU
# tests; `warpforge bench` of BERT-large (bf16) and BERT-base (fp32) cold, warm and with
# --no-kernel-cache (compile time and the cache's hits); two processes filling one fresh cache at
# once; a truncated entry; an unwritable cache folder; the ranks of `warpforge launch -n 2` sharing
# a cache when there are 2 GPUs. The build is carried as scripts/gpu-check.sh takes it
# (WF_GPU_PACK=1 WF_GPU_BUILD=build scripts/gpu-check.sh here, then this script there).
set -uo pipefail
cd "$(dirname "$0")/.."
TIMEFORMAT='wall %R s'
source scripts/gpu-carry.sh
wf_unpack_carry "${WF_GPU_BUILD:-build}" || { echo "no carry"; exit 1; }
WF="$WF_BIN/warpforge"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== tests"
export WARPFORGE_CACHE_DIR=/tmp/kc-tests
time "$WF_TESTS" --gtest_filter='KernelCache*:FusionRun*:RegionKernel*' 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED)|OK \] KernelCache|FAILED|Failure|warpforge: kernel cache" | head -40
echo "== export"
T0=$(date +%s)
python3 - <<'PY' 2>&1 | tail -3
import sys
sys.path[:0] = ["python", "bench"]
from pathlib import Path
import gpu_models
for row in ["bert-large-b8-s384-bf16", "bert-base-b1-s128-fp32"]:
    spec = gpu_models.ROWS[row]
    model, inputs = gpu_models.build_model(spec)
    print(gpu_models.export_row(row, spec, model, inputs, Path("/tmp/kc-pkgs"), False), flush=True)
PY
echo "export $(( $(date +%s) - T0 )) s"
for row in bert-large-b8-s384-bf16 bert-base-b1-s128-fp32; do
  PKG=/tmp/kc-pkgs/$row
  export WARPFORGE_CACHE_DIR=/tmp/kc-$row
  rm -rf "$WARPFORGE_CACHE_DIR"
  for run in cold warm; do
    echo "== $row $run"
    { time "$WF" bench "$PKG" --device cuda --iters 5 --warmup 1; } 2>&1 | grep -v "^  \|^device memory"
  done
  echo "== $row --no-kernel-cache"
  { time "$WF" bench "$PKG" --device cuda --iters 5 --warmup 1 --no-kernel-cache; } 2>&1 | grep -E "compile|wall"
  du -sh "$WARPFORGE_CACHE_DIR"; find "$WARPFORGE_CACHE_DIR" -type f | head -3; find "$WARPFORGE_CACHE_DIR" -type f | wc -l
done
echo "== two processes compiling into one fresh cache at once, then a third"
PKG=/tmp/kc-pkgs/bert-base-b1-s128-fp32
export WARPFORGE_CACHE_DIR=/tmp/kc-shared
rm -rf "$WARPFORGE_CACHE_DIR"
"$WF" bench "$PKG" --device cuda --iters 2 --warmup 0 > /tmp/p1.txt 2>&1 &
"$WF" bench "$PKG" --device cuda --iters 2 --warmup 0 > /tmp/p2.txt 2>&1 &
wait
grep compile /tmp/p1.txt /tmp/p2.txt; grep -h "kernel cache" /tmp/p1.txt /tmp/p2.txt
"$WF" bench "$PKG" --device cuda --iters 2 --warmup 0 2>&1 | grep -E "compile|kernel cache"
ls "$WARPFORGE_CACHE_DIR"/kernels/*/ | grep -c tmp
echo "== a truncated entry, then an unwritable cache"
f=$(find "$WARPFORGE_CACHE_DIR" -name '*.cubin' | head -1); truncate -s 100 "$f"
"$WF" bench "$PKG" --device cuda --iters 2 --warmup 0 2>&1 | grep -E "compile|kernel cache"
"$WF" bench "$PKG" --device cuda --iters 2 --warmup 0 2>&1 | grep -E "compile|kernel cache"
touch /tmp/kc-file
"$WF" bench "$PKG" --device cuda --iters 2 --warmup 0 --kernel-cache /tmp/kc-file/sub 2>&1 | grep -E "compile|kernel cache|latency"
if [[ $(nvidia-smi -L | wc -l) -ge 2 ]]; then
  echo "== warpforge launch -n 2: both ranks compile into one fresh cache, then again warm"
  export WARPFORGE_CACHE_DIR=/tmp/kc-launch
  rm -rf "$WARPFORGE_CACHE_DIR"
  for run in cold warm; do
    echo "-- $run"
    "$WF" launch -n 2 -- "$WF" bench /tmp/kc-pkgs/bert-large-b8-s384-bf16 --device cuda --iters 2 --warmup 0 2>&1 | grep -E "compile|kernel cache|error"
  done
  find "$WARPFORGE_CACHE_DIR" -type f | wc -l
fi
