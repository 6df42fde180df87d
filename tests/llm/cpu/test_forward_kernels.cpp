// Every SIMD level's kernels against the scalar oracles, with odd sizes to hit
// the tails; the runtime choice of level. (The thread pool: test_thread_pool.cpp.)
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "pipeline/core/error.h"
#include "pipeline/llm/cpu/cpu_simd.h"
#include "pipeline/llm/cpu/kernels.h"
#include "pipeline/llm/cpu/kernels_simd.h"
#include "pipeline/llm/cpu/matmul.h"
#include "pipeline/llm/cpu/thread_pool.h"
#include "pipeline/llm/gguf/interleaved_rows.h"

using namespace sixstep::llm;

namespace {
std::vector<float> randn(std::size_t n, unsigned seed, float sigma = 1.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, sigma);
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
}

float maxdiff(const std::vector<float>& a, const std::vector<float>& b) {
    float m = 0;
    for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
    return m;
}

// Every level this machine runs, named in the test output.
std::vector<CpuSimd> levels() {
    const auto v = cpu_simd_levels();
    std::string names;
    for (CpuSimd l : v) names += std::string(names.empty() ? "" : ", ") + cpu_simd_name(l);
    MESSAGE("CPU levels tested: " << names);
    return v;
}

WeightMatrix weights(GGMLType type, const std::vector<std::uint8_t>& bytes, int n_rows, int n_cols) {
    return WeightMatrix{type, bytes.data(), n_rows, n_cols, ggml_row_size(type, n_cols)};
}
}  // namespace

TEST_CASE("cpu levels: scalar always, AVX2 and AVX-512 where the CPU has them, and forcing one works or says why") {
    const auto v = cpu_simd_levels();
    REQUIRE(!v.empty());
    CHECK(v.front() == CpuSimd::scalar);
    for (CpuSimd l : {CpuSimd::scalar, CpuSimd::avx2, CpuSimd::avx512}) {
        CHECK(cpu_simd_from_name(cpu_simd_name(l)) == l);
        if (cpu_simd_supported(l)) {
            ScopedCpuSimd use(l);
            CHECK(cpu_simd() == l);
            CHECK(std::string(cpu_simd_name()) == cpu_simd_name(l));
            CHECK(simd_kernels().level == l);
        } else {
            CHECK_THROWS_AS(set_cpu_simd(l), sixstep::Error);
        }
    }
    CHECK(!cpu_simd_from_name("avx9").has_value());
    // The portable tests (tests/portable) run this suite on emulated CPUs and
    // say which best level each must show: the x86-64 baseline scalar, an
    // AVX2-only CPU avx2.
    if (const char* want = std::getenv("SIXSTEP_TEST_CPU_LEVEL")) {
        CHECK(std::string(cpu_simd_name(v.back())) == want);
        return;
    }
#if defined(__x86_64__)
    // Every x86-64 machine sixstep is built for in CI has AVX2: the AVX2 path
    // is tested explicitly, not only when it happens to be the best one.
    CHECK(cpu_simd_supported(CpuSimd::avx2));
#endif
}

