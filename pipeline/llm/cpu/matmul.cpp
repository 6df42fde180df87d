// Matmul kernels (see matmul.h for the plan). Sections:
//   [SIMD]        a tiny vector abstraction: AVX-512, AVX2 or scalar
//   [F32/F16]     R×C tiles of float dot products
//   [Q8_0/Q4_0]   R×C tiles of int8 dot products, activations pre-quantized
//   [DISPATCH]    row ranges per thread, token blocking
//   [REFERENCE]   the oracle
#include "pipeline/llm/cpu/matmul.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/llm/cpu/thread_pool.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
// GCC 12 warns "__Y is (or may be) used uninitialized" inside avx512fintrin.h
// (_mm512_reduce_add_ps, _mm512_cvtph_ps use _mm256_undefined_*): a false
// positive in the compiler's own header, silenced for this file only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>
#define SIXSTEP_AVX2 1
#endif
#if defined(SIXSTEP_AVX2) && defined(__AVX512F__)
#define SIXSTEP_AVX512 1
#endif
#if defined(SIXSTEP_AVX512) && defined(__AVX512BW__) && defined(__AVX512VNNI__) && defined(__AVX512DQ__)
#define SIXSTEP_Q8_ZMM 1
#endif

namespace sixstep::llm {

namespace {

// ---- [SIMD] ----------------------------------------------------------------------
#if defined(SIXSTEP_AVX512)
using V = __m512;
constexpr int VL = 16;
inline V vzero() { return _mm512_setzero_ps(); }
inline V vload(const float* p) { return _mm512_loadu_ps(p); }
inline V vload(const std::uint16_t* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
inline V vfma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
inline float vsum(V v) { return _mm512_reduce_add_ps(v); }
constexpr int TILE_R = 6, TILE_C = 4;  // 24 accumulators of 32 zmm registers
constexpr int QTILE_C = 4;             // int8 tiles need more registers per accumulator
#elif defined(SIXSTEP_AVX2)
using V = __m256;
constexpr int VL = 8;
inline V vzero() { return _mm256_setzero_ps(); }
inline V vload(const float* p) { return _mm256_loadu_ps(p); }
inline V vload(const std::uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
inline V vfma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
inline float vsum(V v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
constexpr int TILE_R = 4, TILE_C = 2;  // 8 accumulators of 16 ymm registers
constexpr int QTILE_C = 2;
#else
using V = float;
constexpr int VL = 1;
inline V vzero() { return 0.0f; }
inline V vload(const float* p) { return *p; }
inline V vload(const std::uint16_t* p) { return fp16_to_fp32(*p); }
inline V vfma(V a, V b, V c) { return a * b + c; }
inline float vsum(V v) { return v; }
constexpr int TILE_R = 4, TILE_C = 2;
constexpr int QTILE_C = 2;
#endif

// fp16 → fp32 for block scales: one instruction with F16C, else the portable one.
inline float half_to_float(std::uint16_t h) {
#if defined(SIXSTEP_AVX2)
    return _cvtsh_ss(h);
#else
    return fp16_to_fp32(h);
#endif
}
#if defined(SIXSTEP_AVX2)
// Eight horizontal sums at once: result[k] = Σ of the 8 floats of v[k].
inline __m256 hsum8x8(const __m256* v) {
    const __m256 t0 = _mm256_hadd_ps(_mm256_hadd_ps(v[0], v[1]), _mm256_hadd_ps(v[2], v[3]));
    const __m256 t1 = _mm256_hadd_ps(_mm256_hadd_ps(v[4], v[5]), _mm256_hadd_ps(v[6], v[7]));
    // t0 = [v0..v3 low-lane sums | v0..v3 high-lane sums], t1 the same for v4..v7.
    return _mm256_add_ps(_mm256_permute2f128_ps(t0, t1, 0x20), _mm256_permute2f128_ps(t0, t1, 0x31));
}
#endif
inline float to_f32(float v) { return v; }
inline float to_f32(std::uint16_t v) { return half_to_float(v); }

// Rows of a quantized tile sit a few hundred bytes apart inside the same
// pages, a pattern the hardware prefetcher follows poorly: each row is
// prefetched explicitly at the same column of the next tile (one tile ahead),
// which keeps the memory bus busy while the current blocks are multiplied.

// ---- [F32/F16] ---------------------------------------------------------------------
// out[r][c] = dot(w[r], x[c]) over n floats, for an R×C tile.
// prefetch: elements ahead to prefetch each weight row (0: none).
template <int R, int C, typename WT>
inline void tile_float(const WT* const* w, const float* const* x, int n, float (&out)[R][C], std::size_t prefetch = 0) {
    V acc[R][C];
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) acc[r][c] = vzero();
    int i = 0;
    for (; i + VL <= n; i += VL) {
        V xv[C];
        for (int c = 0; c < C; ++c) xv[c] = vload(x[c] + i);
        for (int r = 0; r < R; ++r) {
#if defined(SIXSTEP_AVX2)
            if (prefetch) _mm_prefetch(reinterpret_cast<const char*>(w[r] + i + prefetch), _MM_HINT_T0);
#endif
            const V wv = vload(w[r] + i);
            for (int c = 0; c < C; ++c) acc[r][c] = vfma(wv, xv[c], acc[r][c]);
        }
    }
#if defined(SIXSTEP_AVX512)
    if constexpr ((R * C) % 8 == 0) {
        // Horizontal sums eight at a time (see hsum8x8) instead of one by one:
        // for short rows the reductions would otherwise cost a third of the tile.
        float flat[R * C];
        for (int g = 0; g < R * C; g += 8) {
            __m256 h[8];
            for (int k = 0; k < 8; ++k) {
                const V a = acc[(g + k) / C][(g + k) % C];
                h[k] = _mm256_add_ps(_mm512_castps512_ps256(a), _mm512_extractf32x8_ps(a, 1));
            }
            _mm256_storeu_ps(flat + g, hsum8x8(h));
        }
        for (int r = 0; r < R; ++r)
            for (int c = 0; c < C; ++c) {
                float s = flat[r * C + c];
                for (int j = i; j < n; ++j) s += to_f32(w[r][j]) * x[c][j];
                out[r][c] = s;
            }
        return;
    }
#endif
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) {
            float s = vsum(acc[r][c]);
            for (int j = i; j < n; ++j) s += to_f32(w[r][j]) * x[c][j];
            out[r][c] = s;
        }
}

// ---- [Q8_0/Q4_0] -------------------------------------------------------------------
// A weight block as 32 signed bytes in a register, and its scale.
#if defined(SIXSTEP_AVX2)
inline __m256i load_q(const block_q8_0& b) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs)); }
inline __m256i load_q(const block_q4_0& b) {
    // Low nibbles are values 0..15, high nibbles 16..31; stored as value + 8.
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs));
    const __m128i mask = _mm_set1_epi8(0x0f);
    const __m128i lo = _mm_and_si128(packed, mask);
    const __m128i hi = _mm_and_si128(_mm_srli_epi16(packed, 4), mask);
    return _mm256_sub_epi8(_mm256_set_m128i(hi, lo), _mm256_set1_epi8(8));
}
// Σ of 4 adjacent products u8 × s8 into each int32 lane.
inline __m256i dot_u8s8(__m256i u, __m256i s) {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
    return _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s);
