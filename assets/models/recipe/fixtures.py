"""Write the golden fixtures for the C++ tests (tests/data/golden/).

Usage:  python3 fixtures.py --models .. --golden ../../../tests/data/golden

The weights are read back from the committed GGUF files with gguf_read.py
(so the fixtures describe exactly those bytes) and the forward pass runs in
float64 in PyTorch.  Every prompt is fed as [<|bos|>] + encode(text).
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bpe import Tokenizer  # noqa: E402
from gguf_read import Reader  # noqa: E402

TOKENIZER_TEXTS = [
    "The cat sat on the",
    "The cat sat on the mat.",
    "Once upon a time",
    "Once upon a time, there was a little girl named Lily. She loved the park.",
    "\"Can you help me find my ball?\" asked Tom.",
    "Hello world",
    " leading space",
    "multiple   spaces  between   words",
    "trailing spaces   ",
    "line one\nline two\n\nline four\n",
    "tabs\tand\r\nwindows newlines",
    "Numbers: 3.14159, 42, 2026 and 1234567890",
    "Punctuation!!! What?! (yes) [no] {maybe} <tag> ... --- ;:",
    "don't can't I'm you're we've they'll she'd It's DON'T",
    "UPPER lower MiXeD CamelCase",
    "caf\u00e9 na\u00efve r\u00e9sum\u00e9 e\u0301",
    "\u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440!",
    "\u4f60\u597d\uff0c\u4e16\u754c\uff01\u6211\u4eec\u53bb\u516c\u56ed\u3002",
    "emoji \U0001F600\U0001F431 and \U0001F469\u200d\U0001F469\u200d\U0001F467",
    "mixed: cat\u732b 123abc a1b2 \u00bd \u2160",
    "'quoted' \"double\" `back` 'tis",
    "no\u00a0break and ideographic\u3000space",
    "",
    " ",
    "\n",
    "   ",
]

PROMPTS = [
    "The cat sat on the",
    "Once upon a time",
    "Lily went to the",
    "\"Can you help me find my",
]
ALL_POSITIONS_PROMPT = "The cat sat on the mat. It was"
GREEDY_PROMPT = "Once upon a time"
GREEDY_TOKENS = 48
CAT_WORDS = [" mat", " rug", " floor", " seat"]


def f(x):
    return float(f"{x:.9g}")


def logits_of(model, ids):
    with torch.no_grad():
        return model(torch.tensor([ids]))[0]  # [T, V] float64


def top(tok, row, k=20):
    v, i = torch.topk(row, k)
    return [{"id": int(a), "piece": tok.decode([int(a)]), "logit": f(b)} for b, a in zip(v.tolist(), i.tolist())]


def last_position(tok, model, text, full=True):
    ids = tok.encode(text, bos=True)
    row = logits_of(model, ids)[-1]
    d = {"text": text, "ids": ids, "top20": top(tok, row), "lse": f(torch.logsumexp(row, -1).item())}
    if full:
        d["logits"] = [f(x) for x in row.tolist()]
    return d


def greedy(tok, model, text, n):
    ids = tok.encode(text, bos=True)
    new, margins = [], []
    for _ in range(n):
        row = logits_of(model, ids + new)[-1]
        v, i = torch.topk(row, 2)
        new.append(int(i[0]))
        margins.append(f(v[0].item() - v[1].item()))
        if new[-1] == tok.eos_id:
            break
    return {"text": text, "ids": ids, "new_ids": new, "new_text": tok.decode(new),
            "margins": margins}


def model_fixture(tok, path, rel, prompts, all_pos=True, with_greedy=True):
    r = Reader(path)
    model = r.model(torch.float64)
    out = {
        "model_file": rel,
        "general.name": r.meta["general.name"],
        "weight_types": sorted(set(r.types.values())),
        "how": "weights read back from the GGUF file (Q8_0 dequantized as d*q), forward pass in "
               "float64 PyTorch (recipe model.py); ids = [bos] + encode(text)",
        "bos_id": tok.bos_id,
        "eos_id": tok.eos_id,
        "vocab_size": len(tok.tokens),
        "prompts": [last_position(tok, model, p) for p in prompts],
    }
    if all_pos:
        ids = tok.encode(ALL_POSITIONS_PROMPT, bos=True)
        lg = logits_of(model, ids)
        out["all_positions"] = {
            "text": ALL_POSITIONS_PROMPT, "ids": ids,
            "logits": [[f(x) for x in row.tolist()] for row in lg],
            "lse": [f(torch.logsumexp(row, -1).item()) for row in lg],
            "top20": [top(tok, row) for row in lg],
        }
    if with_greedy:
        out["greedy"] = greedy(tok, model, GREEDY_PROMPT, GREEDY_TOKENS)
    return out, model


def cat_probs(tok, model):
    ids = tok.encode("The cat sat on the", bos=True)
    p = torch.softmax(logits_of(model, ids)[-1], -1)
    words = {w: {"id": tok.encode(w)[0], "p": f(p[tok.encode(w)[0]].item())} for w in CAT_WORDS}
    v, i = torch.topk(p, 10)
    return {"text": "The cat sat on the", "ids": ids, "words": words,
            "top10": [{"id": int(a), "piece": tok.decode([int(a)]), "p": f(b)} for b, a in zip(v.tolist(), i.tolist())]}


def dump(path, obj):
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(obj, fh, ensure_ascii=False, separators=(",", ":"))
        fh.write("\n")
    print(f"{path}: {os.path.getsize(path)} bytes")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tok", default="out/tokenizer.json")
    ap.add_argument("--models", default="..")
    ap.add_argument("--golden", required=True)
    ap.add_argument("--big", default="stories-3m")
    ap.add_argument("--draft", default="stories-draft")
    a = ap.parse_args()
    tok = Tokenizer.load(a.tok)
    os.makedirs(a.golden, exist_ok=True)
    rel = lambda n: f"assets/models/{n}"  # noqa: E731

    cases = []
    for t in TOKENIZER_TEXTS:
        ids = tok.encode(t)
        assert tok.decode(ids) == t
        cases.append({"text": t, "ids": ids, "pieces": [tok.tokens[i] for i in ids]})
    dump(os.path.join(a.golden, "tokenizer.json"), {
        "vocab_file": rel(f"{a.big}-f16.gguf"),
        "note": "ids = encode(text) WITHOUT bos; pieces are the GGUF token strings "
                "(GPT-2 byte-to-unicode form, e.g. 'Ġ' = space); every model file shares this vocabulary",
        "bos_id": tok.bos_id, "eos_id": tok.eos_id, "cases": cases})

    big, model = model_fixture(tok, os.path.join(a.models, f"{a.big}-f16.gguf"), rel(f"{a.big}-f16.gguf"), PROMPTS)
    big["cat"] = cat_probs(tok, model)
    dump(os.path.join(a.golden, f"{a.big}-f16.json"), big)

    q8, qmodel = model_fixture(tok, os.path.join(a.models, f"{a.big}-q8_0.gguf"), rel(f"{a.big}-q8_0.gguf"),
                               PROMPTS, all_pos=False)
    q8["cat"] = cat_probs(tok, qmodel)
    dump(os.path.join(a.golden, f"{a.big}-q8_0.json"), q8)

    for suffix in ("f32", "f16"):
        dr, dmodel = model_fixture(tok, os.path.join(a.models, f"{a.draft}-{suffix}.gguf"),
                                   rel(f"{a.draft}-{suffix}.gguf"), PROMPTS[:2], all_pos=(suffix == "f32"))
        dr["cat"] = cat_probs(tok, dmodel)
        dump(os.path.join(a.golden, f"{a.draft}-{suffix}.json"), dr)


if __name__ == "__main__":
    main()