TEST_CASE("kernels: dot products, axpy, fp16 rows, RMSNorm, softmax and SwiGLU match the scalar versions at every level") {
    for (CpuSimd level : levels()) {
        ScopedCpuSimd use(level);
        CAPTURE(std::string(cpu_simd_name(level)));
        for (int n : {1, 7, 8, 31, 64, 100, 768}) {
            CAPTURE(n);
            const auto a = randn(n, 1), b = randn(n, 2), w = randn(n, 3);
            std::vector<std::uint16_t> h(n);
            for (int i = 0; i < n; ++i) h[i] = fp32_to_fp16(a[i]);
            CHECK(kernels::dot_f32(a.data(), b.data(), n) ==
                  doctest::Approx(kernels::dot_f32_ref(a.data(), b.data(), n)).epsilon(1e-4));
            CHECK(kernels::dot_f16(h.data(), b.data(), n) ==
                  doctest::Approx(kernels::dot_f16_ref(h.data(), b.data(), n)).epsilon(1e-4));

            std::vector<float> y1 = b, y2 = b;
            kernels::axpy(y1.data(), 0.37f, a.data(), n);
            for (int i = 0; i < n; ++i) y2[i] += 0.37f * a[i];
            CHECK(maxdiff(y1, y2) <= 1e-6f);

            std::vector<float> f(n);
            kernels::fp16_to_fp32_row(h.data(), f.data(), n);
            for (int i = 0; i < n; ++i) CHECK(f[i] == fp16_to_fp32(h[i]));

            std::vector<float> r1(n), r2(n);
            kernels::rmsnorm(r1.data(), a.data(), w.data(), n, 1e-5f);
            kernels::rmsnorm_ref(r2.data(), a.data(), w.data(), n, 1e-5f);
            CHECK(maxdiff(r1, r2) <= 1e-5f);

            // Scores over a wide range, as attention makes them: exp underflows
            // for some and the max must still be found in every tail.
            std::vector<float> s1 = randn(n, 4, 20.0f), s2 = s1;
            kernels::softmax_inplace(s1.data(), n);
            kernels::softmax_inplace_ref(s2.data(), n);
            CHECK(maxdiff(s1, s2) <= 1e-6f);

            std::vector<float> g1 = randn(n, 5, 8.0f), g2 = g1;
            kernels::swiglu(g1.data(), b.data(), n);
            kernels::swiglu_ref(g2.data(), b.data(), n);
            for (int i = 0; i < n; ++i) CHECK(g1[i] == doctest::Approx(g2[i]).epsilon(1e-5).scale(1e-6));
        }
    }
}

TEST_CASE("kernels: attention scores and weighted values over a block match double sums at every level") {
    // Strided rows as in the KV cache (a row holds every KV head), GQA groups
    // of 1–8 query heads, head sizes with and without vector tails, blocks of
    // one position up to more than one group of eight (head, position) pairs.
    for (CpuSimd level : levels()) {
        ScopedCpuSimd use(level);
        CAPTURE(std::string(cpu_simd_name(level)));
        for (int hd : {4, 8, 32, 36, 64, 128})
            for (int n_qh : {1, 2, 3, 4, 8})
                for (int n_pos : {1, 2, 5, 16, 17}) {
                    CAPTURE(hd);
                    CAPTURE(n_qh);
                    CAPTURE(n_pos);
                    const std::size_t stride = static_cast<std::size_t>(hd) * 2 + 3, out_stride = n_pos + 5;
                    const auto q = randn(static_cast<std::size_t>(n_qh) * hd, 11);
                    const auto k = randn(stride * n_pos, 12), v = randn(stride * n_pos, 13);
                    const float scale = 0.125f;
                    std::vector<float> s(n_qh * out_stride, -7.0f);
                    kernels::attn_scores(q.data(), n_qh, hd, k.data() + 1, stride, n_pos, scale, s.data(), out_stride);
                    for (int h = 0; h < n_qh; ++h) {
                        for (int p = 0; p < n_pos; ++p) {
                            double ref = 0, mag = 0;  // float sums err relative to Σ|terms|, not to the sum
                            for (int d = 0; d < hd; ++d) {
                                const double t = static_cast<double>(q[h * hd + d]) * k[p * stride + 1 + d];
                                ref += t;
                                mag += std::fabs(t);
                            }
                            CHECK(std::fabs(s[h * out_stride + p] - ref * scale) <= 1e-6 * mag * scale);
                        }
                        for (std::size_t p = n_pos; p < out_stride; ++p) CHECK(s[h * out_stride + p] == -7.0f);  // untouched
                    }
                    const auto a = randn(n_qh * out_stride, 14);
                    const auto base = randn(static_cast<std::size_t>(n_qh) * hd, 15);
                    std::vector<float> o = base;
                    kernels::attn_values(a.data(), out_stride, n_qh, v.data() + 2, stride, n_pos, hd, o.data());
                    for (int h = 0; h < n_qh; ++h)
                        for (int d = 0; d < hd; ++d) {
                            double ref = base[h * hd + d], mag = std::fabs(ref);
                            for (int p = 0; p < n_pos; ++p) {
                                const double t = static_cast<double>(a[h * out_stride + p]) * v[p * stride + 2 + d];
                                ref += t;
                                mag += std::fabs(t);
                            }
                            CHECK(std::fabs(o[h * hd + d] - ref) <= 1e-6 * mag);
                        }
                }
    }
}

