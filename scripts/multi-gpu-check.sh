#!/usr/bin/env bash
# Collectives across GPUs, one process per GPU, on a machine with 2 GPUs (or 1: the parts that
# need 2 ranks then say SKIP). Meant to finish in under 10 minutes on 2 H100s / H200s, all parts in
# one run: part (e) gets what is left of WF_TOTAL_SECONDS (default 570) after (a)-(c), and (d)
# runs last, when a minute and more of it is left (its checks are a smaller model's, in fp32).
#
#   (a) the NCCL communicator and StableHLO collectives lowered to it (tests/cuda/nccl_job_test.cpp,
#       nccl_communicator_test.cpp): at world size 1, then as the 2 ranks of `warpforge launch`,
#       where NcclJob.AllReduceOverlapsCompute also measures how much a 256 MB all-reduce overlaps
#       independent bf16 matrix products (INFO line, overlap.txt)
#   (b) all-reduce bus bandwidth, 1 MB to 1 GB, WarpForge's communicator beside torch.distributed
#       (nccl), one table (bench/allreduce_gpu.py)
#   (c) a StableHLO program with all_reduce, all_gather, reduce_scatter run by 2 processes on 2
#       GPUs (`warpforge launch -n 2 -- warpforge run --device cuda`), checked against the same
#       program run by 2 processes on the CPU (the interpreter's kernels over Gloo)
#   (d) data-parallel training: the small BERT QA package of the tests with a PyTorch DDP golden
#       run (bench/ddp_bert.py), replayed by 2 ranks on 2 GPUs (`validate --training`), 20 steps
#   (e) BERT-large QA fine-tuning on 2 GPUs, b8 per GPU, s384, bf16 autocast (bench/ddp_bert_large.py):
#       20 steps validated rank by rank against PyTorch DDP and its float64 twin, and throughput of
#       WarpForge and PyTorch DDP on 1 and 2 GPUs (bert_large_table.md). The longest part (several
#       minutes, most of it the export with its golden runs and the first compiles)
#
# The build comes from the build machine as scripts/gpu-check.sh takes it (scripts/gpu-carry.sh):
#
#   here:             WF_GPU_PACK=1 WF_GPU_BUILD=build scripts/gpu-check.sh   # makes build/carry
#   on the GPU host:  WF_GPU_BUILD=build scripts/multi-gpu-check.sh
#
# WF_RANKS overrides the number of ranks of the multi-process parts (default: 2 when there are
# 2 GPUs or more, else 1); WF_CHECK_DEVICE=cpu runs part (c) with the CPU on both sides (to try
# the script itself on a machine without GPUs). WF_PARTS picks parts (default a,b,c,d,e);
# WF_BERT_LARGE_PHASES the phases of part (e) (default export,validate,throughput: with
# WF_GPU_LOGS set, a later run can take the phases an earlier one left, on the same machine).
#
# Every part runs on its own (one failing does not stop the others) and writes a line
# `PASS|FAIL|SKIP|INFO  part  details` to summary.txt as it ends. Logs go to $WF_GPU_LOGS (default
# /tmp/wf-multi-gpu-check); when $OUT is set, the script leaves there, whatever happens, a few
# files: summary.txt, allreduce_gpu_table.md, allreduce_gpu.json, overlap.txt and logs.tar.gz
# (every log).
# Exit 1 if any part failed.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${WF_GPU_BUILD:-build}
LOGS=${WF_GPU_LOGS:-/tmp/wf-multi-gpu-check}
[[ -z "${WF_GPU_LOGS:-}" ]] && rm -rf "$LOGS"  # the default folder is this script's own
mkdir -p "$LOGS"
: >"$LOGS/summary.txt"
bundle() {
  [[ -n "${OUT:-}" && "$OUT" != "$LOGS" ]] || return 0
  mkdir -p "$OUT"
  for f in summary.txt allreduce_gpu_table.md allreduce_gpu.json overlap.txt bert_large_table.md bert_large.json; do [[ -f "$LOGS/$f" ]] && cp "$LOGS/$f" "$OUT/"; done
  # Logs only: not part (e)'s package and golden runs (tens of GB).
  tar -C "$(dirname "$LOGS")" --exclude='*.safetensors' --exclude='*/bert_large/package*' --exclude='*/run-*' \
    -czf "$OUT/logs.tar.gz" "$(basename "$LOGS")" 2>/dev/null
}
trap bundle EXIT
START=$(date +%s)
# NVLink multicast stays off on shared machines (NCCL, PyTorch and NVSHMEM), in every process.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
# A dead or stuck rank fails the others within this many seconds instead of hanging the script.
export WARPFORGE_DIST_TIMEOUT=${WARPFORGE_DIST_TIMEOUT:-90}
declare -a ROWS=()
row() {
  ROWS+=("$(printf '%-5s %-44s %s' "$1" "$2" "$3")")
  echo "${ROWS[-1]}" | tee -a "$LOGS/summary.txt"
}
elapsed() { echo "$(( $(date +%s) - $1 ))s"; }
PARTS=${WF_PARTS:-a,b,c,d,e}
part() { [[ ",$PARTS," == *",$1,"* ]]; }

