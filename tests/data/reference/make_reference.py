#!/usr/bin/env python3
"""Independent numpy reference for sixstep's Llama forward pass.

Writes two tiny random-weight Llama models as GGUF files (with its own small
GGUF writer, not sixstep's) and the logits a float64 numpy forward pass gives
for a few token sequences. The C++ tests load the files with sixstep's reader
and compare both forward paths against these numbers.

Run by hand (never in the build):  /usr/bin/python3 make_reference.py
Outputs, committed as fixtures:    tiny-a.gguf, tiny-b.gguf, expected.json
"""
import json
import struct
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent

# ---- a minimal GGUF v3 writer (F32 tensors only) ---------------------------------
U32, I32, F32, STR, ARR = 4, 5, 6, 8, 9


def gguf_str(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def gguf_kv(key, vtype, value):
    out = gguf_str(key) + struct.pack("<I", vtype)
    if vtype == U32:
        out += struct.pack("<I", value)
    elif vtype == I32:
        out += struct.pack("<i", value)
    elif vtype == F32:
        out += struct.pack("<f", value)
    elif vtype == STR:
        out += gguf_str(value)
    elif vtype == ARR:
        etype, items = value
        out += struct.pack("<IQ", etype, len(items))
        for it in items:
            out += gguf_str(it) if etype == STR else struct.pack("<i", it)
    return out


def write_gguf(path, kvs, tensors, align=32):
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs))
    meta = b"".join(gguf_kv(k, t, v) for k, t, v in kvs)
    infos, blobs, offset = b"", [], 0
    for name, arr in tensors:
        arr = np.ascontiguousarray(arr, dtype=np.float32)
        ne = list(reversed(arr.shape))  # ggml: ne[0] is the innermost dimension
        infos += gguf_str(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", n) for n in ne)
        infos += struct.pack("<IQ", 0, offset)  # type F32, offset
        data = arr.tobytes()
        pad = (-len(data)) % align
        blobs.append(data + b"\0" * pad)
        offset += len(data) + pad
    body = head + meta + infos
    body += b"\0" * ((-len(body)) % align)
    Path(path).write_bytes(body + b"".join(blobs))


# ---- the model, in float64 -----------------------------------------------------------
def make_model(seed, cfg):
    rng = np.random.default_rng(seed)
    d, hd = cfg["n_embd"], cfg["n_embd"] // cfg["n_head"]
    nq, nkv, ff, V = cfg["n_head"] * hd, cfg["n_head_kv"] * hd, cfg["n_ff"], cfg["n_vocab"]
    f32 = lambda *s, std=1.0: (rng.standard_normal(s) * std).astype(np.float32)
    w = {"token_embd.weight": f32(V, d)}
    for l in range(cfg["n_layer"]):
        p = f"blk.{l}."
        w[p + "attn_norm.weight"] = (1 + 0.1 * rng.standard_normal(d)).astype(np.float32)
        w[p + "attn_q.weight"] = f32(nq, d, std=d ** -0.5)
        w[p + "attn_k.weight"] = f32(nkv, d, std=d ** -0.5)
        w[p + "attn_v.weight"] = f32(nkv, d, std=d ** -0.5)
        w[p + "attn_output.weight"] = f32(d, nq, std=nq ** -0.5)
        w[p + "ffn_norm.weight"] = (1 + 0.1 * rng.standard_normal(d)).astype(np.float32)
        w[p + "ffn_gate.weight"] = f32(ff, d, std=d ** -0.5)
        w[p + "ffn_up.weight"] = f32(ff, d, std=d ** -0.5)
        w[p + "ffn_down.weight"] = f32(d, ff, std=ff ** -0.5)
    w["output_norm.weight"] = (1 + 0.1 * rng.standard_normal(d)).astype(np.float32)
    if not cfg["tied"]:
        w["output.weight"] = f32(V, d, std=d ** -0.5)
    return w


def rmsnorm(x, g, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * g


def rope(x, pos, n_rot, base):
    """x: (T, heads, hd). Rotate adjacent pairs (2i, 2i+1), i < n_rot/2."""
    x = x.copy()
    i = np.arange(0, n_rot, 2, dtype=np.float64)
    theta = pos[:, None] * base ** (-i / n_rot)  # (T, n_rot/2)
    c, s = np.cos(theta)[:, None, :], np.sin(theta)[:, None, :]
    x0, x1 = x[..., 0:n_rot:2].copy(), x[..., 1:n_rot:2].copy()
    x[..., 0:n_rot:2] = x0 * c - x1 * s
    x[..., 1:n_rot:2] = x0 * s + x1 * c
    return x


def forward(w, cfg, tokens):
    W = {k: v.astype(np.float64) for k, v in w.items()}
    d, H, Hkv = cfg["n_embd"], cfg["n_head"], cfg["n_head_kv"]
    hd, eps, T = d // H, cfg["eps"], len(tokens)
    pos = np.arange(T, dtype=np.float64)
    x = W["token_embd.weight"][tokens]  # (T, d)
    mask = np.triu(np.full((T, T), -np.inf), 1)
    for l in range(cfg["n_layer"]):
        p = f"blk.{l}."
        h = rmsnorm(x, W[p + "attn_norm.weight"], eps)
        q = (h @ W[p + "attn_q.weight"].T).reshape(T, H, hd)
        k = (h @ W[p + "attn_k.weight"].T).reshape(T, Hkv, hd)
        v = (h @ W[p + "attn_v.weight"].T).reshape(T, Hkv, hd)
        q, k = rope(q, pos, cfg["n_rot"], cfg["base"]), rope(k, pos, cfg["n_rot"], cfg["base"])
        rep = H // Hkv
        k, v = np.repeat(k, rep, axis=1), np.repeat(v, rep, axis=1)  # head h uses kv head h // rep
        att = np.einsum("thd,shd->hts", q, k) / np.sqrt(hd) + mask
        att = np.exp(att - att.max(-1, keepdims=True))
        att /= att.sum(-1, keepdims=True)
        o = np.einsum("hts,shd->thd", att, v).reshape(T, H * hd)
        x = x + o @ W[p + "attn_output.weight"].T
        h = rmsnorm(x, W[p + "ffn_norm.weight"], eps)
        g, u = h @ W[p + "ffn_gate.weight"].T, h @ W[p + "ffn_up.weight"].T
        x = x + (g / (1 + np.exp(-g)) * u) @ W[p + "ffn_down.weight"].T
    x = rmsnorm(x, W["output_norm.weight"], eps)
    head = W["output.weight"] if "output.weight" in W else W["token_embd.weight"]
    return x @ head.T  # (T, n_vocab)


CONFIGS = {
    # separate output head, RoPE over the whole head
    "tiny-a": dict(n_vocab=96, n_embd=64, n_layer=2, n_head=4, n_head_kv=2, n_ff=96, n_ctx=64,
                   n_rot=16, base=10000.0, eps=1e-5, tied=False, seed=1234),
    # tied output head, RoPE over 8 of 16 dimensions, another base, no GQA sharing beyond 2:1
    "tiny-b": dict(n_vocab=80, n_embd=64, n_layer=3, n_head=4, n_head_kv=1, n_ff=64, n_ctx=64,
                   n_rot=8, base=500.0, eps=1e-6, tied=True, seed=99),
}
PROMPTS = [[1, 5, 9, 2, 7, 33, 40], [3], [10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21]]


def main():
    out = {"note": "float64 numpy reference; see make_reference.py", "models": {}}
    for name, cfg in CONFIGS.items():
        w = make_model(cfg["seed"], cfg)
        kvs = [
            ("general.architecture", STR, "llama"),
            ("general.name", STR, name),
            ("llama.context_length", U32, cfg["n_ctx"]),
            ("llama.embedding_length", U32, cfg["n_embd"]),
            ("llama.block_count", U32, cfg["n_layer"]),
            ("llama.feed_forward_length", U32, cfg["n_ff"]),
            ("llama.attention.head_count", U32, cfg["n_head"]),
            ("llama.attention.head_count_kv", U32, cfg["n_head_kv"]),
            ("llama.rope.dimension_count", U32, cfg["n_rot"]),
            ("llama.rope.freq_base", F32, cfg["base"]),
            ("llama.attention.layer_norm_rms_epsilon", F32, cfg["eps"]),
        ]
        write_gguf(HERE / f"{name}.gguf", kvs, list(w.items()))
        runs = []
        for toks in PROMPTS:
            logits = forward(w, cfg, np.array(toks))
            runs.append({"tokens": toks, "logits": [[round(float(v), 7) for v in row] for row in logits]})
        out["models"][name] = {"file": f"{name}.gguf", "n_vocab": cfg["n_vocab"], "runs": runs}
    (HERE / "expected.json").write_text(json.dumps(out, indent=None) + "\n")
    print("wrote", ", ".join(f"{n}.gguf" for n in CONFIGS), "and expected.json")


if __name__ == "__main__":
    main()