TEST_CASE("kernels: activations quantize to the same Q8_0 bytes and block sums at every level") {
    const int n_cols = 96, rows = 5;
    auto x = randn(static_cast<std::size_t>(rows) * n_cols, 7, 3.0f);
    for (int i = 64; i < 96; ++i) x[i] = 0;  // an all-zero block: scale 0
    std::vector<std::int8_t> q_ref(x.size());
    std::vector<float> d_ref(static_cast<std::size_t>(rows) * n_cols / 32), s_ref(d_ref.size());
    simd_kernels_scalar().quantize_q8_0(x.data(), n_cols, q_ref.data(), d_ref.data(), s_ref.data(), 0, rows);
    // The sums are d · Σ qs of each block.
    for (std::size_t b = 0; b < s_ref.size(); ++b) {
        int sum = 0;
        for (int j = 0; j < 32; ++j) sum += q_ref[b * 32 + static_cast<std::size_t>(j)];
        CHECK(s_ref[b] == d_ref[b] * static_cast<float>(sum));
    }
    CHECK(s_ref[2] == 0.0f);
    for (CpuSimd level : levels()) {
        ScopedCpuSimd use(level);
        std::vector<std::int8_t> q(x.size());
        std::vector<float> d(d_ref.size()), s(d_ref.size());
        simd_kernels().quantize_q8_0(x.data(), n_cols, q.data(), d.data(), s.data(), 0, rows);
        CHECK_MESSAGE(q == q_ref, std::string(cpu_simd_name(level)));
        CHECK_MESSAGE(d == d_ref, std::string(cpu_simd_name(level)));
        CHECK_MESSAGE(s == s_ref, std::string(cpu_simd_name(level)));
    }
}

TEST_CASE("kernels: matmul of every type matches matmul_ref at every level, for decode, small batches and the GEMM") {
    ThreadPool pool(2);
    for (CpuSimd level : levels()) {
        ScopedCpuSimd use(level);
        for (GGMLType type : {GGMLType::F32, GGMLType::F16, GGMLType::Q8_0, GGMLType::Q4_0}) {
            // Token counts: decode and a small batch, then either side of
            // each crossover this level's table names for this type (one-row
            // dots → several-row tiles → GEMM), so every path and every tail
            // of tokens runs whatever the thresholds are; the GEMM also with a
            // partly filled last group. Rows: fewer than a tile, and 67
            // (whole tiles and a last row). Float rows of 100 leave a tail of
            // columns past the last vector.
            const bool quant = type == GGMLType::Q8_0 || type == GGMLType::Q4_0;
            const SimdKernels& K = simd_kernels();
            const MatmulPaths& paths = type == GGMLType::F32 ? K.f32 : type == GGMLType::F16 ? K.f16 : K.quant;
            std::vector<int> token_counts = {1, 3};
            for (int edge : {paths.tile_min_tokens, paths.gemm_min_tokens})
                if (edge > 0)
                    for (int n : {edge - 1, edge, edge + 1, edge + 2, edge + 5}) token_counts.push_back(n);
            std::sort(token_counts.begin(), token_counts.end());
            token_counts.erase(std::unique(token_counts.begin(), token_counts.end()), token_counts.end());
            for (int n_rows : {1, 5, 67}) {
                for (int n_tokens : token_counts) {
                    const int n_cols = quant ? 96 : 100;
                    const auto wf = randn(static_cast<std::size_t>(n_rows) * n_cols, 3);
                    const auto x = randn(static_cast<std::size_t>(n_tokens) * n_cols, 4);
                    const auto bytes = quantize(type, wf.data(), static_cast<std::int64_t>(wf.size()));
                    const WeightMatrix w = weights(type, bytes, n_rows, n_cols);
                    std::vector<float> ref(static_cast<std::size_t>(n_rows) * n_tokens), y1(ref.size()), y2(ref.size());
                    matmul_ref(w, x.data(), n_tokens, ref.data());
                    MatmulScratch scratch;
                    matmul(w, x.data(), n_tokens, y1.data(), nullptr, scratch);
                    matmul(w, x.data(), n_tokens, y2.data(), &pool, scratch);
                    float scale = 0;
                    for (float v : ref) scale = std::max(scale, std::fabs(v));
                    const float d = maxdiff(ref, y1);
                    // Quantized weights: decode and small batches round the
                    // activations to Q8_0 too.
                    const float tol = quant ? 0.02f * scale : 1e-5f * scale;
                    if (n_rows == 67 && (n_tokens == 1 || n_tokens == token_counts.back()))
                        MESSAGE(std::string(cpu_simd_name(level))
                                << " " << std::string(ggml_type_name(type)) << " " << n_rows << "x" << n_cols << " @ "
                                << n_tokens << " tokens: maxdiff " << d << " (|y| <= " << scale << ", tolerance " << tol
                                << ")");
                    CAPTURE(std::string(cpu_simd_name(level)));
                    CAPTURE(ggml_type_name(type));
                    CAPTURE(n_rows);
                    CAPTURE(n_tokens);
                    CHECK(d <= tol);
                    // The same bits whatever the number of threads.
                    CHECK(maxdiff(y1, y2) == 0.0f);
                    // Weights that stay in cache: F32/F16 decode goes through the tiles too.
                    std::vector<float> y3(ref.size()), y4(ref.size());
                    matmul(w, x.data(), n_tokens, y3.data(), nullptr, scratch, WeightHome::l2);
                    matmul(w, x.data(), n_tokens, y4.data(), &pool, scratch, WeightHome::l2);
                    CHECK(maxdiff(ref, y3) <= tol);
                    CHECK(maxdiff(y3, y4) == 0.0f);
                    // Weights streamed from memory: the same bits as from a cache.
                    std::vector<float> y5(ref.size());
                    matmul(w, x.data(), n_tokens, y5.data(), &pool, scratch, WeightHome::memory);
                    CHECK(maxdiff(y1, y5) == 0.0f);
                }
            }
        }
    }
}

