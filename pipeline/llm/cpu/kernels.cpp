#include "pipeline/llm/cpu/kernels.h"

#include "pipeline/llm/gguf/ggml_type.h"

#include <cmath>
#include <cstring>

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>
#define SIXSTEP_AVX2 1
#endif

namespace sixstep::llm::kernels {

// ---- half precision -----------------------------------------------------------

void fp16_to_fp32_row(const std::uint16_t* x, float* y, int n) {
    int i = 0;
#ifdef SIXSTEP_AVX2
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))));
#endif
    for (; i < n; ++i) y[i] = llm::fp16_to_fp32(x[i]);
}

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

#ifdef SIXSTEP_AVX2
namespace {
inline float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
}  // namespace
#endif

float dot_f32(const float* a, const float* b, int n) {
#ifdef SIXSTEP_AVX2
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
    int i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
        s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), s2);
        s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), s3);
    }
    for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    float s = hsum(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
    for (; i < n; ++i) s += a[i] * b[i];
    return s;
#else
    return dot_f32_ref(a, b, n);
#endif
}

float dot_f16(const std::uint16_t* w, const float* x, int n) {
#ifdef SIXSTEP_AVX2
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 w0 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + i)));
        const __m256 w1 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + i + 8)));
        s0 = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x + i), s0);
        s1 = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x + i + 8), s1);
    }
    float s = hsum(_mm256_add_ps(s0, s1));
    for (; i < n; ++i) s += llm::fp16_to_fp32(w[i]) * x[i];
    return s;
#else
    return dot_f16_ref(w, x, n);
#endif
}

// ---- row operations ---------------------------------------------------------------

void rmsnorm(float* y, const float* x, const float* w, int n, float eps) {
    double ss = 0;  // double: the mean of squares of a few thousand floats, cheaply exact enough
    for (int i = 0; i < n; ++i) ss += static_cast<double>(x[i]) * x[i];
    const float scale = static_cast<float>(1.0 / std::sqrt(ss / n + eps));
    for (int i = 0; i < n; ++i) y[i] = x[i] * scale * w[i];
}

void softmax_inplace(float* x, int n) {
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

void swiglu(float* gate, const float* up, int n) {
    for (int i = 0; i < n; ++i) {
        const float g = gate[i];
        gate[i] = g / (1.0f + std::exp(-g)) * up[i];
    }
}

void axpy(float* y, float a, const float* x, int n) {
    for (int i = 0; i < n; ++i) y[i] += a * x[i];
}

void add(float* y, const float* x, int n) {
    for (int i = 0; i < n; ++i) y[i] += x[i];
}

void rope(float* x, int n_heads, int head_dim, int n_rot, int pos, float freq_base) {
    for (int i = 0; i < n_rot; i += 2) {
        // theta_i = pos * base^(-i / n_rot), i = 2·(pair index); computed in
        // double so that long positions keep their precision.
        const double theta = pos * std::pow(static_cast<double>(freq_base), -static_cast<double>(i) / n_rot);
        const float c = static_cast<float>(std::cos(theta));
        const float s = static_cast<float>(std::sin(theta));
        for (int h = 0; h < n_heads; ++h) {
            float* v = x + static_cast<std::ptrdiff_t>(h) * head_dim + i;
            const float x0 = v[0], x1 = v[1];
            v[0] = x0 * c - x1 * s;
            v[1] = x0 * s + x1 * c;
        }
    }
}

}  // namespace sixstep::llm::kernels