#elif defined(__AVXVNNI__)
    return _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), u, s);
#else
    // maddubs: pairs into int16 (|127·127·2| fits), then pairs into int32.
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
#endif
}
inline float hsum8(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
#endif

inline int q_value(const block_q8_0& b, int j) { return b.qs[j]; }
inline int q_value(const block_q4_0& b, int j) {
    return j < 16 ? (b.qs[j] & 0x0f) - 8 : (b.qs[j - 16] >> 4) - 8;
}

// prefetch: bytes ahead to prefetch each weight row (0: none).
template <int R, int C, typename BT>
inline void tile_quant(const BT* const* w, const std::int8_t* const* xq, const float* const* xd, int n_blocks,
                       float (&out)[R][C], std::size_t prefetch = 0) {
#if defined(SIXSTEP_AVX2)
    __m256 acc[R][C];
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
    int b = 0;
#if defined(SIXSTEP_Q8_ZMM)
    // Two blocks per 512-bit register: half the instructions per product.
    // AVX-512 has no vpsignb: x takes w's sign through a mask from w's sign bits.
    if (C > 1) {
        __m512 acc2[R][C];
        for (int r = 0; r < R; ++r)
            for (int c = 0; c < C; ++c) acc2[r][c] = _mm512_setzero_ps();
        const __m512i zero = _mm512_setzero_si512();
        for (; b + 2 <= n_blocks; b += 2) {
            __m512i wabs[R];
            __mmask64 wneg[R];
            __m512 dw[R];
            for (int r = 0; r < R; ++r) {
                const __m512i wq = _mm512_inserti64x4(_mm512_castsi256_si512(load_q(w[r][b])), load_q(w[r][b + 1]), 1);
                wabs[r] = _mm512_abs_epi8(wq);
                wneg[r] = _mm512_movepi8_mask(wq);
                dw[r] = _mm512_insertf32x8(_mm512_set1_ps(half_to_float(w[r][b].d)),
                                           _mm256_set1_ps(half_to_float(w[r][b + 1].d)), 1);
            }
            for (int c = 0; c < C; ++c) {
                const __m512i xv = _mm512_loadu_si512(xq[c] + b * QK8_0);
                const __m512 dx = _mm512_insertf32x8(_mm512_set1_ps(xd[c][b]), _mm256_set1_ps(xd[c][b + 1]), 1);
                for (int r = 0; r < R; ++r) {
                    const __m512i sx = _mm512_mask_sub_epi8(xv, wneg[r], zero, xv);
                    const __m512i p = _mm512_dpbusd_epi32(zero, wabs[r], sx);
                    acc2[r][c] = _mm512_fmadd_ps(_mm512_mul_ps(dw[r], dx), _mm512_cvtepi32_ps(p), acc2[r][c]);
                }
            }
        }
        for (int r = 0; r < R; ++r)
            for (int c = 0; c < C; ++c)
                acc[r][c] = _mm256_add_ps(_mm512_castps512_ps256(acc2[r][c]), _mm512_extractf32x8_ps(acc2[r][c], 1));
    }
#endif
    for (; b < n_blocks; ++b) {
        // int8 × int8 with an unsigned × signed instruction: |w| × (x with w's sign).
        __m256i wq[R], wabs[R];
        float dw[R];
        for (int r = 0; r < R; ++r) {
            if (prefetch && b % 2 == 0) _mm_prefetch(reinterpret_cast<const char*>(&w[r][b]) + prefetch, _MM_HINT_T0);
            wq[r] = load_q(w[r][b]);
            wabs[r] = _mm256_sign_epi8(wq[r], wq[r]);
            dw[r] = half_to_float(w[r][b].d);
        }
        for (int c = 0; c < C; ++c) {
            const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq[c] + b * QK8_0));
            const float dx = xd[c][b];
            for (int r = 0; r < R; ++r) {
                const __m256i p = dot_u8s8(wabs[r], _mm256_sign_epi8(xv, wq[r]));
                acc[r][c] = _mm256_fmadd_ps(_mm256_set1_ps(dw[r] * dx), _mm256_cvtepi32_ps(p), acc[r][c]);
            }
        }
    }
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) out[r][c] = hsum8(acc[r][c]);
#else
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) {
            float s = 0;
            for (int b = 0; b < n_blocks; ++b) {
                int sum = 0;
                for (int j = 0; j < QK8_0; ++j) sum += q_value(w[r][b], j) * xq[c][b * QK8_0 + j];
                s += half_to_float(w[r][b].d) * xd[c][b] * static_cast<float>(sum);
            }
            out[r][c] = s;
        }