source "$ROOT/scripts/gpu-carry.sh"

# --- GPUs and binaries ---------------------------------------------------------------------
GPUS=0
if command -v nvidia-smi >/dev/null; then
  GPUS=$(nvidia-smi -L 2>/dev/null | grep -c "^GPU ")
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader | tee "$LOGS/gpus.txt"
  nvidia-smi topo -m >"$LOGS/topology.txt" 2>&1 || true
fi
RANKS=${WF_RANKS:-$(( GPUS >= 2 ? 2 : 1 ))}
DEVICE=${WF_CHECK_DEVICE:-cuda}
echo "GPUs: $GPUS; ranks for the multi-process parts: $RANKS; device of part (c): $DEVICE"
if [[ $GPUS -lt 1 && "$DEVICE" == cuda ]]; then
  row FAIL "GPUs" "none found (nvidia-smi -L)"
  exit 1
fi
if ! wf_unpack_carry "$BUILD" >"$LOGS/binaries.log" 2>&1; then
  row FAIL "binaries" "neither $BUILD/carry nor a build in $BUILD"
  exit 1
fi
cat "$LOGS/binaries.log"
WF="$WF_BIN/warpforge"
row PASS "binaries" "$WF_BIN"

# gtest's summary of a log: "N passed, M failed, K skipped" (rank-prefixed lines included).
gtest_counts() {
  local log=$1
  local passed failed skipped
  passed=$(grep -cE "\[       OK \]" "$log")
  failed=$(grep -cE "\[  FAILED  \] [A-Za-z0-9_]+\.[A-Za-z0-9_]+ \(" "$log")
  skipped=$(grep -cE "\[  SKIPPED \] [A-Za-z0-9_]+\.[A-Za-z0-9_]+ \(" "$log")
  echo "$passed passed, $failed failed, $skipped skipped"
}

# --- (a) the communicator and the lowering: world size 1 ------------------------------------
if part a; then
T0=$(date +%s)
if [[ ! -x "$WF_TESTS" ]]; then
  row FAIL "(a) NCCL tests, 1 rank" "no test binary $WF_TESTS"
else
  # NcclCommunicator.EveryOperationOnEveryGpu runs one thread per GPU of this machine.
  # (The overlap measurement needs 2 ranks.)
  timeout 180 "$WF_TESTS" --gtest_filter='NcclCommunicator.*:NcclJob.*:CudaArena.*:-NcclJob.AllReduceOverlapsCompute' \
    >"$LOGS/nccl_tests_1rank.log" 2>&1
  RC=$?
  COUNTS=$(gtest_counts "$LOGS/nccl_tests_1rank.log")
  # The NCCL job tests must have run, not skipped (an unusable GPU skips them).
  RAN=$(grep -c "\[       OK \] NcclJob\." "$LOGS/nccl_tests_1rank.log")
  SKIPPED=$(grep -c "\[  SKIPPED \] NcclJob\.[A-Za-z0-9_]* (" "$LOGS/nccl_tests_1rank.log")
  if [[ $RC == 0 && "$COUNTS" == *" 0 failed"* && $RAN -gt 0 && $SKIPPED == 0 ]]; then
    row PASS "(a) NCCL tests, 1 rank" "$COUNTS ($(elapsed "$T0"))"
  else
    row FAIL "(a) NCCL tests, 1 rank" "exit $RC: $COUNTS (see nccl_tests_1rank.log)"
    grep -E "Failure|FAILED|error" "$LOGS/nccl_tests_1rank.log" | head -20
  fi
fi

# --- (a) 2 ranks: warpforge launch, one GPU each ----------------------------------------------
T0=$(date +%s)
if [[ $RANKS -lt 2 ]]; then
  row SKIP "(a) NCCL tests, 2 ranks" "one GPU"
elif [[ ! -x "$WF_TESTS" ]]; then
  row FAIL "(a) NCCL tests, 2 ranks" "no test binary"
