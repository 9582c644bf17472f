"""PyTorch reference run of the BERT QA fine-tuning benchmark on (synthetic) SQuAD v1.1.

    python -m warpforge.data.squad_reference --out /tmp/squad --train 8000 --dev 1000 --seed 0

generates the set (unless DIR already holds it), trains `BertForQuestionAnswering` from random
weights on CPU and prints dev EM/F1 with the official v1.1 metric. The configuration is the one
WarpForge's training benchmark must match:

- model: 2 layers, hidden 128, 2 heads, intermediate 512, GELU, dropout off, random init
  (`torch.manual_seed(seed)`), vocabulary = the generated `vocab.txt`;
- features: HF `run_qa.py` (`prepare_train_features` / `prepare_validation_features`), doc_stride
  128, every feature padded to `max_seq`;
- optimiser: AdamW (betas 0.9/0.999, eps 1e-8, weight decay 0.01 except biases and LayerNorm
  weights, as HF's Trainer), gradient norm clipped to 1.0, linear warmup over the first
  `warmup` fraction of steps then linear decay to 0; batch 8, 2 epochs, shuffled each epoch in
  WarpForge's order (`warpforge.data.sampler.epoch_permutation(seed, epoch, n)`, the order
  `warpforge train` uses; `--sampler torch` takes `torch.randperm` with a seeded generator
  instead); `torch.set_num_threads(2)`.

max_seq defaults to 192 rather than run_qa's 384. A generated question with its paragraph is 40-105
tokens long (SQuAD's average about 160), so at 384 three quarters of every feature would be padding
that the model computes and masks; 192 keeps every generated example whole in one span with room to
spare, keeps doc_stride 128 valid (the context window, 192 - question - 3 tokens, stays above 128),
and takes about half the time per step of 384 on the 2-core CPU. Real SQuAD files go through the
same code with `--max-seq 384`.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch

from . import squad
from .sampler import epoch_permutation


def build_model(vocab_size: int, max_seq: int, seed: int):
    from transformers import BertConfig, BertForQuestionAnswering

    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=vocab_size,
        hidden_size=128,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=512,
        hidden_act="gelu",
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        max_position_embeddings=max(512, max_seq),
        type_vocab_size=2,
        initializer_range=0.02,
    )
    return BertForQuestionAnswering(config)


def make_optimizer(model, lr: float, weight_decay: float = 0.01):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if name.endswith("bias") or "LayerNorm" in name else decay).append(p)
    return torch.optim.AdamW(
        [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=lr, betas=(0.9, 0.999), eps=1e-8)


def linear_schedule(optimizer, warmup_steps: int, total_steps: int):
    def factor(step):
        if step < warmup_steps:
            return step / max(1, warmup_steps)
        return max(0.0, (total_steps - step) / max(1, total_steps - warmup_steps))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def evaluate(model, dev_examples, dev_features, batch: int = 64, device="cpu") -> dict:
    model.eval()
    starts, ends = [], []
    with torch.no_grad():
        for i in range(0, len(dev_features["input_ids"]), batch):
            out = model(**{k: torch.from_numpy(dev_features[k][i:i + batch]).to(device)
                           for k in ("input_ids", "token_type_ids", "attention_mask")})
            starts.append(out.start_logits.float().cpu().numpy())
            ends.append(out.end_logits.float().cpu().numpy())
    model.train()
    preds = squad.postprocess_predictions(dev_examples, dev_features, np.concatenate(starts),
                                          np.concatenate(ends))
    return squad.squad_v1_metrics(preds, dev_examples)


def run(data_dir, *, max_seq=192, doc_stride=128, batch=8, epochs=2, lr=1e-3, warmup=0.1,
        seed=0, threads=2, eval_every=0, device="cpu", sampler="warpforge", log=print) -> dict:
    torch.set_num_threads(threads)
    data_dir = Path(data_dir)
    tok = squad.load_tokenizer(data_dir / squad.VOCAB_FILE)
    train_examples = squad.load_squad(data_dir / squad.TRAIN_FILE)
    dev_examples = squad.load_squad(data_dir / squad.DEV_FILE)
    t0 = time.time()
    train = squad.prepare_train_features(train_examples, tok, max_seq, doc_stride)
    dev = squad.prepare_validation_features(dev_examples, tok, max_seq, doc_stride)
    prep_s = time.time() - t0
    n = len(train["input_ids"])
    steps_per_epoch = math.ceil(n / batch)
    total = steps_per_epoch * epochs
    log(f"train: {len(train_examples)} questions -> {n} features; dev: {len(dev_examples)} questions "
        f"-> {len(dev['input_ids'])} features; {total} steps; vocab {len(tok)}; prep {prep_s:.1f}s")

    model = build_model(len(tok), max_seq, seed).to(device)
    opt = make_optimizer(model, lr)
    sched = linear_schedule(opt, int(warmup * total), total)
    gen = torch.Generator().manual_seed(seed)
    tensors = {k: torch.from_numpy(v).to(device) for k, v in train.items()}
    model.train()
    step, t_train, history = 0, 0.0, []
    for epoch in range(epochs):
        if sampler == "warpforge":
            order = torch.tensor(epoch_permutation(seed, epoch, n), dtype=torch.int64)
        elif sampler == "torch":
            order = torch.randperm(n, generator=gen)
        else:
            raise ValueError(f"unknown sampler {sampler!r} (warpforge, torch)")
        t_epoch = time.time()
        running = 0.0
        for b in range(steps_per_epoch):
            idx = order[b * batch:(b + 1) * batch].to(device)
            loss = model(**{k: v[idx] for k, v in tensors.items()}).loss
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            step += 1
            running += loss.item()
            if step % 100 == 0:
                log(f"step {step}/{total} loss {running / 100:.3f} ({time.time() - t_epoch + t_train:.0f}s)")
                running = 0.0
            if eval_every and step % eval_every == 0:
                t_train += time.time() - t_epoch
                m = evaluate(model, dev_examples, dev, device=device)
                history.append({"step": step, **m})
                log(f"step {step}: dev EM {m['exact_match']:.2f} F1 {m['f1']:.2f}")
                t_epoch = time.time()
        t_train += time.time() - t_epoch
    t0 = time.time()
    metrics = evaluate(model, dev_examples, dev, device=device)
    eval_s = time.time() - t0
    result = {
        "train_questions": len(train_examples), "train_features": n,
        "dev_questions": len(dev_examples), "dev_features": int(len(dev["input_ids"])),
        "vocab": len(tok), "max_seq": max_seq, "doc_stride": doc_stride, "batch": batch,
        "epochs": epochs, "lr": lr, "warmup": warmup, "seed": seed, "threads": threads, "sampler": sampler,
        "steps": total, "train_seconds": round(t_train, 1), "eval_seconds": round(eval_s, 1),
        "exact_match": round(metrics["exact_match"], 2), "f1": round(metrics["f1"], 2),
        "history": history,
    }
    log(f"dev EM {result['exact_match']:.2f} F1 {result['f1']:.2f}; training {t_train:.0f}s "
        f"({t_train / total * 1000:.0f} ms/step)")
    return result


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m warpforge.data.squad_reference", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="data directory (generated there unless it holds the set)")
    p.add_argument("--train", type=int, default=8000)
    p.add_argument("--dev", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0, help="data and model seed")
    p.add_argument("--vocab-size", type=int, default=1000)
    p.add_argument("--max-seq", type=int, default=192)
    p.add_argument("--doc-stride", type=int, default=128)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--warmup", type=float, default=0.1)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--eval-every", type=int, default=0)
    p.add_argument("--device", default="cpu", help="cpu (the reference) or cuda")
    p.add_argument("--sampler", default="warpforge", choices=["warpforge", "torch"],
                   help="example order: WarpForge's (as `warpforge train`) or torch.randperm")
    p.add_argument("--json", help="write the result here")
    args = p.parse_args(argv)

    out = Path(args.out)
    if not all((out / f).exists() for f in (squad.TRAIN_FILE, squad.DEV_FILE, squad.VOCAB_FILE)):
        paths = squad.generate_squad(out, args.train, args.dev, args.seed)
        squad.train_wordpiece([paths["train"], paths["dev"]], args.vocab_size, out / squad.VOCAB_FILE)
    result = run(out, max_seq=args.max_seq, doc_stride=args.doc_stride, batch=args.batch,
                 epochs=args.epochs, lr=args.lr, warmup=args.warmup, seed=args.seed,
                 threads=args.threads, eval_every=args.eval_every, device=args.device,
                 sampler=args.sampler, log=lambda s: print(s, flush=True))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