#endif
}

// ---- [DISPATCH] ---------------------------------------------------------------------
// Tokens are processed in blocks so that their activations stay in L2 while
// the slice of W streams past.
constexpr int TOKEN_BLOCK = 16 * TILE_C;

// One R×C tile of outputs at rows r.., tokens t.., stored into y.
template <int R, int C, typename K>
inline void run_tile(const K& k, int r, int t, float* y, int n_rows) {
    float out[R][C];
    k.template tile<R, C>(r, t, out);
    for (int c = 0; c < C; ++c)
        for (int i = 0; i < R; ++i) y[static_cast<std::size_t>(t + c) * n_rows + r + i] = out[i][c];
}
// The last c < TILE_C tokens of a block, still as one tile (not c passes over W).
template <int R, typename K>
inline void run_tail(const K& k, int r, int t, int c, float* y, int n_rows) {
    switch (c) {
        case 1: run_tile<R, 1>(k, r, t, y, n_rows); break;
        case 2: run_tile<R, 2>(k, r, t, y, n_rows); break;
        case 3: run_tile<R, 3>(k, r, t, y, n_rows); break;
        case 4: run_tile<R, 4>(k, r, t, y, n_rows); break;
        case 5: run_tile<R, 5>(k, r, t, y, n_rows); break;
        default: break;
    }
}

