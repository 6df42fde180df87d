"""A small Llama-architecture transformer in plain PyTorch (sixstep recipe).

RMSNorm, rotary position embeddings (RoPE), grouped-query attention and a
SwiGLU feed-forward block, laid out so that the weights can be written to
GGUF with llama.cpp's tensor names and *no permutation*:

* RoPE rotates adjacent pairs (x[2i], x[2i+1]) of each head, with
  theta_i = freq_base ** (-2i / head_dim).  This is the convention GGUF
  "llama" models use (ggml's normal rope mode), so the Q and K matrices are
  stored exactly as trained.
* Query head h attends with key/value head h // (n_head / n_head_kv).
* Weight matrices are nn.Linear without bias: weight shape [out, in].

The same module runs in float32 for training and in float64 for the golden
fixtures (see fixtures.py).
"""
import math
from dataclasses import dataclass, asdict

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    vocab_size: int = 2000
    dim: int = 256
    n_layers: int = 4
    n_heads: int = 8
    n_kv_heads: int = 2
    ffn_dim: int = 704
    context_length: int = 512
    norm_eps: float = 1e-5
    rope_base: float = 10000.0
    tied_output: bool = False

    @property
    def head_dim(self):
        return self.dim // self.n_heads

    def to_dict(self):
        return asdict(self)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(head_dim, n_pos, base, dtype=torch.float32):
    """cos/sin tables of shape [n_pos, head_dim/2], computed in float64."""
    i = torch.arange(0, head_dim // 2, dtype=torch.float64)
    inv_freq = base ** (-2.0 * i / head_dim)
    pos = torch.arange(n_pos, dtype=torch.float64)
    ang = pos[:, None] * inv_freq[None, :]
    return ang.cos().to(dtype), ang.sin().to(dtype)


def apply_rope(x, cos, sin):
    """x: [B, T, H, D]; rotate adjacent pairs (x[..., 2i], x[..., 2i+1])."""
    x0 = x[..., 0::2]
    x1 = x[..., 1::2]
    c = cos[None, :, None, :]
    s = sin[None, :, None, :]
    y0 = x0 * c - x1 * s
    y1 = x0 * s + x1 * c
    return torch.stack((y0, y1), dim=-1).flatten(-2)


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        hd = cfg.head_dim
        self.wq = nn.Linear(cfg.dim, cfg.n_heads * hd, bias=False)
        self.wk = nn.Linear(cfg.dim, cfg.n_kv_heads * hd, bias=False)
        self.wv = nn.Linear(cfg.dim, cfg.n_kv_heads * hd, bias=False)
        self.wo = nn.Linear(cfg.n_heads * hd, cfg.dim, bias=False)

    def forward(self, x, cos, sin, mask):
        B, T, _ = x.shape
        cfg = self.cfg
        hd = cfg.head_dim
        q = self.wq(x).view(B, T, cfg.n_heads, hd)
        k = self.wk(x).view(B, T, cfg.n_kv_heads, hd)
        v = self.wv(x).view(B, T, cfg.n_kv_heads, hd)
        q = apply_rope(q, cos, sin)
        k = apply_rope(k, cos, sin)
        rep = cfg.n_heads // cfg.n_kv_heads
        # query head h uses kv head h // rep
        k = k.repeat_interleave(rep, dim=2)
        v = v.repeat_interleave(rep, dim=2)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # [B, H, T, D]
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
        att = att.masked_fill(mask, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, cfg.n_heads * hd)
        return self.wo(y)


class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.w_gate = nn.Linear(cfg.dim, cfg.ffn_dim, bias=False)
        self.w_up = nn.Linear(cfg.dim, cfg.ffn_dim, bias=False)
        self.w_down = nn.Linear(cfg.ffn_dim, cfg.dim, bias=False)

    def forward(self, x):
        return self.w_down(F.silu(self.w_gate(x)) * self.w_up(x))


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.attn_norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.attn = Attention(cfg)
        self.ffn_norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.ffn = FeedForward(cfg)

    def forward(self, x, cos, sin, mask):
        x = x + self.attn(self.attn_norm(x), cos, sin, mask)
        return x + self.ffn(self.ffn_norm(x))


class Llama(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.tok_embd = nn.Embedding(cfg.vocab_size, cfg.dim)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.out_norm = RMSNorm(cfg.dim, cfg.norm_eps)
        if cfg.tied_output:
            self.output = None
        else:
            self.output = nn.Linear(cfg.dim, cfg.vocab_size, bias=False)
        self.apply(self._init)
        # scaled init for the residual projections (GPT-2 style)
        for b in self.blocks:
            nn.init.normal_(b.attn.wo.weight, std=0.02 / math.sqrt(2 * cfg.n_layers))
            nn.init.normal_(b.ffn.w_down.weight, std=0.02 / math.sqrt(2 * cfg.n_layers))

    @staticmethod
    def _init(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)

    def forward(self, idx):
        B, T = idx.shape
        dtype = self.tok_embd.weight.dtype
        cos, sin = rope_tables(self.cfg.head_dim, T, self.cfg.rope_base, dtype)
        mask = torch.ones(T, T, dtype=torch.bool).triu(1)
        x = self.tok_embd(idx)
        for b in self.blocks:
            x = b(x, cos, sin, mask)
        x = self.out_norm(x)
        w = self.tok_embd.weight if self.output is None else self.output.weight
        return x @ w.t()

    def n_params(self):
        return sum(p.numel() for p in self.parameters())


def gguf_tensors(model):
    """(llama.cpp tensor name, torch tensor) in GGUF order."""
    out = [("token_embd.weight", model.tok_embd.weight)]
    for i, b in enumerate(model.blocks):
        p = f"blk.{i}."
        out += [
            (p + "attn_norm.weight", b.attn_norm.weight),
            (p + "attn_q.weight", b.attn.wq.weight),
            (p + "attn_k.weight", b.attn.wk.weight),
            (p + "attn_v.weight", b.attn.wv.weight),
            (p + "attn_output.weight", b.attn.wo.weight),
            (p + "ffn_norm.weight", b.ffn_norm.weight),
            (p + "ffn_gate.weight", b.ffn.w_gate.weight),
            (p + "ffn_up.weight", b.ffn.w_up.weight),
            (p + "ffn_down.weight", b.ffn.w_down.weight),
        ]
    out.append(("output_norm.weight", model.out_norm.weight))
    if model.output is not None:
        out.append(("output.weight", model.output.weight))
    return out


def round_to_f16_(model):
    """Round every matrix (not the norm vectors) to float16 in place.

    The shipped reference model is this rounded one, so the F16 GGUF file
    holds its weights exactly and F32 fixtures match the F16 file.
    """
    with torch.no_grad():
        for name, t in gguf_tensors(model):
            if t.dim() == 2:
                t.copy_(t.half().to(t.dtype))
