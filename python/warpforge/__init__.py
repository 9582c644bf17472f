"""WarpForge's PyTorch exporter: `warpforge.export(module, example_inputs, out_dir)` writes a
model package (StableHLO text, safetensors weights, manifest, golden tensors)."""

__version__ = "0.1.0"

from .export import export  # noqa: E402
from .lower import UnsupportedOpsError  # noqa: E402
from .lowering import LoweringError  # noqa: E402
from .optimizers import UnsupportedOptimizerError, linear_warmup_decay, lr_at  # noqa: E402
from .training import TrainingExportError, export_training, write_checkpoint  # noqa: E402

__all__ = ["export", "UnsupportedOpsError", "LoweringError", "export_training", "TrainingExportError", "write_checkpoint",
           "UnsupportedOptimizerError", "linear_warmup_decay", "lr_at", "__version__"]