// Walks rows [r0, r1) × all tokens in tiles: token blocks outermost (their
// activations stay in L2), then TILE_R rows (their weights stay in L1 while
// every token tile of the block passes), then TILE_C tokens.
template <int TR, int TC, typename K>
void drive(const K& k, int n_tokens, float* y, int n_rows, int r0, int r1) {
    static_assert(TC <= 6, "run_tail handles tails of up to 5 tokens");
    for (int t0 = 0; t0 < n_tokens; t0 += TOKEN_BLOCK) {
        const int t1 = std::min(n_tokens, t0 + TOKEN_BLOCK);
        int r = r0;
        for (; r + TR <= r1; r += TR) {
            int t = t0;
            for (; t + TC <= t1; t += TC) run_tile<TR, TC>(k, r, t, y, n_rows);
            if (t < t1) run_tail<TR>(k, r, t, t1 - t, y, n_rows);
        }
        for (; r < r1; ++r) {
            int t = t0;
            for (; t + TC <= t1; t += TC) run_tile<1, TC>(k, r, t, y, n_rows);
            if (t < t1) run_tail<1>(k, r, t, t1 - t, y, n_rows);
        }
    }
}

template <typename WT>
struct FloatKernel {
    const WeightMatrix& w;
    const float* x;
    template <int R, int C>
    void tile(int r, int t, float (&out)[R][C]) const {
        const int n = w.n_cols;
        const WT* wr[R];
        const float* xr[C];
        for (int i = 0; i < R; ++i) wr[i] = reinterpret_cast<const WT*>(w.row(r + i));
        for (int c = 0; c < C; ++c) xr[c] = x + static_cast<std::size_t>(t + c) * n;
        // Decode (one token) streams W from memory: prefetch one tile ahead
        // (measured on 110M F32: one tile 64 tok/s, none 62, four 56).
        tile_float<R, C>(wr, xr, n, out, C == 1 ? R * static_cast<std::size_t>(n) : 0);
    }
};

