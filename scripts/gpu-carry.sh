# Sourced by scripts/gpu-check.sh, scripts/multi-gpu-check.sh and the GPU bench scripts: the
# build a GPU machine runs, carried from a build machine as BUILD/carry (stripped binaries, compressed, with the host
# libraries the GPU machine may lack), or a build folder used in place.
#
#   wf_pack_carry BUILD     on the build machine: makes BUILD/carry
#   wf_unpack_carry BUILD   on the GPU machine: sets WF_BIN (the folder of warpforge and
#                           libwarpforge.so), WF_TESTS (the GPU test binary) and WF_ALLREDUCE
#                           (allreduce_bench), unpacking BUILD/carry if that is what is there;
#                           returns 1 if neither is there
#
# The binaries carried: warpforge, libwarpforge.so (bench/gpu_models.py), the GPU tests and
# allreduce_bench (bench/allreduce_gpu.py), where the build has them.
WF_CARRY_BINS="warpforge libwarpforge.so tests/cuda/warpforge_cuda_tests bench/allreduce_bench"

wf_pack_carry() {
  local build=$1 carry="$1/carry" names=() b l
  rm -rf "$carry" && mkdir -p "$carry/libs"
  for b in $WF_CARRY_BINS; do
    [[ -f "$build/$b" ]] || { echo "pack: $build/$b is not built, left out"; continue; }
    cp "$build/$b" "$carry/" && strip "$carry/$(basename "$b")"
    names+=("$(basename "$b")")
  done
  # Host libraries the GPU machine may lack (not glibc, libstdc++ or the CUDA libraries; NCCL
  # comes with PyTorch there, found by wf_unpack_carry).
  for l in $(ldd "$carry/warpforge" | awk '$3 ~ /^\// {print $3}'); do
    case "$l" in */libc.so*|*/libm.so*|*/libstdc++*|*/libgcc_s*|*/librt*|*/libpthread*|*/libdl*|*/ld-linux*|*cuda*|*cudnn*|*cublas*|*nvrtc*|*nccl*) ;;
      *) cp -L "$l" "$carry/libs/" ;;
    esac
  done
  tar -C "$carry" -cJf "$carry/hostlibs.tar.xz" libs && rm -rf "$carry/libs"
  # The binaries compressed too (their GPU code compresses well), to stay under what a carry
  # holds; the GPU machine unpacks them in place.
  tar -C "$carry" -cf - "${names[@]}" | xz -T2 -6 > "$carry/bins.tar.xz"
  for b in "${names[@]}"; do rm -f "$carry/$b"; done
  # The StableHLO interpreter tests, for the conformance run on the GPU machine.
  [[ -d ../shared/stablehlo/interpret ]] && cp -r ../shared/stablehlo/interpret "$carry/interpret"
  du -sh "$carry"
}

# libnccl.so.2 where the build machine's was (the CUDA folder) is often absent on a GPU machine
# whose NCCL is PyTorch's (the nvidia-nccl wheel): that one is put on the library path.
wf_find_nccl() {
  local bin=$1 dir
  ldd "$bin" 2>/dev/null | grep -q "libnccl.*not found" || return 0
  dir=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null)
  if [[ -n "$dir" && -f "$dir/libnccl.so.2" ]]; then
    export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$dir"
    echo "NCCL: $dir/libnccl.so.2 (PyTorch's)"
  else
    echo "NCCL: libnccl.so.2 not found (neither the build's nor PyTorch's nvidia-nccl wheel)"
  fi
}

wf_unpack_carry() {
  local build=$1
  if [[ -f "$build/carry/bins.tar.xz" && ! -x "$build/carry/warpforge" ]]; then
    tar -xJf "$build/carry/bins.tar.xz" -C "$build/carry"
  fi
  if [[ -x "$build/carry/warpforge" ]]; then
    WF_BIN="$build/carry"
    WF_TESTS="$WF_BIN/warpforge_cuda_tests"
    WF_ALLREDUCE="$WF_BIN/allreduce_bench"
    if [[ -f "$WF_BIN/hostlibs.tar.xz" ]]; then
      mkdir -p /tmp/wf-hostlibs && tar -xJf "$WF_BIN/hostlibs.tar.xz" -C /tmp/wf-hostlibs --strip-components=1
      # System libraries first; the carried ones only fill gaps.
      export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/tmp/wf-hostlibs"
    fi
  elif [[ -x "$build/warpforge" ]]; then
    WF_BIN="$build"
    WF_TESTS="$build/tests/cuda/warpforge_cuda_tests"
    WF_ALLREDUCE="$build/bench/allreduce_bench"
  else
    return 1
  fi
  wf_find_nccl "$WF_BIN/warpforge"
  if ldd "$WF_BIN/warpforge" 2>/dev/null | grep -q "not found"; then
    echo "missing libraries:"; ldd "$WF_BIN/warpforge" | grep "not found"
  fi
  return 0
}

# For the GPU scripts (gpu-train-bench.sh, gpu-profile.sh): the build in BUILD unpacked (or used
# in place), WARPFORGE set to its binary, the GPU named. Returns 1 without a build.
wf_gpu_start() {
  wf_unpack_carry "$1" || { echo "no build in $1 (nor $1/carry)" >&2; return 1; }
  WARPFORGE=$(cd "$WF_BIN" && pwd)/warpforge
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1
}

# With WF_GPU_TEST_FILTER set, the GPU unit tests matching it (a gtest filter), logged to
# LOGS/gpu_tests.log; prints the failures and the summary. Returns 1 if any failed.
wf_gpu_tests() {
  [[ -n "${WF_GPU_TEST_FILTER:-}" ]] || return 0
  local rc=0
  "$WF_TESTS" --gtest_filter="$WF_GPU_TEST_FILTER" --gtest_brief=1 >"$1/gpu_tests.log" 2>&1 || rc=1
  grep -E "FAILED|Failure" "$1/gpu_tests.log" | head -20
  tail -3 "$1/gpu_tests.log"
  return $rc
}