else
  timeout 240 "$WF" launch -n 2 -- "$WF_TESTS" --gtest_filter='NcclJob.*' >"$LOGS/nccl_tests_2ranks.log" 2>&1
  RC=$?
  COUNTS=$(gtest_counts "$LOGS/nccl_tests_2ranks.log")
  # Both ranks report every test: 2 x the tests, none skipped.
  # NcclJob.AllReduceOverlapsCompute prints the overlap it measured (rank 0's line).
  OVERLAP=$(grep -m1 "^\[rank 0\] overlap:" "$LOGS/nccl_tests_2ranks.log" | sed 's/^\[rank 0\] //')
  [[ -n "$OVERLAP" ]] && echo "$OVERLAP" >"$LOGS/overlap.txt"
  if [[ $RC == 0 && "$COUNTS" == *" 0 failed, 0 skipped" && "$COUNTS" != "0 passed"* ]]; then
    row PASS "(a) NCCL tests, 2 ranks (launch -n 2)" "$COUNTS over both ranks ($(elapsed "$T0"))"
  else
    row FAIL "(a) NCCL tests, 2 ranks (launch -n 2)" "exit $RC: $COUNTS (see nccl_tests_2ranks.log)"
    grep -E "Failure|FAILED|error" "$LOGS/nccl_tests_2ranks.log" | head -20
  fi
  if [[ -n "$OVERLAP" ]]; then
    row INFO "    overlap (NcclJob.AllReduceOverlapsCompute)" "${OVERLAP#overlap: }"
  fi
fi
fi  # part a

# --- (c) a StableHLO program run by 2 processes on 2 GPUs, against 2 processes on the CPU -----
if part c; then
T0=$(date +%s)
PROG_DIR="$LOGS/program"
rm -rf "$PROG_DIR" && mkdir -p "$PROG_DIR"
N=$(( RANKS >= 2 ? 2 : 1 ))
# Dimensions divisible by the ranks: an 8x16 operand per rank.
cat >"$PROG_DIR/collectives.mlir" <<EOF
func.func @main(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xbf16>, tensor<$((8 * N))x16xf32>, tensor<8x$((16 * N))xf32>, tensor<$((8 / N))x16xf32>, tensor<8x$((16 / N))xf32>, tensor<ui32>) {
  %y = stablehlo.multiply %x, %x : tensor<8x16xf32>
  %h = stablehlo.convert %x : (tensor<8x16xf32>) -> tensor<8x16xbf16>
  %s = "stablehlo.all_reduce"(%y) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %0 = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %0 : tensor<f32>
  }) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %v:2 = "stablehlo.all_reduce"(%x, %y) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %0 = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %0 : tensor<f32>
  }) : (tensor<8x16xf32>, tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>)
  %hb = "stablehlo.all_reduce"(%h) ({
  ^bb0(%a: tensor<bf16>, %b: tensor<bf16>):
    %0 = stablehlo.add %a, %b : tensor<bf16>
    stablehlo.return %0 : tensor<bf16>
  }) : (tensor<8x16xbf16>) -> tensor<8x16xbf16>
  %g0 = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64} : (tensor<8x16xf32>) -> tensor<$((8 * N))x16xf32>
  %g1 = "stablehlo.all_gather"(%y) {all_gather_dim = 1 : i64} : (tensor<8x16xf32>) -> tensor<8x$((16 * N))xf32>
  %r0 = "stablehlo.reduce_scatter"(%y) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %0 = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %0 : tensor<f32>
  }) {scatter_dimension = 0 : i64} : (tensor<8x16xf32>) -> tensor<$((8 / N))x16xf32>
  %r1 = "stablehlo.reduce_scatter"(%x) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %0 = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %0 : tensor<f32>
  }) {scatter_dimension = 1 : i64} : (tensor<8x16xf32>) -> tensor<8x$((16 / N))xf32>
  %id = stablehlo.replica_id : tensor<ui32>
  %z = stablehlo.add %s, %y : tensor<8x16xf32>
  return %z, %v#0, %hb, %g0, %g1, %r0, %r1, %id : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xbf16>, tensor<$((8 * N))x16xf32>, tensor<8x$((16 * N))xf32>, tensor<$((8 / N))x16xf32>, tensor<8x$((16 / N))xf32>, tensor<ui32>
}
EOF
# Fresh random inputs, one per rank.
python3 - "$PROG_DIR" "$N" <<'PY'
import sys, numpy as np
d, n = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng()
for r in range(n):
    np.save(f"{d}/in{r}.npy", rng.uniform(-2, 2, (8, 16)).astype(np.float32))
