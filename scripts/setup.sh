#!/usr/bin/env bash
# Installs WarpForge's build and test dependencies (Debian packages and PyPI) and builds it.
# Idempotent: re-running only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(build-essential cmake ninja-build pkg-config clang
  libopenblas-dev libdnnl-dev libfftw3-dev nlohmann-json3-dev libcli11-dev libgtest-dev
  libboost-dev prometheus-cpp-dev libgloo-dev libssl-dev
)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# Python packages at the versions the suite was verified with (requirements-lock.txt), so a fresh
# machine gets what passed, not whatever the registry serves that day. WF_PIP_NEWEST=1 tries the
# newest releases instead and records them in build/requirements-newest.txt.
BUILD_DIR=${BUILD_DIR:-build}
if [ "${WF_PIP_NEWEST:-0}" = 1 ]; then
  PIP_ARGS=(--upgrade -r requirements-dev.txt)
else
  PIP_ARGS=(-r requirements-dev.txt -c requirements-lock.txt)
fi
# An externally managed interpreter (Debian's own python3) needs --break-system-packages.
python3 -m pip install -q "${PIP_ARGS[@]}" 2>/dev/null || \
  python3 -m pip install -q --break-system-packages "${PIP_ARGS[@]}"
# CUTLASS's headers (the CUDA backend's fused product epilogues, src/backends/cuda/cutlass/): the
# nvidia-cutlass wheel carries them under site-packages/cutlass_library/source, where
# CMakeLists.txt looks. Its Python half (and the packages that half needs) is not used.
CUTLASS_PIN=$(grep -m1 -E '^nvidia-cutlass==' requirements-lock.txt)
[ "${WF_PIP_NEWEST:-0}" = 1 ] && CUTLASS_PIN=nvidia-cutlass
python3 -m pip install -q --no-deps "$CUTLASS_PIN" 2>/dev/null || \
  python3 -m pip install -q --no-deps --break-system-packages "$CUTLASS_PIN"
if [ "${WF_PIP_NEWEST:-0}" = 1 ]; then
  mkdir -p "$BUILD_DIR"
  python3 scripts/pip_closure.py requirements-dev.txt >"$BUILD_DIR/requirements-newest.txt"
  echo "setup: newest versions in $BUILD_DIR/requirements-newest.txt; against the lock:"
  diff <(grep -v '^#' requirements-lock.txt) "$BUILD_DIR/requirements-newest.txt" || true
fi

# GPU code for this machine's GPUs (their compute capabilities, as nvidia-smi reports them), or on
# a machine without one for Hopper (sm_90, what the GPU benchmarks run on), so that the CUDA code
# is compiled and checked everywhere. One architecture compiles the .cu files in about 60% of the
# time of CMakeLists.txt's default of three (sm_80, sm_90 and sm_90 PTX, for a build that runs
# on any GPU: WF_CUDA_ARCHS="80-real;90-real;90-virtual", or any CMAKE_CUDA_ARCHITECTURES list).
if [ -z "${WF_CUDA_ARCHS:-}" ]; then
  WF_CUDA_ARCHS=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null |
    tr -d '. ' | grep -E '^[0-9]+$' | sort -u | sed 's/$/-real/' | paste -sd';' || true)
  WF_CUDA_ARCHS=${WF_CUDA_ARCHS:-90-real}
fi
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CUDA_ARCHITECTURES=$WF_CUDA_ARCHS" \
  ${WF_CMAKE_ARGS:-} >/dev/null
ninja -C "$BUILD_DIR" -j"$(nproc)"
