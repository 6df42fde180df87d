// Each SIMD kernel against its scalar oracle, with odd sizes to hit the tails.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "pipeline/llm/cpu/cpu_backend.h"
#include "pipeline/llm/cpu/kernels.h"
#include "pipeline/llm/cpu/matmul.h"
#include "pipeline/llm/cpu/thread_pool.h"

using namespace sixstep::llm;

namespace {
std::vector<float> randn(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, 1.0f);
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
}
}  // namespace

TEST_CASE("kernels: dot products match the scalar versions") {
    for (int n : {1, 7, 8, 31, 64, 100, 768}) {
        const auto a = randn(n, 1), b = randn(n, 2);
        std::vector<std::uint16_t> h(n);
        for (int i = 0; i < n; ++i) h[i] = fp32_to_fp16(a[i]);
        CHECK(kernels::dot_f32(a.data(), b.data(), n) ==
              doctest::Approx(kernels::dot_f32_ref(a.data(), b.data(), n)).epsilon(1e-4));
        CHECK(kernels::dot_f16(h.data(), b.data(), n) ==
              doctest::Approx(kernels::dot_f16_ref(h.data(), b.data(), n)).epsilon(1e-4));
    }
}

TEST_CASE("kernels: matmul of every type matches matmul_ref") {
    ThreadPool pool(2);
    MESSAGE("kernels compiled for " << std::string(cpu_simd_name()));
    for (GGMLType type : {GGMLType::F32, GGMLType::F16, GGMLType::Q8_0, GGMLType::Q4_0}) {
        for (int n_rows : {1, 5, 67}) {
            for (int n_tokens : {1, 3, 70}) {
                const int n_cols = 96;
                const auto wf = randn(static_cast<std::size_t>(n_rows) * n_cols, 3);
                const auto x = randn(static_cast<std::size_t>(n_tokens) * n_cols, 4);
                const auto bytes = quantize(type, wf.data(), static_cast<std::int64_t>(wf.size()));
                WeightMatrix w;
                w.type = type;
                w.data = bytes.data();
                w.n_rows = n_rows;
                w.n_cols = n_cols;
                w.row_bytes = ggml_row_size(type, n_cols);
                std::vector<float> ref(static_cast<std::size_t>(n_rows) * n_tokens), y1(ref.size()), y2(ref.size());
                matmul_ref(w, x.data(), n_tokens, ref.data());
                MatmulScratch scratch;
                matmul(w, x.data(), n_tokens, y1.data(), nullptr, scratch);
                matmul(w, x.data(), n_tokens, y2.data(), &pool, scratch);
                float d = 0, d12 = 0, scale = 0;
                for (std::size_t i = 0; i < ref.size(); ++i) {
                    d = std::max(d, std::fabs(ref[i] - y1[i]));
                    d12 = std::max(d12, std::fabs(y1[i] - y2[i]));
                    scale = std::max(scale, std::fabs(ref[i]));
                }
                // Quantized weights: the fast path rounds activations to Q8_0 too.
                const bool quant = type == GGMLType::Q8_0 || type == GGMLType::Q4_0;
                const float tol = quant ? 0.02f * scale : 1e-5f * scale;
                if (n_rows == 67 && n_tokens == 70)
                    MESSAGE(std::string(ggml_type_name(type)) << " " << n_rows << "x" << n_cols << " @ " << n_tokens
                                                 << " tokens: maxdiff " << d << " (|y| <= " << scale << ")");
                CHECK(d <= tol);
                CHECK(d12 == 0.0f);
            }
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

TEST_CASE("thread pool: parallel_for covers the range once") {
    ThreadPool pool(2);
    for (int n : {0, 1, 5, 1000}) {
        std::vector<int> hits(n, 0);
        for (int rep = 0; rep < 50; ++rep)
            pool.parallel_for(n, [&](int b, int e, int) {
                for (int i = b; i < e; ++i) ++hits[i];
            });
        for (int i = 0; i < n; ++i) CHECK(hits[i] == 50);
    }
}

TEST_CASE("kernels: matmul_many equals separate matmuls, mixed types and odd sizes") {
    ThreadPool pool(2);
    const int n_cols = 64, n_tokens = 5;
    const auto x = randn(static_cast<std::size_t>(n_tokens) * n_cols, 9);
    const GGMLType types[3] = {GGMLType::Q8_0, GGMLType::F32, GGMLType::F16};
    const int rows[3] = {13, 6, 33};
    std::vector<std::vector<std::uint8_t>> bytes(3);
    WeightMatrix w[3];
    for (int m = 0; m < 3; ++m) {
        const auto wf = randn(static_cast<std::size_t>(rows[m]) * n_cols, 20 + m);
        bytes[m] = quantize(types[m], wf.data(), static_cast<std::int64_t>(wf.size()));
        w[m] = WeightMatrix{types[m], bytes[m].data(), rows[m], n_cols, ggml_row_size(types[m], n_cols)};
    }
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
    for (int m = 0; m < 3; ++m) CHECK(many[m] == sep[m]);
}
