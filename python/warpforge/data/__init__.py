"""Data sets for WarpForge's training benchmarks.

No real data set can be fetched where the benchmarks are developed, so each loader reads the real
format and a generator writes a learnable synthetic set in that same format:

- `warpforge.data.squad`: SQuAD v1.1 JSON for BERT question answering (loader with validation,
  generator, WordPiece training, HF `run_qa.py` feature preparation and postprocessing, the official
  v1.1 metric). `python -m warpforge.data.squad generate --out DIR ...` writes a set.

Names are re-exported lazily so that `python -m warpforge.data.squad` does not import the module
twice.
"""

_SQUAD_NAMES = (
    "SquadFormatError",
    "load_squad",
    "generate_squad",
    "train_wordpiece",
    "load_tokenizer",
    "prepare_train_features",
    "prepare_validation_features",
    "postprocess_predictions",
    "squad_v1_metrics",
    "normalize_answer",
)

__all__ = list(_SQUAD_NAMES)


def __getattr__(name):
    if name in _SQUAD_NAMES:
        from . import squad

        return getattr(squad, name)
    raise AttributeError(f"module 'warpforge.data' has no attribute {name!r}")
