// CPU kernels: the element-wise and row operations of the Llama forward pass,
// and the float dot products that matmuls are built from.
//
// Where it matters there are two versions: a plain scalar one (the *_ref
// functions, used by the reference forward pass) and a fast one that runs
// the SIMD kernels of the level cpu_simd() chose at run time (scalar, AVX2 or
// AVX-512: kernels_simd.h). The tests check every level's kernels against
// the *_ref twins.
#pragma once
#include <cstddef>
#include <cstdint>

namespace sixstep::llm::kernels {

// ---- half precision -----------------------------------------------------------
// (scalar conversions: fp16_to_fp32 / fp32_to_fp16 in ggml_type.h)
void fp16_to_fp32_row(const std::uint16_t* x, float* y, int n);

// ---- dot products ---------------------------------------------------------------
float dot_f32_ref(const float* a, const float* b, int n);
float dot_f32(const float* a, const float* b, int n);
float dot_f16_ref(const std::uint16_t* w, const float* x, int n);
float dot_f16(const std::uint16_t* w, const float* x, int n);

// ---- row operations ---------------------------------------------------------------
// y = x / sqrt(mean(x²) + eps) * w   (RMSNorm; y may alias x)
void rmsnorm_ref(float* y, const float* x, const float* w, int n, float eps);
void rmsnorm(float* y, const float* x, const float* w, int n, float eps);
// x = softmax(x) in place; stable (subtracts the max).
void softmax_inplace_ref(float* x, int n);
void softmax_inplace(float* x, int n);
// gate = silu(gate) * up   (SwiGLU: silu(x) = x * sigmoid(x))
void swiglu_ref(float* gate, const float* up, int n);
void swiglu(float* gate, const float* up, int n);
// y += a * x
void axpy(float* y, float a, const float* x, int n);
// y += x
void add(float* y, const float* x, int n);

// ---- attention over a block of cached positions -------------------------------
// For the n_qh query heads q[h·hd ..] that share one KV head (GQA), and n_pos
// cached rows k[p·k_stride ..] of that head:
//   out[h·out_stride + p] = scale · Σ_d q[h·hd + d] · k[p·k_stride + d]
void attn_scores(const float* q, int n_qh, int hd, const float* k, std::size_t k_stride, int n_pos, float scale,
                 float* out, std::size_t out_stride);
// The weighted sum of the values, added to out:
//   out[h·hd + d] += Σ_p a[h·a_stride + p] · v[p·v_stride + d]
void attn_values(const float* a, std::size_t a_stride, int n_qh, const float* v, std::size_t v_stride, int n_pos, int hd,
                 float* out);

// RoPE, llama.cpp's "normal" mode for arch llama: within each head of
// head_dim floats, rotate the adjacent pairs (x[2i], x[2i+1]) by the angle
// pos * base^(-2i / n_rot) for 2i < n_rot; dimensions past n_rot are left as
// they are. x holds n_heads heads back to back.
void rope(float* x, int n_heads, int head_dim, int n_rot, int pos, float freq_base);
// The same in two halves, for a pass that rotates q and k of many tokens:
// the angles of one position once, cs = (cos θ, sin θ) per pair (n_rot
// floats), then the rotation of any number of heads by them.
void rope_angles(int pos, int n_rot, float freq_base, float* cs);
void rope_rotate(float* x, int n_heads, int head_dim, int n_rot, const float* cs);

}  // namespace sixstep::llm::kernels