TEST_CASE("kernels: each decode row gets the same bits whether its rows are summed in eights or one at a time") {
    // Decode sums the rows of quantized weights, and F16 ones at the AVX-512
    // level, eight at a time (drive in kernels_simd.inc); a matrix of one
    // row takes the one-row tile. Both must give every row the very same
    // float, at every level and for every type (F32 goes one at a time).
    for (CpuSimd level : levels()) {
        ScopedCpuSimd use(level);
        for (GGMLType type : {GGMLType::Q8_0, GGMLType::Q4_0, GGMLType::F16, GGMLType::F32}) {
            const int n_rows = 67, n_cols = 288;  // eight groups of eight and three rows over
            const auto wf = randn(static_cast<std::size_t>(n_rows) * n_cols, 5);
            const auto x = randn(n_cols, 6);
            const auto bytes = quantize(type, wf.data(), static_cast<std::int64_t>(wf.size()));
            const WeightMatrix w = weights(type, bytes, n_rows, n_cols);
            MatmulScratch scratch;
            std::vector<float> y(n_rows), y_row(n_rows);
            matmul(w, x.data(), 1, y.data(), nullptr, scratch);
            for (int r = 0; r < n_rows; ++r) {
                const WeightMatrix one{type, w.row(r), 1, n_cols, w.row_bytes};
                matmul(one, x.data(), 1, &y_row[static_cast<std::size_t>(r)], nullptr, scratch);
            }
            CAPTURE(std::string(cpu_simd_name(level)));
            CAPTURE(ggml_type_name(type));
            CHECK(maxdiff(y, y_row) == 0.0f);
            CHECK(y[0] != 0.0f);  // the rows were computed at all
        }
    }
}

