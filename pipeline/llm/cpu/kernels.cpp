#include "pipeline/llm/cpu/kernels.h"

#include <cmath>
#include <vector>

#include "pipeline/llm/cpu/kernels_simd.h"
#include "pipeline/llm/gguf/ggml_type.h"

namespace sixstep::llm::kernels {

// ---- half precision -----------------------------------------------------------

void fp16_to_fp32_row(const std::uint16_t* x, float* y, int n) { simd_kernels().fp16_to_fp32_row(x, y, n); }

// ---- dot products ---------------------------------------------------------------

float dot_f32_ref(const float* a, const float* b, int n) {
    float s = 0;
    for (int i = 0; i < n; ++i) s += a[i] * b[i];
    return s;
}

float dot_f16_ref(const std::uint16_t* w, const float* x, int n) {
    float s = 0;
    for (int i = 0; i < n; ++i) s += llm::fp16_to_fp32(w[i]) * x[i];
    return s;
}

float dot_f32(const float* a, const float* b, int n) { return simd_kernels().dot_f32(a, b, n); }
float dot_f16(const std::uint16_t* w, const float* x, int n) { return simd_kernels().dot_f16(w, x, n); }

// ---- row operations ---------------------------------------------------------------

void rmsnorm_ref(float* y, const float* x, const float* w, int n, float eps) {
    double ss = 0;  // double: the mean of squares of a few thousand floats, cheaply exact enough
    for (int i = 0; i < n; ++i) ss += static_cast<double>(x[i]) * x[i];
    const float scale = static_cast<float>(1.0 / std::sqrt(ss / n + eps));
    for (int i = 0; i < n; ++i) y[i] = x[i] * scale * w[i];
}

void softmax_inplace_ref(float* x, int n) {
    if (n <= 0) return;
    float m = x[0];
    for (int i = 1; i < n; ++i) m = x[i] > m ? x[i] : m;
    double sum = 0;
    for (int i = 0; i < n; ++i) {
        x[i] = std::exp(x[i] - m);
        sum += x[i];
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (int i = 0; i < n; ++i) x[i] *= inv;
}

void swiglu_ref(float* gate, const float* up, int n) {
    for (int i = 0; i < n; ++i) {
        const float g = gate[i];
        gate[i] = g / (1.0f + std::exp(-g)) * up[i];
    }
}

void rmsnorm(float* y, const float* x, const float* w, int n, float eps) { simd_kernels().rmsnorm(y, x, w, n, eps); }
void softmax_inplace(float* x, int n) { simd_kernels().softmax(x, n); }
void swiglu(float* gate, const float* up, int n) { simd_kernels().swiglu(gate, up, n); }
void axpy(float* y, float a, const float* x, int n) { simd_kernels().axpy(y, a, x, n); }

void attn_scores(const float* q, int n_qh, int hd, const float* k, std::size_t k_stride, int n_pos, float scale,
                 float* out, std::size_t out_stride) {
    simd_kernels().attn_scores(q, n_qh, hd, k, k_stride, n_pos, scale, out, out_stride);
}
void attn_values(const float* a, std::size_t a_stride, int n_qh, const float* v, std::size_t v_stride, int n_pos, int hd,
                 float* out) {
    simd_kernels().attn_values(a, a_stride, n_qh, v, v_stride, n_pos, hd, out);
}

void add(float* y, const float* x, int n) {
    for (int i = 0; i < n; ++i) y[i] += x[i];
}

void rope_angles(int pos, int n_rot, float freq_base, float* cs) {
    for (int i = 0; i < n_rot; i += 2) {
        // theta_i = pos * base^(-i / n_rot), i = 2·(pair index); computed in
        // double so that long positions keep their precision.
        const double theta = pos * std::pow(static_cast<double>(freq_base), -static_cast<double>(i) / n_rot);
        cs[i] = static_cast<float>(std::cos(theta));
        cs[i + 1] = static_cast<float>(std::sin(theta));
    }
}

void rope_rotate(float* x, int n_heads, int head_dim, int n_rot, const float* cs) {
    for (int h = 0; h < n_heads; ++h) {
        float* v = x + static_cast<std::ptrdiff_t>(h) * head_dim;
        for (int i = 0; i < n_rot; i += 2) {
            const float c = cs[i], s = cs[i + 1];
            const float x0 = v[i], x1 = v[i + 1];
            v[i] = x0 * c - x1 * s;
            v[i + 1] = x0 * s + x1 * c;
        }
    }
}

void rope(float* x, int n_heads, int head_dim, int n_rot, int pos, float freq_base) {
    std::vector<float> cs(static_cast<std::size_t>(n_rot));
    rope_angles(pos, n_rot, freq_base, cs.data());
    rope_rotate(x, n_heads, head_dim, n_rot, cs.data());
}

}  // namespace sixstep::llm::kernels