template <typename BT>
struct QuantKernel {
    const WeightMatrix& w;
    const QuantizedActivations& xa;
    template <int R, int C>
    void tile(int r, int t, float (&out)[R][C]) const {
        const BT* wr[R];
        const std::int8_t* q[C];
        const float* d[C];
        for (int i = 0; i < R; ++i) wr[i] = reinterpret_cast<const BT*>(w.row(r + i));
        for (int c = 0; c < C; ++c) {
            q[c] = xa.qs.data() + static_cast<std::size_t>(t + c) * xa.n_cols;
            d[c] = xa.d.data() + static_cast<std::size_t>(t + c) * xa.n_blocks;
        }
        tile_quant<R, C>(wr, q, d, xa.n_blocks, out, C == 1 ? 2 * R * w.row_bytes : 0);
    }
};

// Computes rows [r0, r1) of y for all tokens.
template <typename WT>
void rows_float(const WeightMatrix& w, const float* x, int n_tokens, float* y, int r0, int r1) {
    drive<TILE_R, TILE_C>(FloatKernel<WT>{w, x}, n_tokens, y, w.n_rows, r0, r1);
}
template <typename BT>
void rows_quant(const WeightMatrix& w, const QuantizedActivations& xa, int n_tokens, float* y, int r0, int r1) {
    drive<TILE_R, QTILE_C>(QuantKernel<BT>{w, xa}, n_tokens, y, w.n_rows, r0, r1);
}

void quantize_rows(const float* x, int cols, std::int8_t* qs, float* d, int r0, int r1) {
    const int nb = cols / static_cast<int>(QK8_0);
    for (int r = r0; r < r1; ++r) {
        for (int b = 0; b < nb; ++b) {
            const float* v = x + static_cast<std::size_t>(r) * cols + b * QK8_0;
            float amax = 0;
            for (int j = 0; j < QK8_0; ++j) amax = std::max(amax, std::fabs(v[j]));
            const float scale = amax / 127.0f;
            const float inv = scale != 0 ? 1.0f / scale : 0.0f;
            std::int8_t* q = qs + static_cast<std::size_t>(r) * cols + b * QK8_0;
            for (int j = 0; j < QK8_0; ++j) q[j] = static_cast<std::int8_t>(std::nearbyint(v[j] * inv));
            d[static_cast<std::size_t>(r) * nb + b] = scale;
        }
    }
}

}  // namespace

void QuantizedActivations::quantize(const float* x, int rows, int cols) {
    if (cols % QK8_0 != 0) throw Error(fmt::format("quantize activations: {} columns is not a multiple of 32", cols));
    n_rows = rows;
    n_cols = cols;
    n_blocks = cols / static_cast<int>(QK8_0);
    qs.resize(static_cast<std::size_t>(rows) * cols);
    d.resize(static_cast<std::size_t>(rows) * n_blocks);
    quantize_rows(x, cols, qs.data(), d.data(), 0, rows);
}

void matmul(const WeightMatrix& w, const float* x, int n_tokens, float* y, ThreadPool* pool, MatmulScratch& scratch) {
    const WeightMatrix* ws[1] = {&w};
    float* ys[1] = {y};
    matmul_many(ws, ys, 1, x, n_tokens, pool, scratch);
}