PY
run_program() {  # device, output prefix
  if [[ $N -ge 2 ]]; then
    timeout 120 "$WF" launch -n "$N" -- sh -c "exec '$WF' run '$PROG_DIR/collectives.mlir' --device $1 \
      --input 0='$PROG_DIR'/in\$RANK.npy --output-dir '$PROG_DIR'/$2\$RANK"
  else
    timeout 120 "$WF" run "$PROG_DIR/collectives.mlir" --device "$1" --input 0="$PROG_DIR/in0.npy" \
      --output-dir "$PROG_DIR/${2}0"
  fi
}
LABEL=$([[ $N -ge 2 ]] && echo "(c) StableHLO collectives, 2 ranks ($DEVICE)" || echo "(c) StableHLO collectives, 1 process ($DEVICE)")
if ! run_program "$DEVICE" cuda >"$LOGS/program_cuda.log" 2>&1; then
  row FAIL "$LABEL" "warpforge run --device $DEVICE failed: $(grep -m1 -i error "$LOGS/program_cuda.log" | cut -c1-120)"
elif ! run_program cpu cpu >"$LOGS/program_cpu.log" 2>&1; then
  row FAIL "$LABEL" "the reference (--device cpu) failed: $(grep -m1 -i error "$LOGS/program_cpu.log" | cut -c1-120)"
