#!/usr/bin/env python3
"""Export coverage: exports every classification model of `torchvision.models` and the common
`transformers` architectures (encoder, decoder, encoder-decoder, vision) with `warpforge.export`,
in eval and in train mode, optionally validates each package with `warpforge validate` on the
CPU, and prints a table of what fails and why (docs/export_coverage.md).

    python scripts/export_coverage.py [--family torchvision|transformers|all] [--mode eval|train|both]
                                      [--small] [--no-validate] [--jobs N] [--json out.json]

Models have random weights (torchvision `weights=None`, transformers configs), so nothing is
downloaded. Inputs are small (torchvision: a batch of 2 at 64x64 where the architecture allows
it), and transformers models use a reduced configuration (2 layers, hidden size 64, vocabulary
1000: `TRANSFORMERS` below) so that the whole run stays feasible on a small CPU. Train mode traces
`model.train()` with every dropout probability set to 0 (dropout makes the outputs random, so no
golden output could judge it); BatchNorm then normalises with the batch statistics.

Each model is exported (and validated) in its own process, `--jobs` at a time; `--small` takes one
model per torchvision family and every transformers architecture.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

# torchvision models whose architecture needs a larger input than 64x64, or an argument for it.
TORCHVISION_INPUT = {
    "inception_v3": 299,  # the auxiliary classifier (train mode) needs the 17x17 grid of a 299 input
    "maxvit_t": 224,  # every stage partitions its grid into 7x7 windows: 224 / 32 = 7
}
TORCHVISION_KWARGS = {
    "vit_b_16": {"image_size": 64}, "vit_b_32": {"image_size": 64}, "vit_l_16": {"image_size": 64},
    "vit_l_32": {"image_size": 64}, "vit_h_14": {"image_size": 56},
}
TORCHVISION_SMALL = ["alexnet", "convnext_tiny", "densenet121", "efficientnet_b0", "efficientnet_v2_s", "googlenet",
                     "inception_v3", "maxvit_t", "mnasnet0_5", "mobilenet_v2", "mobilenet_v3_small",
                     "regnet_x_400mf", "regnet_y_400mf", "resnet18", "resnext50_32x4d", "shufflenet_v2_x0_5",
                     "squeezenet1_0", "swin_t", "swin_v2_t", "vgg11_bn", "vit_b_32", "wide_resnet50_2"]

_TEXT = dict(vocab_size=1000)
_BERTLIKE = dict(_TEXT, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128)
_LLAMALIKE = dict(_TEXT, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2)
_BARTLIKE = dict(_TEXT, d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                 decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128)
_VIT = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, image_size=32,
            patch_size=8)
# name: (kind, model_type for AutoConfig.for_model, reduced configuration)
TRANSFORMERS = {
    "bert": ("encoder", "bert", _BERTLIKE),
    "roberta": ("encoder", "roberta", _BERTLIKE),
    "distilbert": ("encoder", "distilbert", dict(_TEXT, dim=64, n_layers=2, n_heads=4, hidden_dim=128)),
    "albert": ("encoder", "albert", dict(_BERTLIKE, embedding_size=32)),
    "electra": ("encoder", "electra", dict(_BERTLIKE, embedding_size=32)),
    "deberta-v2": ("encoder", "deberta-v2", _BERTLIKE),
    "gpt2": ("decoder", "gpt2", dict(_TEXT, n_embd=64, n_layer=2, n_head=4, n_positions=128)),
    "llama": ("decoder", "llama", _LLAMALIKE),
    "mistral": ("decoder", "mistral", _LLAMALIKE),
    "qwen2": ("decoder", "qwen2", _LLAMALIKE),
    "gemma": ("decoder", "gemma", dict(_LLAMALIKE, head_dim=16)),
    "phi": ("decoder", "phi", dict(_TEXT, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                   num_attention_heads=4)),
    "gpt_neox": ("decoder", "gpt_neox", dict(_TEXT, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                             num_attention_heads=4)),
    "opt": ("decoder", "opt", dict(_TEXT, hidden_size=64, ffn_dim=128, num_hidden_layers=2, num_attention_heads=4,
                                   word_embed_proj_dim=64)),
    "bloom": ("decoder", "bloom", dict(_TEXT, hidden_size=64, n_layer=2, n_head=4)),
    "falcon": ("decoder", "falcon", dict(_TEXT, hidden_size=64, num_hidden_layers=2, num_attention_heads=4)),
    "t5": ("encoder-decoder", "t5", dict(_TEXT, d_model=64, d_ff=128, d_kv=16, num_layers=2, num_decoder_layers=2,
                                          num_heads=4)),
    "bart": ("encoder-decoder", "bart", _BARTLIKE),
    "mbart": ("encoder-decoder", "mbart", _BARTLIKE),
    "marian": ("encoder-decoder", "marian", dict(_BARTLIKE, decoder_vocab_size=1000, pad_token_id=999)),
    "pegasus": ("encoder-decoder", "pegasus", _BARTLIKE),
    "vit": ("vision", "vit", _VIT),
    "deit": ("vision", "deit", dict(_VIT, architectures=["DeiTForImageClassification"])),
    "beit": ("vision", "beit", _VIT),
    "dinov2": ("vision", "dinov2", _VIT),
    "swin": ("vision", "swin", dict(image_size=32, patch_size=4, embed_dim=16, depths=[1, 1], num_heads=[2, 4],
                                    window_size=4)),
    "convnext": ("vision", "convnext", dict(num_stages=2, hidden_sizes=[16, 32], depths=[1, 1], image_size=32)),
    "resnet": ("vision", "resnet", dict(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], image_size=32)),
    "mobilevit": ("vision", "mobilevit", dict(image_size=64, hidden_sizes=[32, 48, 64],
                                              neck_hidden_sizes=[8, 8, 16, 16, 24, 32, 128])),
}


def _zero_dropout(model, config=None):
    """Sets every dropout probability of `model` (and `config`) to 0: dropout modules, the
    stochastic depth of torchvision, and float attributes named like a dropout probability that
    modules pass to functional dropout."""
    import torch

    for m in model.modules() if model is not None else []:
        if isinstance(m, torch.nn.modules.dropout._DropoutNd):
            m.p = 0.0
        for k, v in list(vars(m).items()):
            if isinstance(v, float) and ("drop" in k.lower()) and not k.startswith("_"):
                setattr(m, k, 0.0)
        if type(m).__name__ == "StochasticDepth":
            m.p = 0.0
    if config is not None:
        for k, v in list(vars(config).items()):
            if isinstance(v, float) and ("drop" in k.lower() or k.endswith("_pdrop")):
                setattr(config, k, 0.0)


def build_torchvision(name: str, train: bool):
    import torch
    import torchvision

    torch.manual_seed(0)
    model = torchvision.models.get_model(name, weights=None, **TORCHVISION_KWARGS.get(name, {}))
    size = TORCHVISION_INPUT.get(name, 64)
    if train:
        _zero_dropout(model)
    return model, (torch.randn(2, 3, size, size),)


def build_transformers(name: str, train: bool):
    import torch
    import transformers

    kind, model_type, overrides = TRANSFORMERS[name]
    torch.manual_seed(0)
    config = transformers.AutoConfig.for_model(model_type, **overrides)
    if train:
        _zero_dropout(None, config)
    auto = {"encoder": transformers.AutoModel, "decoder": transformers.AutoModelForCausalLM,
            "encoder-decoder": transformers.AutoModelForSeq2SeqLM,
            "vision": transformers.AutoModelForImageClassification}[kind]
    model = auto.from_config(config)
    if train:
        _zero_dropout(model, config)
    g = torch.Generator().manual_seed(1)
    if kind == "vision":
        size = getattr(config, "image_size", 32)
        return model, {"pixel_values": torch.randn(2, getattr(config, "num_channels", 3), size, size, generator=g)}
    ids = torch.randint(3, 1000, (2, 8), generator=g)
    if kind == "encoder-decoder":
        return model, {"input_ids": ids, "decoder_input_ids": torch.randint(3, 1000, (2, 6), generator=g)}
    return model, {"input_ids": ids}


def models(family: str, small: bool) -> list[tuple[str, str]]:
    out = []
    if family in ("torchvision", "all"):
        import torchvision

        names = torchvision.models.list_models(module=torchvision.models)
        out += [("torchvision", n) for n in (TORCHVISION_SMALL if small else names)]
    if family in ("transformers", "all"):
        out += [("transformers", n) for n in TRANSFORMERS]
    return out


def _first_line(e: BaseException) -> str:
    from warpforge.lower import UnsupportedOpsError

    if isinstance(e, UnsupportedOpsError):
        ops = sorted({op for op, _ in e.ops})
        return f"UnsupportedOpsError: {', '.join(ops)}"
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"


def run_one(family: str, name: str, mode: str, workdir: pathlib.Path, validate: bool, warpforge_bin: str) -> dict:
    """Exports (and validates) one model in this process; returns its row."""
    import torch

    import warpforge

    torch.set_num_threads(1)
    row = {"family": family, "model": name, "mode": mode, "export": None, "validate": None, "reason": ""}
    train = mode == "train"
    t0 = time.perf_counter()
    try:
        build = build_torchvision if family == "torchvision" else build_transformers
        model, inputs = build(name, train)
        pkg = workdir / f"{family}-{name}-{mode}"
        warpforge.export(model, inputs, pkg, train=train)
        row["export"] = True
    except Exception as e:  # noqa: BLE001 - the table reports it
        row["export"] = False
        row["reason"] = _first_line(e)
        row["export_s"] = round(time.perf_counter() - t0, 1)
        return row
    row["export_s"] = round(time.perf_counter() - t0, 1)
    if validate:
        t0 = time.perf_counter()
        proc = subprocess.run([warpforge_bin, "validate", str(pkg), "--json"], capture_output=True, text=True)
        row["validate_s"] = round(time.perf_counter() - t0, 1)
        try:
            verdict = json.loads(proc.stdout)
        except json.JSONDecodeError:
            verdict = None
        row["validate"] = proc.returncode == 0
        if not row["validate"]:
            if verdict and verdict.get("first_failing_output"):
                out = next(o for o in verdict["outputs"] if o["name"] == verdict["first_failing_output"])
                row["reason"] = (f"output {out['name']}: " + (out.get("problem") or
                                 f"max_abs_err {out.get('max_abs_err')} rel_l2 {out.get('rel_l2')}"))
            else:
                lines = (proc.stderr or proc.stdout).strip().splitlines()
                row["reason"] = lines[0] if lines else f"exit {proc.returncode}"
    return row


def table(rows: list[dict]) -> str:
    def cell(v):
        return "-" if v is None else ("ok" if v else "FAIL")

    width = max([5] + [len(f"{r['family']}/{r['model']}") for r in rows])
    lines = [f"{'model':<{width}}  mode   export  validate  reason", "-" * (width + 40)]
    for r in rows:
        lines.append(f"{r['family'] + '/' + r['model']:<{width}}  {r['mode']:<5}  {cell(r['export']):<6}  "
                     f"{cell(r['validate']):<8}  {r['reason'][:200]}")
    lines.append("")
    for family in sorted({r["family"] for r in rows}):
        for mode in ("eval", "train"):
            rs = [r for r in rows if r["family"] == family and r["mode"] == mode]
            if not rs:
                continue
            exp = sum(1 for r in rs if r["export"])
            val = [r for r in rs if r["validate"] is not None]
            msg = f"{family} {mode}: {len(rs)} models, export ok {exp}, failed {len(rs) - exp}"
            if val:
                ok = sum(1 for r in val if r["validate"])
                msg += f"; validate ok {ok}, failed {len(val) - ok}"
            lines.append(msg)
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--family", choices=["torchvision", "transformers", "all"], default="all")
    ap.add_argument("--mode", choices=["eval", "train", "both"], default="both")
    ap.add_argument("--small", action="store_true", help="one torchvision model per family")
    ap.add_argument("--models", help="comma-separated model names to keep (e.g. resnet18,gpt2)")
    ap.add_argument("--no-validate", dest="validate", action="store_false", help="export only")
    ap.add_argument("--jobs", type=int, default=1, help="models exported at a time, each in its own process")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per model")
    ap.add_argument("--workdir", help="where packages go (default: a temporary directory, removed)")
    ap.add_argument("--warpforge", default=os.environ.get("WARPFORGE", str(REPO / "build" / "warpforge")))
    ap.add_argument("--json", help="write the rows to this file")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # family:name:mode, run in this process
    args = ap.parse_args()

    if args.one:
        family, name, mode = args.one.split(":")
        row = run_one(family, name, mode, pathlib.Path(args.workdir), args.validate, args.warpforge)
        print("ROW " + json.dumps(row), flush=True)
        return 0

    modes = ["eval", "train"] if args.mode == "both" else [args.mode]
    todo = [(f, n, m) for f, n in models(args.family, args.small) for m in modes]
    if args.models:
        keep = set(args.models.split(","))
        todo = [t for t in todo if t[1] in keep]
    tmp = None
    workdir = args.workdir
    if not workdir:
        tmp = tempfile.TemporaryDirectory(prefix="wf-coverage-")
        workdir = tmp.name

    def one(task):
        family, name, mode = task
        cmd = [sys.executable, __file__, "--one", f"{family}:{name}:{mode}", "--workdir", workdir,
               "--warpforge", args.warpforge] + ([] if args.validate else ["--no-validate"])
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
            line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("ROW ")), None)
            if line:
                row = json.loads(line[4:])
            else:
                err = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
                row = {"family": family, "model": name, "mode": mode, "export": False, "validate": None,
                       "reason": f"process failed: {err}"}
        except subprocess.TimeoutExpired:
            row = {"family": family, "model": name, "mode": mode, "export": False, "validate": None,
                   "reason": f"timed out after {args.timeout} s"}
        if not args.workdir:
            import shutil

            shutil.rmtree(os.path.join(workdir, f"{family}-{name}-{mode}"), ignore_errors=True)
        status = "ok" if row["export"] and row["validate"] is not False else "FAIL"
        print(f"[{time.perf_counter() - t0:6.1f} s] {family}/{name} {mode}: {status} {row['reason'][:160]}",
              file=sys.stderr, flush=True)
        return row

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        rows = list(pool.map(one, todo))
    print(table(rows))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    if tmp:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