void matmul_many(const WeightMatrix* const* ws, float* const* ys, int n_mats, const float* x, int n_tokens,
                 ThreadPool* pool, MatmulScratch& scratch) {
    if (n_tokens <= 0 || n_mats <= 0) return;
    const auto padded = [](int rows) { return (rows + TILE_R - 1) / TILE_R * TILE_R; };
    const int n_cols = ws[0]->n_cols;
    bool quantized = false;
    int total_rows = 0;
    for (int m = 0; m < n_mats; ++m) {
        const WeightMatrix& w = *ws[m];
        if (w.n_cols != n_cols) throw Error("matmul: matrices sharing an input must have the same width");
        const bool q = w.type == GGMLType::Q8_0 || w.type == GGMLType::Q4_0;
        if (!q && w.type != GGMLType::F32 && w.type != GGMLType::F16)
            throw Error(fmt::format("matmul: weight type {} is not supported", ggml_type_name(w.type)));
        if (q && n_cols % QK8_0 != 0) throw Error(fmt::format("matmul: {} columns is not a multiple of 32", n_cols));
        quantized = quantized || q;
        total_rows += padded(w.n_rows);
    }
    if (quantized) {
        // The activations are quantized once, shared by every matrix.
        auto& xa = scratch.q8;
        xa.n_rows = n_tokens;
        xa.n_cols = n_cols;
        xa.n_blocks = n_cols / static_cast<int>(QK8_0);
        xa.qs.resize(static_cast<std::size_t>(n_tokens) * n_cols);
        xa.d.resize(static_cast<std::size_t>(n_tokens) * xa.n_blocks);
        const auto quant = [&](int r0, int r1, int) { quantize_rows(x, n_cols, xa.qs.data(), xa.d.data(), r0, r1); };
        if (pool && n_tokens > 1)
            pool->parallel_for(n_tokens, quant);
        else
            quant(0, n_tokens, 0);
    }
    // The rows of all matrices form one range split across the threads, so
    // several small matmuls cost one synchronization instead of several.
    // Each matrix starts at a multiple of TILE_R in that range, so its rows
    // are tiled exactly as by a matmul of its own: the same sums in the same
    // order, bit for bit, whatever the number of threads.
    const auto work = [&](int g0, int g1, int) {
        int base = 0;
        for (int m = 0; m < n_mats && base < g1; ++m) {
            const WeightMatrix& w = *ws[m];
            const int r0 = std::max(g0, base) - base, r1 = std::min(g1, base + w.n_rows) - base;
            base += padded(w.n_rows);
            if (r0 >= r1) continue;
            switch (w.type) {
                case GGMLType::F32: rows_float<float>(w, x, n_tokens, ys[m], r0, r1); break;
                case GGMLType::F16: rows_float<std::uint16_t>(w, x, n_tokens, ys[m], r0, r1); break;
                case GGMLType::Q8_0: rows_quant<block_q8_0>(w, scratch.q8, n_tokens, ys[m], r0, r1); break;
                case GGMLType::Q4_0: rows_quant<block_q4_0>(w, scratch.q8, n_tokens, ys[m], r0, r1); break;
                default: break;
            }
        }
    };
    if (pool)
        pool->parallel_for(total_rows, work, TILE_R);
    else
        work(0, total_rows, 0);
}

// ---- [REFERENCE] --------------------------------------------------------------------
void matmul_ref(const WeightMatrix& w, const float* x, int n_tokens, float* y) {
    std::vector<float> row(static_cast<std::size_t>(w.n_cols));
    for (int o = 0; o < w.n_rows; ++o) {
        dequantize_row(w.type, w.row(o), row.data(), w.n_cols);
        for (int t = 0; t < n_tokens; ++t) {
            const float* xt = x + static_cast<std::size_t>(t) * w.n_cols;
            double s = 0;
            for (int i = 0; i < w.n_cols; ++i) s += static_cast<double>(row[i]) * xt[i];
            y[static_cast<std::size_t>(t) * w.n_rows + o] = static_cast<float>(s);
        }
    }
}

float dot_q8_0(const block_q8_0* w, const std::int8_t* xq, const float* xd, int n_blocks) {
    const block_q8_0* wr[1] = {w};
    const std::int8_t* q[1] = {xq};
    const float* d[1] = {xd};
    float out[1][1];
    tile_quant<1, 1>(wr, q, d, n_blocks, out);
    return out[0][0];
}

float dot_q4_0(const block_q4_0* w, const std::int8_t* xq, const float* xd, int n_blocks) {
    const block_q4_0* wr[1] = {w};
    const std::int8_t* q[1] = {xq};
    const float* d[1] = {xd};
    float out[1][1];
    tile_quant<1, 1>(wr, q, d, n_blocks, out);
    return out[0][0];
}

}  // namespace sixstep::llm
