"""Check bpe.py's pre-tokenizer and merge loop against llama.cpp's GPT-2 test
vectors (tests/data/tokenizers/ggml-vocab-gpt-2.gguf{,.inp,.out}): the GPT-2
vocabulary and merges are read with gguf_read.py and every test text must
encode to exactly the expected ids.

Usage:  python3 check_tokenizer.py [../../../tests/data/tokenizers]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bpe import Tokenizer  # noqa: E402
from gguf_read import Reader  # noqa: E402


class VocabTokenizer(Tokenizer):
    """A Tokenizer over any GGUF gpt2 vocabulary (no <|bos|>/<|eos|> needed)."""

    def __init__(self, tokens, merges):
        self.tokens, self.merges = tokens, merges
        self.ids = {t: i for i, t in enumerate(tokens)}
        self.ranks = {tuple(m.split(" ", 1)): i for i, m in enumerate(merges)}
        self.bos_id = self.eos_id = -1
        self.cache = {}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "../../../tests/data/tokenizers")
    base = os.path.join(d, "ggml-vocab-gpt-2.gguf")
    r = Reader(base)
    tok = VocabTokenizer(r.meta["tokenizer.ggml.tokens"], r.meta["tokenizer.ggml.merges"])
    with open(base + ".inp", encoding="utf-8") as fh:
        texts = fh.read().split("\n__ggml_vocab_test__\n")
    with open(base + ".out", encoding="utf-8") as fh:
        expected = [[int(v) for v in line.split()] for line in fh.read().split("\n")]
    bad = 0
    for text, exp in zip(texts, expected):
        got = tok.encode(text)
        if got != exp:
            bad += 1
            print("MISMATCH", repr(text), exp, got)
    n = min(len(texts), len(expected))
    print(f"{n - bad} of {n} GPT-2 test texts encode exactly as llama.cpp expects")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
