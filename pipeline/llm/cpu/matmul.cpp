// Matmul orchestration (see matmul.h for the plan): checks, the activation
// formats the kernels want, and the split of output rows across threads.
// The kernels themselves are in kernels_simd.inc.
#include "pipeline/llm/cpu/matmul.h"

#include <algorithm>
#include <array>
#include <cstdint>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/llm/cpu/kernels_simd.h"
#include "pipeline/llm/cpu/thread_pool.h"

namespace sixstep::llm {

void matmul(const WeightMatrix& w, const float* x, int n_tokens, float* y, ThreadPool* pool, MatmulScratch& scratch,
            WeightHome home) {
    const WeightMatrix* ws[1] = {&w};
    float* ys[1] = {y};
    matmul_many(ws, ys, 1, x, n_tokens, pool, scratch, home);
}

namespace {

bool is_quantized(GGMLType t) { return t == GGMLType::Q8_0 || t == GGMLType::Q4_0; }

// Scratch buffers only grow: a smaller matmul reuses a larger one's memory.
template <typename T>
void grow(AlignedVector<T>& v, std::size_t n) {
    if (v.size() < n) v.resize(n);
}

}  // namespace

void matmul_many(const WeightMatrix* const* ws, float* const* ys, int n_mats, const float* x, int n_tokens,
                 ThreadPool* pool, MatmulScratch& scratch, WeightHome home) {
    ThreadPool::Steps steps;
    matmul_steps(steps, ws, ys, n_mats, x, n_tokens, pool ? pool->n_threads() : 1, scratch, home);
    run_steps(pool, steps);
}

void matmul_steps(ThreadPool::Steps& steps, const WeightMatrix* const* ws, float* const* ys, int n_mats,
                  const float* x, int n_tokens, int n_threads, MatmulScratch& scratch, WeightHome home) {
    if (n_tokens <= 0 || n_mats <= 0) return;
    const SimdKernels& K = simd_kernels();
    const int n_cols = ws[0]->n_cols;
    // Decode and small batches go through the one-row dot products, F32/F16
    // batches a little larger through tiles of several rows, large batches
    // through the GEMM; where one path overtakes another depends on the
    // weight type (see [TABLE] in kernels_simd.inc), so matrices sharing an
    // input may take different paths. The path of each matrix is chosen
    // here, once; the steps only run it.
    enum class Path { gemm, quant, tiles, rows };
    struct Mat {
        const WeightMatrix* w;
        float* y;
        Path path;
        int base;  // first row in the shared range
    };
    const auto padded = [&](int rows) { return (rows + K.row_grain - 1) / K.row_grain * K.row_grain; };
    std::array<Mat, 4> mats{};
    if (n_mats > static_cast<int>(mats.size())) throw Error("matmul: at most 4 matrices share an input");
    bool gemm = false, need_q8 = false, need_sums = false;
    int total_rows = 0;
    for (int m = 0; m < n_mats; ++m) {
        const WeightMatrix& w = *ws[m];
        if (w.n_cols != n_cols) throw Error("matmul: matrices sharing an input must have the same width");
        const bool q = is_quantized(w.type);
        if (!q && w.type != GGMLType::F32 && w.type != GGMLType::F16)
            throw Error(fmt::format("matmul: weight type {} is not supported", ggml_type_name(w.type)));
        if (q && n_cols % QK8_0 != 0) throw Error(fmt::format("matmul: {} columns is not a multiple of 32", n_cols));
        const MatmulPaths& paths = w.type == GGMLType::F32   ? K.f32
                                   : w.type == GGMLType::F16 ? K.f16
                                   : w.interleaved == nullptr ? K.quant
                                   : w.type == GGMLType::Q4_0 ? K.q4_0x8
                                                              : K.q8_0x8;
        const int tile_min = home == WeightHome::l2 ? paths.tile_min_tokens_in_cache : paths.tile_min_tokens;
        Path path = Path::rows;
        if (K.gemm_tokens > 0 && paths.gemm_min_tokens > 0 && n_tokens >= paths.gemm_min_tokens)
            path = Path::gemm;
        else if (q)
            path = Path::quant;
        else if (K.tile_rows_float != nullptr && tile_min > 0 && n_tokens >= tile_min)
            path = Path::tiles;
        need_q8 = need_q8 || path == Path::quant;
        // The block sums serve only Q4_0's interleaved tiles (their −8).
        need_sums = need_sums || (path == Path::quant && w.type == GGMLType::Q4_0 && w.interleaved != nullptr);
        gemm = gemm || path == Path::gemm;
        mats[static_cast<std::size_t>(m)] = Mat{&w, ys[m], path, total_rows};
        total_rows += padded(w.n_rows);
    }

    // The activations in the formats the kernels read, made once and shared
    // by every matrix. The buffers are sized now, while the steps are
    // written, and their addresses taken when the steps run: a later
    // matmul's steps may grow the same scratch.
    const int n_blocks = n_cols / static_cast<int>(QK8_0);
    if (need_q8) {
        grow(scratch.q8_qs, static_cast<std::size_t>(n_tokens) * n_cols);
        grow(scratch.q8_d, static_cast<std::size_t>(n_tokens) * n_blocks);
        grow(scratch.q8_s, static_cast<std::size_t>(n_tokens) * n_blocks);
        steps.push_back({n_tokens, 1, [&scratch, &K, x, n_cols, need_sums](int t0, int t1, int) {
                             K.quantize_q8_0(x, n_cols, scratch.q8_qs.data(), scratch.q8_d.data(),
                                             need_sums ? scratch.q8_s.data() : nullptr, t0, t1);
                         }});
    }
    const int n_groups = gemm ? (n_tokens + K.gemm_tokens - 1) / K.gemm_tokens : 0;
    const std::size_t packed_floats = static_cast<std::size_t>(n_groups) * K.gemm_tokens * n_cols;
    if (gemm) {
        grow(scratch.packed, packed_floats);
        if (scratch.rows.size() < static_cast<std::size_t>(n_threads)) scratch.rows.resize(static_cast<std::size_t>(n_threads));
        for (AlignedVector<float>& rows : scratch.rows) grow(rows, static_cast<std::size_t>(K.gemm_rows) * n_cols);
        steps.push_back({n_groups, 1, [&scratch, &K, x, n_cols, n_tokens](int g0, int g1, int) {
                             float* data = scratch.packed.data();
                             for (int g = g0; g < g1; ++g) K.pack_group(x, n_cols, n_tokens, g, data);
                         }});
    }

    // The rows of all matrices form one range split across the threads, so
    // several small matmuls cost one synchronization instead of several.
    // Each matrix starts at a multiple of row_grain in that range, so its
    // rows are tiled exactly as by a matmul of its own.
    const bool one_stream = home == WeightHome::memory;
    const auto work = [&scratch, &K, mats, n_mats, x, n_cols, n_tokens, n_blocks, n_groups, one_stream](
                          int g0, int g1, int thread) {
        const Q8Rows q8{scratch.q8_qs.data(), scratch.q8_d.data(), n_cols, n_blocks, scratch.q8_s.data()};
        const PackedRows packed{n_groups > 0 ? scratch.packed.data() : nullptr, n_cols, n_groups};
        for (int m = 0; m < n_mats; ++m) {
            const Mat& mat = mats[static_cast<std::size_t>(m)];
            const WeightMatrix& w = *mat.w;
            if (mat.base >= g1) break;
            const int r0 = std::max(g0, mat.base) - mat.base, r1 = std::min(g1, mat.base + w.n_rows) - mat.base;
            if (r0 >= r1) continue;
            switch (mat.path) {
                case Path::gemm:
                    K.gemm_rows_fn(w, packed, n_tokens, mat.y, r0, r1,
                                   scratch.rows[static_cast<std::size_t>(thread)].data());
                    break;
                case Path::quant:
                    K.dot_rows_quant(w, q8, n_tokens, mat.y, r0, r1, one_stream);
                    break;
                case Path::tiles: {
                    // Whole tiles of rows; the last rows of a matrix one at a time.
                    // r0 is a multiple of row_grain, itself a multiple of
                    // tile_rows, so each row falls into the same tile whatever the
                    // split across threads (the same bits).
                    const int r_tiles = r0 + (r1 - r0) / K.tile_rows * K.tile_rows;
                    K.tile_rows_float(w, x, n_tokens, mat.y, r0, r_tiles);
                    if (r_tiles < r1) K.dot_rows_float(w, x, n_tokens, mat.y, r_tiles, r1);
                    break;
                }
                case Path::rows:
                    K.dot_rows_float(w, x, n_tokens, mat.y, r0, r1);
                    break;
            }
        }
    };
    steps.push_back({total_rows, K.row_grain, work});
}

// ---- the oracle -------------------------------------------------------------------
void matmul_ref(const WeightMatrix& w, const float* x, int n_tokens, float* y) {
    std::vector<float> row(static_cast<std::size_t>(w.n_cols));
    for (int o = 0; o < w.n_rows; ++o) {
        dequantize_row(w.type, w.cpu_row(o), row.data(), w.n_cols);
        for (int t = 0; t < n_tokens; ++t) {
            const float* xt = x + static_cast<std::size_t>(t) * w.n_cols;
            double s = 0;
            for (int i = 0; i < w.n_cols; ++i) s += static_cast<double>(row[i]) * xt[i];
            y[static_cast<std::size_t>(t) * w.n_rows + o] = static_cast<float>(s);
        }
    }
}

}  // namespace sixstep::llm
