"""The BERT QA fine-tuning benchmark on CPU (bench/train_bert_qa.py): a 2-layer BERT trained by
WarpForge on the generated SQuAD-format set reaches dev F1 >= 85 and EM >= 84 (the target, F1 >= 90
and EM >= 84, less the 5-point spread of one run's final metrics), as PyTorch trained on the same
batches does (the generated set is learnable); its 20 golden steps and the first 20
steps of the run match PyTorch (rtol 1e-4); and trained from PyTorch's state at 80% of the run,
WarpForge's next 20 losses match PyTorch's (rtol 1e-4) and its final dev EM and F1 end within 0.5
points (5e-3) of PyTorch's. (Whole runs part after a few hundred steps whatever computes them, the
bench's docstring says why.) About six minutes on two cores: WF_SKIP_SLOW=1 skips it."""

import importlib.util
import os

import pytest

from helpers import REPO, WARPFORGE


@pytest.mark.skipif(os.environ.get("WF_SKIP_SLOW") == "1", reason="WF_SKIP_SLOW=1")
def test_bert_qa_fine_tune_matches_pytorch(tmp_path):
    spec = importlib.util.spec_from_file_location("train_bert_qa", REPO / "bench" / "train_bert_qa.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.main(["--out", str(tmp_path / "bert-qa"), "--warpforge", WARPFORGE,
                       "--json", str(tmp_path / "figures.json")]) == 0
