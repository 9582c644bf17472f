"""Writes the small BERT QA training package with a 2-rank PyTorch DDP golden run (gloo, CPU)
that python/tests/test_distributed_training.py checks, for scripts/multi-gpu-check.sh to replay
on 2 GPUs: `warpforge launch -n 2 -- warpforge validate OUT/bert --training --device cuda`.

    python bench/ddp_bert.py OUT [--warpforge build/warpforge]
"""

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "python"), str(REPO / "python" / "tests")]

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, help="a directory that does not exist yet")
    parser.add_argument("--warpforge", default=str(REPO / "build" / "warpforge"))
    args = parser.parse_args()
    from test_distributed_training import export_bert_ddp
    args.out.mkdir(parents=True)
    pkg, data = export_bert_ddp(args.out, args.warpforge)
    print(f"{pkg} ({data})")
