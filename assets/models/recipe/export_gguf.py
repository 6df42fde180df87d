"""Write a trained sixstep model to GGUF (version 3), with a small writer of our own.

Usage:  python3 export_gguf.py --ckpt out/big.pt --tok out/tokenizer.json \
            --name "sixstep stories 3.8M" --type f16 --out ../stories-3m-f16.gguf

--type f32 | f16 | q8_0.  Norm weights (1-D) always stay F32; every matrix
gets the chosen type.  The checkpoint is first rounded to float16 (see
model.round_to_f16_) so that the F32 and F16 files hold the same values as
the reference model the fixtures were computed with.

GGUF layout written here (all little endian):
  u32 magic "GGUF" | u32 version 3 | u64 tensor count | u64 metadata count
  metadata: string key, u32 value type, value
  tensor infos: string name, u32 n_dims, u64 dims[n_dims] (ne0 first = the
               contiguous row length), u32 ggml type, u64 offset into data
  zero padding to general.alignment (32), then the tensor data, each tensor
  starting at a multiple of 32.
A string is u64 length + UTF-8 bytes (no terminator).  An array is u32 element
type + u64 count + the elements.
"""
import argparse
import os
import struct
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bpe import Tokenizer  # noqa: E402
from model import Config, Llama, gguf_tensors, round_to_f16_  # noqa: E402

# metadata value types
T_UINT8, T_INT8, T_UINT16, T_INT16, T_UINT32, T_INT32, T_FLOAT32, T_BOOL, T_STRING, T_ARRAY, \
    T_UINT64, T_INT64, T_FLOAT64 = range(13)
# ggml tensor types
GGML_F32, GGML_F16, GGML_Q8_0 = 0, 1, 8
# llama.cpp general.file_type values
FILE_TYPE = {"f32": 0, "f16": 1, "q8_0": 7}
ALIGN = 32
QK8_0 = 32
# tokenizer.ggml.token_type values
TOKEN_NORMAL, TOKEN_CONTROL = 1, 3


