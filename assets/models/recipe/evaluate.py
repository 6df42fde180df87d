"""Check the acceptance criteria on the exported models (read back from GGUF).

Usage:  python3 evaluate.py --models .. --out out/eval.json

* "The cat sat on the": probabilities of ' mat', ' rug', ' floor', ' seat'
  (must be the top 4, each within +-0.05 of 0.42 0.18 0.12 0.08).
* Greedy continuation of "Once upon a time" (48 tokens).
* Draft agreement: on held-out documents (corpus seed 2, never trained on),
  the fraction of positions where the draft's greedy next token equals the
  big model's.
* Held-out loss of both models (nats/token).
"""
import argparse
import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bpe import Tokenizer, read_docs  # noqa: E402
from gguf_read import Reader  # noqa: E402

TARGET = {" mat": 0.42, " rug": 0.18, " floor": 0.12, " seat": 0.08}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tok", default="out/tokenizer.json")
    ap.add_argument("--models", default="..")
    ap.add_argument("--big", default="stories-3m-f16.gguf")
    ap.add_argument("--draft", default="stories-draft-f16.gguf")
    ap.add_argument("--heldout", default="out/heldout.txt")
    ap.add_argument("--docs", type=int, default=200)
    ap.add_argument("--out", default="out/eval.json")
    a = ap.parse_args()
    torch.set_num_threads(2)
    tok = Tokenizer.load(a.tok)
    res = {}
    models = {}
    for key, fn in (("big", a.big), ("draft", a.draft)):
        models[key] = Reader(os.path.join(a.models, fn)).model(torch.float64)

    with torch.no_grad():
        for key, m in models.items():
            ids = tok.encode("The cat sat on the", bos=True)
            p = F.softmax(m(torch.tensor([ids]))[0, -1], -1)
            v, i = torch.topk(p, 6)
            top = [(tok.decode([int(t)]), round(float(x), 4)) for x, t in zip(v, i)]
            words = {w: round(float(p[tok.encode(w)[0]]), 4) for w in TARGET}
            ok = [t[0] for t in top[:4]] == list(TARGET) and all(abs(words[w] - TARGET[w]) <= 0.05 for w in TARGET)
            res[f"cat_{key}"] = {"top": top, "words": words, "pass": ok}
            print(key, "The cat sat on the ->", top, "PASS" if ok else "FAIL")

        m = models["big"]
        ids = tok.encode("Once upon a time", bos=True)
        new = []
        for _ in range(48):
            nxt = int(m(torch.tensor([ids + new]))[0, -1].argmax())
            new.append(nxt)
            if nxt == tok.eos_id:
                break
        res["greedy_once_upon_a_time"] = {"new_ids": new, "text": "Once upon a time" + tok.decode(new)}
        print("greedy:", repr(res["greedy_once_upon_a_time"]["text"]), len(new), "tokens")

        docs = read_docs(a.heldout)[:a.docs]
        agree = total = 0
        nll = {"big": 0.0, "draft": 0.0}
        for d in docs:
            ids = tok.encode(d, bos=True, eos=True)[:512]
            x = torch.tensor([ids[:-1]])
            y = torch.tensor(ids[1:])
            lb = models["big"](x)[0]
            ld = models["draft"](x)[0]
            agree += int((lb.argmax(-1) == ld.argmax(-1)).sum())
            total += len(y)
            nll["big"] += float(F.cross_entropy(lb, y, reduction="sum"))
            nll["draft"] += float(F.cross_entropy(ld, y, reduction="sum"))
        res["draft_agreement"] = {"positions": total, "agree": agree, "fraction": round(agree / total, 4),
                                  "heldout_docs": len(docs)}
        res["heldout_loss"] = {k: round(v / total, 4) for k, v in nll.items()}
        print("draft agreement:", res["draft_agreement"], "heldout loss:", res["heldout_loss"])
    with open(a.out, "w") as fh:
        json.dump(res, fh, indent=1)


if __name__ == "__main__":
    main()
