"""Train the sixstep story model (or its draft twin) on the CPU.

Usage:  nice -n 10 python3 train.py --size big   --steps 640 --out out/big.pt
        nice -n 10 python3 train.py --size draft --steps 640 --lr 3e-3 --out out/draft.pt

Every training sample is a window of --seq tokens that starts at a random
document start, so position 0 holds <|bos|> just as it does at inference
(the window then runs on into the next documents, each <|bos|> ... <|eos|>).
AdamW (betas 0.9/0.95, weight decay 0.1 on matrices), gradient clipping at
1.0, linear warm-up then cosine decay to 5% of the peak learning rate.
One CPU thread by default (the build machines are shared).
"""
import argparse
import json
import math
import os
import random
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bpe import Tokenizer, read_docs  # noqa: E402
from model import Config, Llama  # noqa: E402

SIZES = {
    "big": dict(dim=256, n_layers=4, n_heads=8, n_kv_heads=2, ffn_dim=704, tied_output=False),
    "draft": dict(dim=128, n_layers=2, n_heads=4, n_kv_heads=2, ffn_dim=352, tied_output=True),
}


def encode_docs(tok, docs):
    stream, starts = [], []
    for d in docs:
        starts.append(len(stream))
        stream.extend(tok.encode(d, bos=True, eos=True))
    return torch.tensor(stream, dtype=torch.long), starts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", choices=SIZES, default="big")
    ap.add_argument("--corpus", default="out/corpus.txt")
    ap.add_argument("--heldout", default="out/heldout.txt")
    ap.add_argument("--tok", default="out/tokenizer.json")
    ap.add_argument("--steps", type=int, default=900)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=160)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--warmup", type=int, default=40)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    rng = random.Random(a.seed)
    tok = Tokenizer.load(a.tok)
    stream, starts = encode_docs(tok, read_docs(a.corpus))
    starts = [s for s in starts if s + a.seq + 1 <= len(stream)]
    held, hstarts = encode_docs(tok, read_docs(a.heldout))
    print(f"train tokens {len(stream)}, docs {len(starts)}; heldout tokens {len(held)}", flush=True)

    cfg = Config(vocab_size=len(tok.tokens), **SIZES[a.size])
    model = Llama(cfg)
    print(f"{a.size}: {model.n_params()} parameters, {cfg}", flush=True)
    decay = [p for n, p in model.named_parameters() if p.dim() == 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.95))

    def lr_at(step):
        if step < a.warmup:
            return a.lr * (step + 1) / a.warmup
        p = (step - a.warmup) / max(1, a.steps - a.warmup)
        return a.lr * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * p)))

    hrng = random.Random(99)
    hwin = [hrng.choice([s for s in hstarts if s + a.seq + 1 <= len(held)]) for _ in range(16)]

    def heldout_loss():
        model.eval()
        with torch.no_grad():
            x = torch.stack([held[s:s + a.seq + 1] for s in hwin])
            logits = model(x[:, :-1])
            loss = F.cross_entropy(logits.reshape(-1, cfg.vocab_size), x[:, 1:].reshape(-1))
        model.train()
        return loss.item()

    log = {"size": a.size, "config": cfg.to_dict(), "args": vars(a), "n_params": model.n_params(),
           "train_tokens": len(stream), "curve": []}
    t0 = time.time()
    run = 0.0
    for step in range(a.steps):
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        x = torch.stack([stream[s:s + a.seq + 1] for s in (rng.choice(starts) for _ in range(a.batch))])
        logits = model(x[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, cfg.vocab_size), x[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        run = loss.item() if step == 0 else 0.9 * run + 0.1 * loss.item()
        if step % 25 == 0 or step == a.steps - 1:
            hl = heldout_loss()
            el = time.time() - t0
            log["curve"].append({"step": step, "train_loss": round(run, 4), "heldout_loss": round(hl, 4),
                                 "seconds": round(el, 1)})
            tps = (step + 1) * a.batch * a.seq / el
            print(f"step {step:5d} loss {run:.4f} heldout {hl:.4f} lr {lr_at(step):.2e} {el:7.1f}s {tps:.0f} tok/s",
                  flush=True)
        if step % 100 == 99:
            torch.save({"config": cfg.to_dict(), "state": model.state_dict()}, a.out)
    log["seconds"] = round(time.time() - t0, 1)
    log["tokens_seen"] = a.steps * a.batch * a.seq
    torch.save({"config": cfg.to_dict(), "state": model.state_dict()}, a.out)
    with open(a.out + ".log.json", "w") as fh:
        json.dump(log, fh, indent=1)

    model.eval()
    with torch.no_grad():
        ids = tok.encode("The cat sat on the", bos=True)
        p = F.softmax(model(torch.tensor([ids]))[0, -1].double(), -1)
        top = torch.topk(p, 8)
        print("The cat sat on the ->", [(tok.decode([i]), round(v, 4)) for v, i in zip(top.values.tolist(), top.indices.tolist())])
    print(f"done in {log['seconds']} s")


if __name__ == "__main__":
    main()
