"""`warpforge-export`: exports a model to a package from the command line.

    warpforge-export torchvision.models:resnet18 out/resnet18 --input-shape 1,3,224,224
    warpforge-export mypkg.models:build_model out/pkg --input-shape 2,16 --input-dtype int64 --dynamic-batch

MODEL is `module:attribute`, a callable returning an nn.Module (or an nn.Module). Inputs are
random (seeded), one --input-shape per forward argument."""

from __future__ import annotations

import argparse
import importlib
import sys

import torch

from . import export
from .lower import UnsupportedOpsError
from .lowering import LoweringError

_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16,
           "int64": torch.int64, "int32": torch.int32}


def _load(spec: str):
    mod_name, _, attr = spec.partition(":")
    if not attr:
        raise SystemExit(f"warpforge-export: MODEL must be module:attribute, got {spec!r}")
    obj = importlib.import_module(mod_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj() if not isinstance(obj, torch.nn.Module) else obj


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="warpforge-export", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", help="module:attribute naming an nn.Module or a callable returning one")
    p.add_argument("out_dir", help="package directory to write")
    p.add_argument("--input-shape", action="append", required=True,
                   help="comma-separated shape of one input (repeat per input)")
    p.add_argument("--input-dtype", action="append", default=[], choices=sorted(_DTYPES),
                   help="dtype of each input (default float32); integer inputs are drawn in [0, --int-high)")
    p.add_argument("--int-high", type=int, default=1000)
    p.add_argument("--dynamic-batch", action="store_true")
    p.add_argument("--dtype", choices=["float32", "bfloat16", "float16"])
    p.add_argument("--name")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)

    torch.manual_seed(a.seed)
    model = _load(a.model)
    inputs = []
    for i, shape in enumerate(a.input_shape):
        dims = [int(s) for s in shape.split(",") if s]
        dt = _DTYPES[a.input_dtype[i]] if i < len(a.input_dtype) else torch.float32
        inputs.append(torch.randint(0, a.int_high, dims, dtype=dt) if not dt.is_floating_point
                      else torch.randn(dims, dtype=dt))
    try:
        manifest = export(model, tuple(inputs), a.out_dir, dynamic_batch=a.dynamic_batch,
                          dtype=_DTYPES[a.dtype] if a.dtype else None, name=a.name)
    except (UnsupportedOpsError, LoweringError) as e:
        print(f"warpforge-export: {e}", file=sys.stderr)
        return 1
    print(f"wrote {a.out_dir}: {len(manifest['inputs'])} inputs, {len(manifest['weights'])} weights, "
          f"{len(manifest['outputs'])} outputs, {len(manifest.get('activations', []))} activations")
    return 0


if __name__ == "__main__":
    sys.exit(main())
