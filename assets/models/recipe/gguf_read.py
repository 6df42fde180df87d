"""Read a GGUF file back (our own small reader): metadata, tensors, and a
PyTorch Llama built from the file's weights.  Used to check the writer and to
compute the golden fixtures from exactly the bytes that are committed.

Usage:  python3 gguf_read.py ../stories-3m-f16.gguf      (prints a summary)
"""
import struct
import sys

import numpy as np
import torch

import os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import Config, Llama, gguf_tensors  # noqa: E402

SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
TYPE_NAMES = {0: "F32", 1: "F16", 8: "Q8_0"}


class Reader:
    def __init__(self, path):
        self.buf = open(path, "rb").read()
        self.pos = 0
        magic, version, n_t, n_kv = self.unpack("<IIQQ")
        assert magic == 0x46554747 and version == 3, "not a GGUF v3 file"
        self.meta = {}
        for _ in range(n_kv):
            k = self.string()
            (t,) = self.unpack("<I")
            self.meta[k] = self.value(t)
        align = self.meta.get("general.alignment", 32)
        infos = []
        for _ in range(n_t):
            name = self.string()
            (nd,) = self.unpack("<I")
            dims = list(self.unpack("<" + "Q" * nd))
            gt, off = self.unpack("<IQ")
            infos.append((name, dims, gt, off))
        start = (self.pos + align - 1) // align * align
        self.tensors = {}
        self.types = {}
        for name, dims, gt, off in infos:
            n = int(np.prod(dims))
            shape = list(reversed(dims))
            p = start + off
            if gt == 0:
                a = np.frombuffer(self.buf, "<f4", n, p)
            elif gt == 1:
                a = np.frombuffer(self.buf, "<f2", n, p).astype(np.float32)
            elif gt == 8:
                blk = np.frombuffer(self.buf, [("d", "<f2"), ("qs", "i1", (32,))], n // 32, p)
                a = (blk["d"].astype(np.float32)[:, None] * blk["qs"].astype(np.float32)).reshape(-1)
            else:
                raise ValueError(f"{name}: ggml type {gt} not supported here")
            self.tensors[name] = a.reshape(shape)
            self.types[name] = TYPE_NAMES[gt]

    def unpack(self, fmt):
        v = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += struct.calcsize(fmt)
        return v

    def string(self):
        (n,) = self.unpack("<Q")
        s = self.buf[self.pos:self.pos + n].decode("utf-8")
        self.pos += n
        return s

    def value(self, t):
        if t == 8:
            return self.string()
        if t == 9:
            et, n = self.unpack("<IQ")
            return [self.value(et) for _ in range(n)]
        return self.unpack(SCALAR[t])[0]

    def config(self):
        m = self.meta
        return Config(vocab_size=m["llama.vocab_size"], dim=m["llama.embedding_length"],
                      n_layers=m["llama.block_count"], n_heads=m["llama.attention.head_count"],
                      n_kv_heads=m["llama.attention.head_count_kv"],
                      ffn_dim=m["llama.feed_forward_length"], context_length=m["llama.context_length"],
                      norm_eps=m["llama.attention.layer_norm_rms_epsilon"],
                      rope_base=m["llama.rope.freq_base"],
                      tied_output="output.weight" not in self.tensors)

    def model(self, dtype=torch.float64):
        model = Llama(self.config()).to(dtype)
        with torch.no_grad():
            for name, t in gguf_tensors(model):
                t.copy_(torch.from_numpy(np.array(self.tensors[name], dtype=np.float64)))
        model.eval()
        return model


def main():
    r = Reader(sys.argv[1])
    for k, v in r.meta.items():
        if isinstance(v, list):
            print(f"{k}: [{len(v)}] {v[:5]} ...")
        else:
            print(f"{k}: {v}")
    for name, a in r.tensors.items():
        print(f"{name:28s} {r.types[name]:5s} {list(reversed(a.shape))}")


if __name__ == "__main__":
    main()
