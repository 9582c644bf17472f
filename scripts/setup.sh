#!/usr/bin/env bash
# Installs WarpForge's build and test dependencies (Debian packages and PyPI) and builds it.
# Idempotent: re-running only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(build-essential cmake ninja-build pkg-config clang
  libopenblas-dev libdnnl-dev libfftw3-dev nlohmann-json3-dev libcli11-dev libgtest-dev
  libboost-dev prometheus-cpp-dev
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
# Prefer the interpreter that already has numpy/jax if there is one; pip-install what is missing.
python3 -m pip install -q -r requirements-dev.txt 2>/dev/null || \
  python3 -m pip install -q --break-system-packages -r requirements-dev.txt

BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo ${WF_CMAKE_ARGS:-} >/dev/null
ninja -C "$BUILD_DIR" -j"$(nproc)"
