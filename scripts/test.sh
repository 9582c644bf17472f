#!/usr/bin/env bash
# Sets up WarpForge and runs the whole test suite: unit tests and StableHLO conformance (ctest),
# the JAX suite and the PyTorch exporter suite (pytest), and a 60 s fuzzing run of the parser under ASan+UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each stage names the seconds since the start, so a slow stage shows in the log.
stage() { echo "== $* (at ${SECONDS} s)"; }

WF_CMAKE_ARGS="-DWF_WERROR=ON" bash scripts/setup.sh

stage "ctest: unit tests and StableHLO interpreter conformance"
ctest --test-dir build --output-on-failure -j"$(nproc)"

stage "JAX suite: programs lowered by JAX, run on WarpForge, compared with JAX on CPU"
WARPFORGE="$PWD/build/warpforge" python3 -m pytest -q -p no:cacheprovider --durations=8 tests/jax

stage "exporter suite: PyTorch models exported to packages, run on WarpForge, compared with PyTorch"
WARPFORGE="$PWD/build/warpforge" python3 -m pytest -q -p no:cacheprovider --durations=12 python/tests

stage "warpforge serve: tritonclient, bad requests, deadlines/cancel/drain, metrics, trace, short load test; release tarball under env -i"
cmake --build build --target package >/dev/null  # build/warpforge-VERSION-linux-x86_64.tar.gz (cmake/release.cmake)
WARPFORGE="$PWD/build/warpforge" python3 -m pytest -q -p no:cacheprovider --durations=5 tests/serve

stage "parser fuzzing (libFuzzer, ASan+UBSan, ${FUZZ_SECONDS:-60} s)"
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DWF_FUZZ=ON -DWF_SANITIZE=ON -DWF_BUILD_TESTS=OFF -DWF_CUDA=OFF >/dev/null
ninja -C build-fuzz -j"$(nproc)" fuzz_parser
mkdir -p build-fuzz/corpus
build-fuzz/fuzz_parser -max_total_time="${FUZZ_SECONDS:-60}" -timeout=10 -rss_limit_mb=4096 \
  -print_final_stats=1 build-fuzz/corpus ../shared/stablehlo/interpret tests/data 2>&1 | tail -n 12
echo "fuzzing: no crash, hang or sanitizer report"
echo "whole suite: ${SECONDS} s"