def gguf_str(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def pack_scalar(t, v):
    fmt = {T_UINT8: "<B", T_INT8: "<b", T_UINT16: "<H", T_INT16: "<h", T_UINT32: "<I",
           T_INT32: "<i", T_FLOAT32: "<f", T_BOOL: "<?", T_UINT64: "<Q", T_INT64: "<q",
           T_FLOAT64: "<d"}
    if t == T_STRING:
        return gguf_str(v)
    return struct.pack(fmt[t], v)


def quantize_q8_0(x):
    """x: float32 [rows, n] with n % 32 == 0 -> bytes of blocks (fp16 d, 32 x int8).

    d = max|x| / 127 over the block; q = round-half-away-from-zero(x * (1/d)),
    computed in float32 like ggml's reference quantizer.
    """
    x = np.ascontiguousarray(x, dtype=np.float32)
    assert x.shape[-1] % QK8_0 == 0
    blocks = x.reshape(-1, QK8_0)
    amax = np.abs(blocks).max(axis=1)
    d = (amax / np.float32(127)).astype(np.float32)
    with np.errstate(divide="ignore"):
        inv = np.where(d > 0, np.float32(1) / d, np.float32(0)).astype(np.float32)
    v = blocks * inv[:, None]
    q = (np.sign(v) * np.floor(np.abs(v) + np.float32(0.5))).astype(np.int8)
    out = np.empty(len(blocks), dtype=[("d", "<f2"), ("qs", "i1", (QK8_0,))])
    out["d"] = d.astype(np.float16)
    out["qs"] = q
    return out.tobytes()


def dequantize_q8_0(x):
    """Inverse used by fixtures.py: same shape, float32 values d * q."""
    shape = x.shape
    blocks = np.frombuffer(quantize_q8_0(x), dtype=[("d", "<f2"), ("qs", "i1", (QK8_0,))])
    vals = blocks["d"].astype(np.float32)[:, None] * blocks["qs"].astype(np.float32)
    return vals.reshape(shape)


class GGUFWriter:
    def __init__(self):
        self.kv = []        # (key, type, value, array element type)
        self.tensors = []   # (name, dims, ggml type, bytes)

    def add(self, key, t, value):
        self.kv.append((key, t, value, None))

    def add_array(self, key, elem_t, values):
        self.kv.append((key, T_ARRAY, list(values), elem_t))

    def add_tensor(self, name, array, ggml_type):
        a = np.ascontiguousarray(array, dtype=np.float32)
        dims = list(reversed(a.shape))     # ne0 (contiguous) first
        if ggml_type == GGML_F32:
            data = a.astype("<f4").tobytes()
        elif ggml_type == GGML_F16:
            data = a.astype("<f2").tobytes()
        elif ggml_type == GGML_Q8_0:
            data = quantize_q8_0(a)
        else:
            raise ValueError(ggml_type)
        self.tensors.append((name, dims, ggml_type, data))

    def write(self, path):
        out = bytearray()
        out += struct.pack("<IIQQ", 0x46554747, 3, len(self.tensors), len(self.kv))
        for key, t, v, et in self.kv:
            out += gguf_str(key) + struct.pack("<I", t)
            if t == T_ARRAY:
                out += struct.pack("<IQ", et, len(v))
                for e in v:
                    out += pack_scalar(et, e)
            else:
                out += pack_scalar(t, v)
        offset = 0
        for name, dims, gt, data in self.tensors:
            out += gguf_str(name) + struct.pack("<I", len(dims))
            out += b"".join(struct.pack("<Q", d) for d in dims)
            out += struct.pack("<IQ", gt, offset)
            offset += (len(data) + ALIGN - 1) // ALIGN * ALIGN
        out += b"\0" * (-len(out) % ALIGN)
        for _, _, _, data in self.tensors:
            out += data + b"\0" * (-len(data) % ALIGN)
        with open(path, "wb") as fh:
            fh.write(out)
        return len(out)


def load_model(ckpt_path, dtype=torch.float32):
    ck = torch.load(ckpt_path, map_location="cpu")
    cfg = Config(**ck["config"])
    model = Llama(cfg)
    model.load_state_dict(ck["state"])
    round_to_f16_(model)
    model.eval()
    return model.to(dtype)


def export(model, tok, name, wtype, path, description=""):
    cfg = model.cfg
    w = GGUFWriter()
    w.add("general.architecture", T_STRING, "llama")
    w.add("general.name", T_STRING, name)
    w.add("general.description", T_STRING, description)
    w.add("general.author", T_STRING, "sixstep")
    w.add("general.license", T_STRING, "CC0-1.0")
    w.add("general.file_type", T_UINT32, FILE_TYPE[wtype])
    w.add("general.quantization_version", T_UINT32, 2)
    w.add("general.alignment", T_UINT32, ALIGN)
    w.add("llama.vocab_size", T_UINT32, cfg.vocab_size)
    w.add("llama.context_length", T_UINT32, cfg.context_length)
    w.add("llama.embedding_length", T_UINT32, cfg.dim)
    w.add("llama.block_count", T_UINT32, cfg.n_layers)
    w.add("llama.feed_forward_length", T_UINT32, cfg.ffn_dim)
    w.add("llama.attention.head_count", T_UINT32, cfg.n_heads)
    w.add("llama.attention.head_count_kv", T_UINT32, cfg.n_kv_heads)
    w.add("llama.rope.dimension_count", T_UINT32, cfg.head_dim)
    w.add("llama.rope.freq_base", T_FLOAT32, cfg.rope_base)
    w.add("llama.attention.layer_norm_rms_epsilon", T_FLOAT32, cfg.norm_eps)
    w.add("tokenizer.ggml.model", T_STRING, "gpt2")
    w.add("tokenizer.ggml.pre", T_STRING, "gpt-2")
    w.add_array("tokenizer.ggml.tokens", T_STRING, tok.tokens)
    types = [TOKEN_CONTROL if i in (tok.bos_id, tok.eos_id) else TOKEN_NORMAL for i in range(len(tok.tokens))]
    w.add_array("tokenizer.ggml.token_type", T_INT32, types)
    w.add_array("tokenizer.ggml.merges", T_STRING, tok.merges)
    w.add("tokenizer.ggml.bos_token_id", T_UINT32, tok.bos_id)
    w.add("tokenizer.ggml.eos_token_id", T_UINT32, tok.eos_id)
    w.add("tokenizer.ggml.add_bos_token", T_BOOL, True)
    w.add("tokenizer.ggml.add_eos_token", T_BOOL, False)
    mtype = {"f32": GGML_F32, "f16": GGML_F16, "q8_0": GGML_Q8_0}[wtype]
    for tname, t in gguf_tensors(model):
        a = t.detach().to(torch.float32).numpy()
        w.add_tensor(tname, a, mtype if a.ndim == 2 else GGML_F32)
    return w.write(path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--tok", default="out/tokenizer.json")
    ap.add_argument("--name", required=True)
    ap.add_argument("--description", default="")
    ap.add_argument("--type", choices=FILE_TYPE, required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    model = load_model(a.ckpt)
    tok = Tokenizer.load(a.tok)
    n = export(model, tok, a.name, a.type, a.out, a.description)
    print(f"{a.out}: {n} bytes, {model.n_params()} parameters, {a.type}")


if __name__ == "__main__":
    main()
