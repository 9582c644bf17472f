#!/usr/bin/env bash
# Training-step benchmarks on one GPU (bench/train_gpu.py): each run exports the model's training
# package with PyTorch's golden steps on the GPU, replays them with `warpforge validate --training
# --device cuda`, and times `warpforge train` beside PyTorch eager and torch.compile, one table per
# run. Optionally first the GPU unit tests matching WF_GPU_TEST_FILTER (a gtest filter).
#
#   WF_GPU_BUILD=build scripts/gpu-train-bench.sh                     # BERT-large bf16
#   WF_TRAIN_RUNS="bert-large:bf16 bert-large:fp32 resnet50:bf16 resnet50:fp32" scripts/gpu-train-bench.sh
#
# WF_TRAIN_ARGS adds arguments to every bench/train_gpu.py run (e.g. "--profile --steps 20").
# Logs and JSON go to $WF_GPU_LOGS (default $OUT when set, else /tmp/wf-train-bench).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${WF_GPU_BUILD:-build}
LOGS=${WF_GPU_LOGS:-${OUT:-/tmp/wf-train-bench}}
mkdir -p "$LOGS"
source "$ROOT/scripts/gpu-carry.sh"
wf_gpu_start "$BUILD" || exit 1
status=0
wf_gpu_tests "$LOGS" || status=1
for run in ${WF_TRAIN_RUNS:-bert-large:bf16}; do
  model=${run%%:*}
  precision=${run##*:}
  tag="$model-$precision"
  echo "=== $tag"
  # shellcheck disable=SC2086
  if ! python3 bench/train_gpu.py --model "$model" --precision "$precision" --warpforge "$WARPFORGE" \
       --out "/tmp/wf-train-$tag" --json "$LOGS/$tag.json" ${WF_TRAIN_ARGS:-} >"$LOGS/$tag.log" 2>&1; then
    status=1
  fi
  grep -vE "passes as|^\s*$" "$LOGS/$tag.log" | grep -vE "Warning|warn\(" | tail -40
done
exit $status
