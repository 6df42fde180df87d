"""Byte-level BPE for sixstep (GPT-2 style), written from the description of
the algorithm: pre-tokenize with the GPT-2 pattern, map bytes to printable
unicode characters, learn merges by pair frequency.

Usage:  python3 bpe.py train --corpus out/corpus.txt --vocab 2000 --out out/tokenizer.json
        python3 bpe.py encode --tok out/tokenizer.json "The cat sat on the"

Vocabulary layout (vocab_size = V):
  ids 0..255        the 256 single bytes, id == byte value, each written as
                    its GPT-2 byte-to-unicode character (e.g. byte 0x20 -> 'Ġ')
  ids 256..V-3      the merged tokens in merge order (a merge whose result
                    already exists adds no new token)
  id V-2 <|bos|>    beginning of sequence   (token type CONTROL)
  id V-1 <|eos|>    end of sequence         (token type CONTROL)

Pre-tokenizer = the GPT-2 regular expression
    's|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+
implemented by hand below (Python's re has no \\p{L}).  \\p{L} = Unicode
categories Lu Ll Lt Lm Lo, \\p{N} = Nd Nl No, \\s = the Unicode White_Space
set listed in WHITESPACE.  Special tokens are never produced from text.
"""
import argparse
import collections
import json
import sys
import unicodedata

BOS = "<|bos|>"
EOS = "<|eos|>"

WHITESPACE = set(chr(c) for c in list(range(0x09, 0x0E)) + [0x20, 0x85, 0xA0, 0x1680]
                 + list(range(0x2000, 0x200B)) + [0x2028, 0x2029, 0x202F, 0x205F, 0x3000])


def is_space(c):
    return c in WHITESPACE


def is_letter(c):
    return unicodedata.category(c)[0] == "L"


def is_number(c):
    return unicodedata.category(c)[0] == "N"


def is_other(c):
    return not (is_space(c) or is_letter(c) or is_number(c))


def pretokenize(text):
    """Split text exactly like the GPT-2 regex (leftmost alternative wins)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        # 's 't 're 've 'm 'll 'd  (ASCII apostrophe, lower case, as GPT-2)
        if c == "'" and i + 1 < n:
            two = text[i + 1:i + 3]
            if two in ("re", "ve", "ll"):
                out.append(text[i:i + 3]); i += 3; continue
            if text[i + 1] in "stmd":
                out.append(text[i:i + 2]); i += 2; continue
        nxt = text[i + 1] if i + 1 < n else ""
        start = i
        # ' ?' prefix followed by a class run
        for klass in (is_letter, is_number, is_other):
            if klass(c):
                j = i + 1
            elif c == " " and nxt and klass(nxt):
                j = i + 2
            else:
                continue
            while j < n and klass(text[j]):
                j += 1
            out.append(text[start:j]); i = j
            break
        else:
            # c is whitespace: \s+(?!\S) then \s+
            j = i
            while j < n and is_space(text[j]):
                j += 1
            if j == n:                       # run reaches the end
                out.append(text[i:j]); i = j
            elif j - i >= 2:                 # leave the last space for the next word
                out.append(text[i:j - 1]); i = j - 1
            else:                            # single space char before non-space
                out.append(text[i:j]); i = j
    return out


def bytes_to_unicode():
    """GPT-2's reversible byte -> printable character table."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    table = {}
    extra = 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


B2U = bytes_to_unicode()
U2B = {v: k for k, v in B2U.items()}


def to_symbols(piece):
    return tuple(B2U[b] for b in piece.encode("utf-8"))


