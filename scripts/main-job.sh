#!/usr/bin/env bash
# Sets up WarpForge, lowers a GPT-style model to StableHLO, runs it on WarpForge, checks the
# result against the producer's own output and prints both latencies.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
python3 scripts/main_job.py "$@"
