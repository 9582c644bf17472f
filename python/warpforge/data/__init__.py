"""Data sets for WarpForge's training benchmarks.

No real data set can be fetched where the benchmarks are developed, so each loader reads the real
format and a generator writes a learnable synthetic set in that same format:

- `warpforge.data.squad`: SQuAD v1.1 JSON for BERT question answering (loader with validation,
  generator, WordPiece training, HF `run_qa.py` feature preparation and postprocessing, the official
  v1.1 metric, features files for `warpforge train`). `python -m warpforge.data.squad generate
  --out DIR ...` writes a set, `... features --data FILE --vocab V --out F` its features.
- `warpforge.data.sampler`: the order of examples in training, the same in C++ and Python.

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
    "write_features",
    "read_features",
    "read_examples",
    "evaluate_features",
)
_SAMPLER_NAMES = (
    "epoch_permutation",
    "shard_indices",
    "epoch_indices",
    "epoch_batches",
    "WarpForgeSampler",
    "WarpForgeBatchSampler",
)

__all__ = list(_SQUAD_NAMES) + list(_SAMPLER_NAMES)


def __getattr__(name):
    if name in _SQUAD_NAMES:
        from . import squad

        return getattr(squad, name)
    if name in _SAMPLER_NAMES:
        from . import sampler

        return getattr(sampler, name)
    raise AttributeError(f"module 'warpforge.data' has no attribute {name!r}")