def train(texts, vocab_size, log=sys.stderr):
    n_tokens = vocab_size - 2          # bytes + merged tokens
    seen = set(B2U.values())
    words = collections.Counter()
    for t in texts:
        for p in pretokenize(t):
            words[to_symbols(p)] += 1
    words = [[list(w), c] for w, c in words.items()]
    merges = []
    r = 0
    while len(seen) < n_tokens:
        pairs = collections.Counter()
        for syms, c in words:
            for a, b in zip(syms, syms[1:]):
                pairs[(a, b)] += c
        if not pairs:
            break
        # highest count; ties -> smallest pair in code-point order (deterministic)
        best = min(pairs.items(), key=lambda kv: (-kv[1], kv[0]))[0]
        merges.append(best)
        a, b = best
        ab = a + b
        seen.add(ab)   # two merges may spell the same token: it gets one id
        for w in words:
            syms = w[0]
            if len(syms) < 2:
                continue
            i, new = 0, []
            while i < len(syms):
                if i + 1 < len(syms) and syms[i] == a and syms[i + 1] == b:
                    new.append(ab); i += 2
                else:
                    new.append(syms[i]); i += 1
            w[0] = new
        if r % 250 == 0:
            print(f"merge {r}: {a!r}+{b!r} ({pairs[best]})", file=log)
        r += 1
    return merges


class Tokenizer:
    def __init__(self, tokens, merges):
        self.tokens = tokens
        self.merges = merges
        self.ids = {t: i for i, t in enumerate(tokens)}
        self.ranks = {tuple(m.split(" ")): i for i, m in enumerate(merges)}
        self.bos_id = self.ids[BOS]
        self.eos_id = self.ids[EOS]
        self.cache = {}

    @classmethod
    def load(cls, path):
        with open(path, encoding="utf-8") as fh:
            d = json.load(fh)
        return cls(d["tokens"], d["merges"])

    def save(self, path):
        with open(path, "w", encoding="utf-8") as fh:
            json.dump({"tokens": self.tokens, "merges": self.merges,
                       "bos_id": self.bos_id, "eos_id": self.eos_id}, fh,
                      ensure_ascii=False, indent=0)

    def bpe(self, piece):
        if piece in self.cache:
            return self.cache[piece]
        syms = list(to_symbols(piece))
        while len(syms) > 1:
            best, best_rank = None, None
            for i in range(len(syms) - 1):
                r = self.ranks.get((syms[i], syms[i + 1]))
                if r is not None and (best_rank is None or r < best_rank):
                    best, best_rank = i, r
            if best is None:
                break
            # merge every occurrence of the best pair, left to right
            a, b = syms[best], syms[best + 1]
            i, new = 0, []
            while i < len(syms):
                if i + 1 < len(syms) and syms[i] == a and syms[i + 1] == b:
                    new.append(a + b); i += 2
                else:
                    new.append(syms[i]); i += 1
            syms = new
        out = [self.ids[s] for s in syms]
        self.cache[piece] = out
        return out

    def encode(self, text, bos=False, eos=False):
        ids = [self.bos_id] if bos else []
        for p in pretokenize(text):
            ids.extend(self.bpe(p))
        if eos:
            ids.append(self.eos_id)
        return ids

    def token_bytes(self, i):
        t = self.tokens[i]
        if i in (self.bos_id, self.eos_id):
            return b""
        return bytes(U2B[ch] for ch in t)

    def decode(self, ids):
        return b"".join(self.token_bytes(i) for i in ids).decode("utf-8", errors="replace")


def build(merges):
    tokens = [B2U[b] for b in range(256)]
    have = set(tokens)
    for a, b in merges:
        if a + b not in have:
            have.add(a + b)
            tokens.append(a + b)
    tokens += [BOS, EOS]
    return Tokenizer(tokens, [f"{a} {b}" for a, b in merges])


def read_docs(path):
    with open(path, encoding="utf-8") as fh:
        return fh.read().split("\n<|doc|>\n")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train")
    t.add_argument("--corpus", required=True)
    t.add_argument("--vocab", type=int, default=2000)
    t.add_argument("--out", required=True)
    e = sub.add_parser("encode")
    e.add_argument("--tok", required=True)
    e.add_argument("text")
    a = ap.parse_args()
    if a.cmd == "train":
        merges = train(read_docs(a.corpus), a.vocab)
        tok = build(merges)
        tok.save(a.out)
        print(f"vocab {len(tok.tokens)}, merges {len(tok.merges)}, bos {tok.bos_id}, eos {tok.eos_id}")
        for w in [" mat", " rug", " floor", " seat", " cat", "The", " the"]:
            print(repr(w), tok.encode(w))
    else:
        tok = Tokenizer.load(a.tok)
        ids = tok.encode(a.text)
        print(ids, [tok.tokens[i] for i in ids])


if __name__ == "__main__":
    main()
