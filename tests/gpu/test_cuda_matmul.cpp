// The device matmul against the CPU's oracle (matmul_ref: weights
// dequantized row by row, sums in double), for every weight type and both
// paths — the GEMV of small batches and the tiled cuBLAS GEMM of large ones,
// with a scratch tile small enough that a matrix takes several tiles and a
// remainder — with and without accumulation, and fused over several
// matrices. Shapes are chosen to hit the edges: rows that do not fill the
// last block of warps, rows narrower than one warp's step, rows long enough
// for the unrolled loop and its tail.
#include <doctest/doctest.h>

#include "gpu_available.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "gpu/cuda_device.h"
#include "gpu/device_buffer.h"
#include "gpu/device_weights.h"
#include "gpu/matmul.h"
#include "pipeline/core/error.h"
#include "pipeline/llm/cpu/matmul.h"
#include "pipeline/llm/gguf/ggml_type.h"

using namespace sixstep;
using namespace sixstep::llm;
using sixstep::test::gpu_available;

namespace {

struct HostMatrix {
    std::vector<std::uint8_t> bytes;
    WeightMatrix w;
};

HostMatrix random_matrix(GGMLType type, int n_rows, int n_cols, std::mt19937& rng) {
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> f(static_cast<std::size_t>(n_rows) * n_cols);
    for (float& x : f) x = u(rng);
    HostMatrix m;
    m.bytes = type == GGMLType::F32 ? std::vector<std::uint8_t>(reinterpret_cast<const std::uint8_t*>(f.data()),
                                                                reinterpret_cast<const std::uint8_t*>(f.data() + f.size()))
                                    : quantize(type, f.data(), static_cast<std::int64_t>(f.size()));
    m.w = WeightMatrix{type, m.bytes.data(), n_rows, n_cols, ggml_row_size(type, n_cols)};
    return m;
}

std::vector<float> random_vector(std::size_t n, std::mt19937& rng) {
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (float& x : v) x = u(rng);
    return v;
}

std::vector<float> download(const gpu::DeviceBuffer<float>& d, std::size_t n) {
    std::vector<float> h(n);
    CUDA_CHECK(cudaMemcpy(h.data(), d.data(), n * sizeof(float), cudaMemcpyDeviceToHost));
    return h;
}

void upload(gpu::DeviceBuffer<float>& d, const std::vector<float>& h) {
    d.ensure(h.size());
    CUDA_CHECK(cudaMemcpy(d.data(), h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
}

// max |got − want| / max |want|
double relative_error(const std::vector<float>& got, const std::vector<float>& want) {
    double err = 0, scale = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
        err = std::max(err, std::fabs(static_cast<double>(got[i]) - want[i]));
        scale = std::max(scale, std::fabs(static_cast<double>(want[i])));
    }
    return scale > 0 ? err / scale : err;
}

}  // namespace

TEST_CASE("cuda matmul: GEMV and tiled GEMM agree with the CPU oracle for every type, batch size and shape") {
    if (!gpu_available()) return;
    gpu::CudaDevice device(0);
    std::mt19937 rng(7);
    const int shapes[][2] = {{100, 96}, {37, 4160}, {129, 512}};
    for (GGMLType type : {GGMLType::F32, GGMLType::F16, GGMLType::Q8_0, GGMLType::Q4_0}) {
        for (const auto& shape : shapes) {
            const int n_rows = shape[0], n_cols = shape[1];
            const HostMatrix hm = random_matrix(type, n_rows, n_cols, rng);
            const gpu::DeviceMatrixBuffer dm(hm.w, "test.weight");
            // Room for 40 rows: a 100- or 129-row matrix takes several tiles and a remainder.
            gpu::DeviceBuffer<float> tile(static_cast<std::size_t>(40) * n_cols);
            const gpu::MatmulContext ctx{device.stream(), device.cublas(), tile.data(), tile.size()};
            double worst = 0;
            for (int n_tokens : {1, 2, 3, 5, 8, 9, 33}) {
                const std::vector<float> x = random_vector(static_cast<std::size_t>(n_tokens) * n_cols, rng);
                const std::vector<float> y0 = random_vector(static_cast<std::size_t>(n_tokens) * n_rows, rng);
                std::vector<float> want(y0.size());
                matmul_ref(hm.w, x.data(), n_tokens, want.data());
                gpu::DeviceBuffer<float> dx, dy;
                upload(dx, x);
                for (bool accumulate : {false, true}) {
                    upload(dy, y0);
                    gpu::matmul(dm.view(), dx.data(), n_tokens, dy.data(), accumulate, ctx);
                    device.synchronize();
                    std::vector<float> expect = want;
                    if (accumulate)
                        for (std::size_t i = 0; i < expect.size(); ++i) expect[i] += y0[i];
                    const double e = relative_error(download(dy, y0.size()), expect);
                    INFO(ggml_type_name(type) << " [" << n_rows << ", " << n_cols << "] n_tokens " << n_tokens
                                              << (accumulate ? " accumulate" : ""));
                    CHECK(e <= 1e-5);
                    worst = std::max(worst, e);
                }
            }
            MESSAGE(fmt::format("{} [{}, {}]: worst relative error {:.2e} over batches 1..33", ggml_type_name(type),
                                n_rows, n_cols, worst));
        }
    }
}

TEST_CASE("cuda matmul: Q, K and V in one launch equal three separate products") {
    if (!gpu_available()) return;
    gpu::CudaDevice device(0);
    std::mt19937 rng(11);
    const int n_cols = 256, rows[3] = {256, 64, 64};  // GQA: K and V narrower than Q
    for (GGMLType type : {GGMLType::F16, GGMLType::Q8_0}) {
        std::vector<HostMatrix> hm;
        std::vector<std::unique_ptr<gpu::DeviceMatrixBuffer>> dm;
        for (int m = 0; m < 3; ++m) {
            hm.push_back(random_matrix(type, rows[m], n_cols, rng));
            dm.push_back(std::make_unique<gpu::DeviceMatrixBuffer>(hm.back().w, "test.weight"));
        }
        const gpu::MatmulContext ctx{device.stream(), device.cublas(), nullptr, 0};
        for (int n_tokens : {1, 4, 8}) {
            const std::vector<float> x = random_vector(static_cast<std::size_t>(n_tokens) * n_cols, rng);
            gpu::DeviceBuffer<float> dx, dy[3];
            upload(dx, x);
            for (auto& d : dy) d.ensure(static_cast<std::size_t>(n_tokens) * 256);
            const gpu::DeviceMatrix ws[3] = {dm[0]->view(), dm[1]->view(), dm[2]->view()};
            float* const ys[3] = {dy[0].data(), dy[1].data(), dy[2].data()};
            gpu::matmul_many(ws, ys, 3, dx.data(), n_tokens, ctx);
            device.synchronize();
            for (int m = 0; m < 3; ++m) {
                std::vector<float> want(static_cast<std::size_t>(n_tokens) * rows[m]);
                matmul_ref(hm[m].w, x.data(), n_tokens, want.data());
                INFO(ggml_type_name(type) << " matrix " << m << " n_tokens " << n_tokens);
                CHECK(relative_error(download(dy[m], want.size()), want) <= 1e-5);
            }
        }
    }
}

TEST_CASE("cuda matmul: a GEMM without a big enough tile is a clear error, not a wrong answer") {
    if (!gpu_available()) return;
    gpu::CudaDevice device(0);
    std::mt19937 rng(3);
    const HostMatrix hm = random_matrix(GGMLType::Q8_0, 64, 128, rng);
    const gpu::DeviceMatrixBuffer dm(hm.w, "test.weight");
    gpu::DeviceBuffer<float> x(16 * 128), y(16 * 64);
    const gpu::MatmulContext ctx{device.stream(), device.cublas(), nullptr, 0};
    CHECK_THROWS_WITH_AS(gpu::matmul(dm.view(), x.data(), 16, y.data(), false, ctx),
                         "cuda matmul: no scratch tile for a row of 128 columns (the backend sizes it for the widest "
                         "matrix)",
                         sixstep::Error);
}