TEST_CASE("kernels: Q4_0 and Q8_0 matmuls read the interleaved rows where they are made, and match matmul_ref") {
    // The interleaved copy (interleaved_rows.h) is what the SIMD levels read
    // for rows 0 .. n_rows / 8 * 8, except in batches that this level's
    // table sends to the GEMM: give it the real weights and the matrix's own
    // rows zeros (scale 0) in their place, and those rows must still come
    // out right while the rows past the last eight (read as stored) come out
    // 0. The scalar level reads the rows as stored. Token counts: decode,
    // each tail of a tile of 4, and more than one block of tokens
    // (TOKEN_BLOCK: 32 at AVX2, 64 at AVX-512).
    ThreadPool pool(2);
    for (CpuSimd level : levels()) {
        ScopedCpuSimd use(level);
        for (GGMLType type : {GGMLType::Q4_0, GGMLType::Q8_0}) {
            const MatmulPaths& paths = type == GGMLType::Q4_0 ? simd_kernels().q4_0x8 : simd_kernels().q8_0x8;
            for (int n_rows : {8, 67, 200}) {
                for (int n_tokens : {1, 2, 3, 4, 7, 70}) {
                    const int n_cols = 288;  // nine blocks
                    const auto wf = randn(static_cast<std::size_t>(n_rows) * n_cols, 11);
                    const auto x = randn(static_cast<std::size_t>(n_tokens) * n_cols, 12);
                    const auto bytes = quantize(type, wf.data(), static_cast<std::int64_t>(wf.size()));
                    const WeightMatrix stored = weights(type, bytes, n_rows, n_cols);
                    const sixstep::AlignedVector<std::uint8_t> x8 = interleave_rows(stored);
                    const int grouped = n_rows / 8 * 8;
                    REQUIRE(x8.size() == static_cast<std::size_t>(grouped) * stored.row_bytes);
                    std::vector<float> ref(static_cast<std::size_t>(n_rows) * n_tokens), y(ref.size()),
                        y_pool(ref.size());
                    matmul_ref(stored, x.data(), n_tokens, ref.data());

                    std::vector<std::uint8_t> zeros(bytes.size(), 0);
                    std::copy(bytes.begin() + static_cast<std::ptrdiff_t>(grouped * stored.row_bytes), bytes.end(),
                              zeros.begin() + static_cast<std::ptrdiff_t>(grouped * stored.row_bytes));
                    WeightMatrix w = weights(type, zeros, n_rows, n_cols);
                    w.interleaved = x8.data();
                    MatmulScratch scratch;
                    matmul(w, x.data(), n_tokens, y.data(), nullptr, scratch);
                    matmul(w, x.data(), n_tokens, y_pool.data(), &pool, scratch);
                    CAPTURE(std::string(cpu_simd_name(level)));
                    CAPTURE(ggml_type_name(type));
                    CAPTURE(n_rows);
                    CAPTURE(n_tokens);
                    CHECK(maxdiff(y, y_pool) == 0.0f);  // the same bits whatever the threads
                    // Streamed from memory, AVX-512 reads one group of eight
                    // rows at a time instead of two: the same bits.
                    std::vector<float> y_stream(ref.size());
                    matmul(w, x.data(), n_tokens, y_stream.data(), &pool, scratch, WeightHome::memory);
                    CHECK(maxdiff(y, y_stream) == 0.0f);
                    float scale = 0;
                    for (float v : ref) scale = std::max(scale, std::fabs(v));
                    const bool reads_x8 = level != CpuSimd::scalar &&
                                          (paths.gemm_min_tokens == 0 || n_tokens < paths.gemm_min_tokens);
                    int wrong = 0;
                    for (int t = 0; t < n_tokens; ++t)
                        for (int r = 0; r < n_rows; ++r) {
                            const std::size_t i = static_cast<std::size_t>(t) * n_rows + r;
                            const float want = r < grouped && !reads_x8 ? 0.0f : ref[i];
                            wrong += std::fabs(y[i] - want) > 0.02f * scale;
                        }
                    CHECK(wrong == 0);
                    // A single token with the rows as stored too: the two ways
                    // agree to float rounding (both round x to Q8_0 alike).
                    if (n_tokens == 1) {
                        w.data = bytes.data();
                        std::vector<float> y_both(ref.size()), y_stored(ref.size());
                        matmul(w, x.data(), 1, y_both.data(), &pool, scratch);
                        w.interleaved = nullptr;
                        matmul(w, x.data(), 1, y_stored.data(), &pool, scratch);
                        CHECK(maxdiff(y_both, y_stored) <= 1e-5f * scale);
                    }
                }
            }
        }
    }
}

