#!/usr/bin/env bash
# Where a GPU benchmark row's time goes: exports the rows of bench/gpu_models.py (WarpForge column
# only, so no PyTorch or XLA timing) and prints `warpforge bench --profile` (device time per op
# kind and the slowest ops) and `inspect --fusion`'s plan for each package. Logs to $WF_GPU_LOGS
# (default $OUT when set, else /tmp/wf-gpu-profile).
#
#   WF_GPU_BUILD=build scripts/gpu-profile.sh                                  # every row
#   WF_PROFILE_ROWS="bert-large-b8-s384-bf16 llama-b1-s512-bf16" scripts/gpu-profile.sh
#
# WF_BENCH_ARGS adds arguments to every `warpforge bench` (e.g. "--no-fusion" or "--allow-tf32").
# WF_GPU_TEST_FILTER first runs the GPU unit tests matching it (a gtest filter; "*" for all).
# WF_KERNEL_TABLES=1 adds each row's kernels timed by Nsight Compute (scripts/gpu-kernels.sh).
# WF_PROFILE_MODELS_ARGS adds arguments to gpu_models.py (e.g. "--no-cold-warm").
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${WF_GPU_BUILD:-build}
LOGS=${WF_GPU_LOGS:-${OUT:-/tmp/wf-gpu-profile}}
WORK=${WF_PROFILE_WORKDIR:-/tmp/wf-gpu-models}
ROWS=${WF_PROFILE_ROWS:-"bert-base-b1-s128-fp32 bert-large-b8-s384-bf16 resnet50-b32-bf16 llama-b1-s512-bf16 resnet50-b32-fp32"}
mkdir -p "$LOGS"
source "$ROOT/scripts/gpu-carry.sh"
wf_gpu_start "$BUILD" || exit 1
status=0
wf_gpu_tests "$LOGS" || status=1
rows_csv=$(echo "$ROWS" | tr ' ' ',')
echo "=== export + WarpForge column: $rows_csv"
python3 bench/gpu_models.py --build "$BUILD" --rows "$rows_csv" --skip eager,compile,xla --iters 30 ${WF_PROFILE_MODELS_ARGS:-} \
  --workdir "$WORK" --json "$LOGS/wf_only.json" >"$LOGS/export.log" 2>&1 || status=1
tail -12 "$LOGS/export.log"
profiled=()
for row in $ROWS; do
  pkg="$WORK/$row"
  [[ -f "$pkg/manifest.json" ]] || { echo "=== $row: not exported"; status=1; continue; }
  echo "=== $row"
  # shellcheck disable=SC2086
  "$WARPFORGE" bench "$pkg" --device cuda --profile --iters 20 --warmup 5 ${WF_BENCH_ARGS:-} \
    >"$LOGS/$row.profile.txt" 2>&1 || status=1
  head -60 "$LOGS/$row.profile.txt"
  "$WARPFORGE" inspect "$pkg/model.mlir" --fusion >"$LOGS/$row.fusion.txt" 2>&1 || true
  profiled+=("$pkg")
done
# Kernel by kernel (Nsight Compute), where asked: device time without launch gaps.
if [[ "${WF_KERNEL_TABLES:-0}" == 1 && ${#profiled[@]} -gt 0 ]]; then
  WF_GPU_LOGS="$LOGS" WF_GPU_BUILD="$BUILD" bash scripts/gpu-kernels.sh "${profiled[@]}" || status=1
fi
exit $status