elif python3 - "$PROG_DIR" "$N" >"$LOGS/program_compare.log" 2>&1 <<'PY'
import glob, os, sys
import numpy as np
d, n = sys.argv[1], int(sys.argv[2])
bad = 0
count = 0
for r in range(n):
    names = sorted(os.path.basename(p) for p in glob.glob(f"{d}/cpu{r}/*.npy"))
    got_names = sorted(os.path.basename(p) for p in glob.glob(f"{d}/cuda{r}/*.npy"))
    if not names or names != got_names:
        print(f"rank {r}: results differ in name: cpu {names}, cuda {got_names}"); bad += 1; continue
    for name in names:
        want, got = np.load(f"{d}/cpu{r}/{name}"), np.load(f"{d}/cuda{r}/{name}")
        count += 1
        if want.shape != got.shape or want.dtype != got.dtype:
            print(f"rank {r} {name}: {got.dtype}{got.shape} vs {want.dtype}{want.shape}"); bad += 1; continue
        bf16 = want.dtype.kind == "V" and want.dtype.itemsize == 2  # bf16 is saved as raw 2-byte words
        if want.dtype.kind == "f" or bf16:
            def floats(a):
                if bf16:
                    return (a.view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
                return a.astype(np.float64)
            w, g = floats(want), floats(got)
            tol = 1e-2 if want.dtype.itemsize == 2 else 1e-5
            ok = np.all(np.abs(g - w) <= tol * (1 + np.abs(w))) and not np.isnan(g).any()
        else:
            ok = np.array_equal(want, got)
        print(f"rank {r} {name}: {'ok' if ok else 'DIFFERS'}")
        bad += 0 if ok else 1
print(f"{count} results compared, {bad} differ")
sys.exit(1 if bad or count == 0 else 0)
PY
then
  row PASS "$LABEL" "$(tail -1 "$LOGS/program_compare.log"), $DEVICE beside cpu ($(elapsed "$T0"))"
else
  row FAIL "$LABEL" "$(tail -1 "$LOGS/program_compare.log") (see program_compare.log)"
fi
fi  # part c

# --- (b) bus bandwidth beside torch.distributed ---------------------------------------------
if part b; then
T0=$(date +%s)
if [[ $RANKS -lt 2 ]]; then
  row SKIP "(b) all-reduce bus bandwidth" "one GPU (bus bandwidth needs 2 ranks)"
elif [[ ! -x "${WF_ALLREDUCE:-}" ]]; then
  row FAIL "(b) all-reduce bus bandwidth" "no allreduce_bench in the build"
else
  timeout 300 python3 bench/allreduce_gpu.py --warpforge "$WF" --bench "$WF_ALLREDUCE" --ranks 2 \
    --iters "${WF_ALLREDUCE_ITERS:-20}" --json "$LOGS/allreduce_gpu.json" >"$LOGS/allreduce_gpu.log" 2>&1
  RC=$?
  sed -n '/^all_reduce sum/,$p' "$LOGS/allreduce_gpu.log" >"$LOGS/allreduce_gpu_table.md"
  if [[ $RC == 0 ]]; then
    row PASS "(b) all-reduce bus bandwidth" "$(tail -1 "$LOGS/allreduce_gpu.log" | cut -c1-110) ($(elapsed "$T0"))"
  else
    row FAIL "(b) all-reduce bus bandwidth" "exit $RC: $(grep -v '^$' "$LOGS/allreduce_gpu.log" | tail -1 | cut -c1-110)"
  fi
  cat "$LOGS/allreduce_gpu_table.md"
fi
fi  # part b

# --- (e) BERT-large bf16 on 2 GPUs against PyTorch DDP: validation and throughput ------------
if part e; then
T0=$(date +%s)
if [[ $RANKS -lt 2 ]]; then
  row SKIP "(e) BERT-large bf16, 2 GPUs vs DDP" "one GPU"
else
  # What is left of the whole run's time (WF_TOTAL_SECONDS), unless WF_BERT_LARGE_TIMEOUT says.
  LEFT=$(( ${WF_TOTAL_SECONDS:-570} - ($(date +%s) - START) ))
  BERT_LARGE_TIMEOUT=${WF_BERT_LARGE_TIMEOUT:-$(( LEFT > 60 ? LEFT : 60 ))}
  echo "part (e): at most $BERT_LARGE_TIMEOUT s"
  timeout "$BERT_LARGE_TIMEOUT" python3 bench/ddp_bert_large.py "$LOGS/bert_large" --world-size 2 \
    --phase "${WF_BERT_LARGE_PHASES:-export,validate,throughput}" --warpforge "$WF" >"$LOGS/bert_large.log" 2>&1
  RC=$?
  sed -n '/^BERT-large QA fine-tuning/,$p' "$LOGS/bert_large.log" >"$LOGS/bert_large_table.md"
  cp "$LOGS/bert_large/results.json" "$LOGS/bert_large.json" 2>/dev/null
  if [[ $RC == 0 ]]; then
    row PASS "(e) BERT-large bf16, 2 GPUs vs DDP" "phases ${WF_BERT_LARGE_PHASES:-export,validate,throughput} ($(elapsed "$T0"))"
  else
    row FAIL "(e) BERT-large bf16, 2 GPUs vs DDP" "exit $RC: $(grep -v '^$' "$LOGS/bert_large.log" | tail -1 | cut -c1-110)"
  fi
  cat "$LOGS/bert_large_table.md"
fi
fi  # part e

# --- (d) data-parallel training on 2 GPUs against PyTorch DDP ------------------------------
if part d; then
# The small BERT QA package of python/tests/test_distributed_training.py, its golden run made here
# by PyTorch DDP (gloo, 2 processes), replayed by 2 ranks on 2 GPUs: the data-parallel train step
# with its bucketed all_reduce lowered to NCCL. Loss of every step, each rank's gradients before
# the all-reduce and the weights after 20 steps, rank by rank.
T0=$(date +%s)
LEFT=$(( ${WF_TOTAL_SECONDS:-570} - (T0 - START) ))
if [[ $RANKS -lt 2 ]]; then
  row SKIP "(d) data-parallel BERT QA vs DDP" "one GPU"
elif [[ $LEFT -lt 75 ]]; then
  row SKIP "(d) data-parallel BERT QA vs DDP" "${LEFT}s left of WF_TOTAL_SECONDS (it takes about a minute)"
else
  rm -rf "$LOGS/ddp"
  if ! timeout 180 python3 bench/ddp_bert.py "$LOGS/ddp" --warpforge "$WF" >"$LOGS/ddp_export.log" 2>&1; then
    row FAIL "(d) data-parallel BERT QA vs DDP" "export: $(grep -v '^$' "$LOGS/ddp_export.log" | tail -1 | cut -c1-100)"
  else
    timeout 240 "$WF" launch -n 2 -- "$WF" validate "$LOGS/ddp/bert" --training --device "$DEVICE" \
      >"$LOGS/ddp_validate.log" 2>&1
    RC=$?
    rm -rf "$LOGS/ddp"  # its golden run is large; the logs say what passed
    if [[ $RC == 0 ]]; then
      row PASS "(d) data-parallel BERT QA vs DDP" "2 ranks on $DEVICE, 20 steps ($(elapsed "$T0"))"
    else
      row FAIL "(d) data-parallel BERT QA vs DDP" "exit $RC (see ddp_validate.log)"
    fi
    grep -E "^\[rank [01]\] .*(pass|PASS|FAIL|diverge|error)" "$LOGS/ddp_validate.log" | head -12
  fi
fi
fi  # part d

# --- summary ---------------------------------------------------------------------------------
echo
echo "== WarpForge multi-GPU check: $GPUS GPU(s), $(elapsed "$START") =="
for r in "${ROWS[@]}"; do echo "$r"; done
for r in "${ROWS[@]}"; do [[ "$r" == FAIL* ]] && exit 1; done
exit 0