TEST_CASE("kernels: interleaving puts eight rows' blocks side by side, four bytes of each at a time") {
    const int n_rows = 17, n_cols = 64;  // two groups of eight and a row over; two blocks per row
    for (GGMLType type : {GGMLType::Q4_0, GGMLType::Q8_0}) {
        std::vector<std::uint8_t> bytes(static_cast<std::size_t>(n_rows) * ggml_row_size(type, n_cols));
        for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(i * 7 + 3);
        const WeightMatrix w = weights(type, bytes, n_rows, n_cols);
        const sixstep::AlignedVector<std::uint8_t> x8 = interleave_rows(w);
        const std::size_t block = type == GGMLType::Q4_0 ? sizeof(block_q4_0) : sizeof(block_q8_0);
        const int n_qs = type == GGMLType::Q4_0 ? 16 : 32;
        REQUIRE(x8.size() == 4 * 8 * block);
        CAPTURE(ggml_type_name(type));
        for (int g = 0; g < 2; ++g)
            for (int b = 0; b < 2; ++b)
                for (int i = 0; i < 8; ++i) {
                    const std::uint8_t* src = w.row(8 * g + i) + b * block;         // d (2 bytes), then qs
                    const std::uint8_t* blk = x8.data() + (g * 2 + b) * 8 * block;  // d[8], then qs
                    CHECK(std::equal(src, src + 2, blk + 2 * i));
                    for (int j = 0; j < n_qs; ++j) CHECK(blk[16 + 32 * (j / 4) + 4 * i + j % 4] == src[2 + j]);
                }
    }
    CHECK(interleave_rows(weights(GGMLType::F16, std::vector<std::uint8_t>(64 * 16), 16, 32)).empty());
    CHECK(interleave_rows(weights(GGMLType::Q8_0, std::vector<std::uint8_t>(34 * 7), 7, 32)).empty());
}

TEST_CASE("kernels: matmul_many equals separate matmuls, mixed types and odd sizes, at every level") {
    ThreadPool pool(2);
    const int n_cols = 64;
    const GGMLType types[3] = {GGMLType::Q8_0, GGMLType::F32, GGMLType::F16};
    const int rows[3] = {13, 6, 33};
    std::vector<std::vector<std::uint8_t>> bytes(3);
    WeightMatrix w[3];
    for (int m = 0; m < 3; ++m) {
        const auto wf = randn(static_cast<std::size_t>(rows[m]) * n_cols, 20 + m);
        bytes[m] = quantize(types[m], wf.data(), static_cast<std::int64_t>(wf.size()));
        w[m] = weights(types[m], bytes[m], rows[m], n_cols);
    }
    for (CpuSimd level : levels()) {
        ScopedCpuSimd use(level);
        // 12 at AVX2 and 28 at AVX-512: the F32 matrix through the GEMM, the
        // F16 one through several-row tiles and the Q8_0 one through dot
        // products, in the same call.
        for (int n_tokens : {1, 5, 12, 28, 40}) {
            const auto x = randn(static_cast<std::size_t>(n_tokens) * n_cols, 9);
            MatmulScratch scratch;
            std::vector<float> sep[3], many[3];
            for (int m = 0; m < 3; ++m) {
                sep[m].resize(static_cast<std::size_t>(rows[m]) * n_tokens);
                many[m].resize(sep[m].size());
                matmul(w[m], x.data(), n_tokens, sep[m].data(), nullptr, scratch);
            }
            const WeightMatrix* ws[3] = {&w[0], &w[1], &w[2]};
            float* ys[3] = {many[0].data(), many[1].data(), many[2].data()};
            matmul_many(ws, ys, 3, x.data(), n_tokens, &pool, scratch);
            for (int m = 0; m < 3; ++m)
                CHECK_MESSAGE(many[m] == sep[m], std::string(cpu_simd_name(level)) << " @ " << n_tokens);
        }
    }
}

TEST_CASE("kernels: rope rotates adjacent pairs by pos * base^(-2i/n_rot)") {
    std::vector<float> x = {1, 0, 1, 0, 5, 6};  // one head of 6, n_rot 4: the last pair stays
    kernels::rope(x.data(), 1, 6, 4, 3, 100.0f);
    const double t0 = 3.0, t1 = 3.0 * std::pow(100.0, -2.0 / 4);
    CHECK(x[0] == doctest::Approx(std::cos(t0)));
    CHECK(x[1] == doctest::Approx(std::sin(t0)));
    CHECK(x[2] == doctest::Approx(std::cos(t1)));
    CHECK(x[3] == doctest::Approx(std::sin(t1)));
    CHECK(x[4] == 5);
    CHECK(x[5] == 6);
}

