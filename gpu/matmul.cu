// Device matrix products: see matmul.h for the plan.
#include "gpu/matmul.h"

#include <algorithm>
#include <string>

#include "gpu/cublas_api.h"
#include "gpu/cuda_check.h"
#include "gpu/dequant.cuh"
#include "gpu/reduce.cuh"
#include "pipeline/core/error.h"

namespace sixstep::gpu {

namespace {

// ---- GEMV ---------------------------------------------------------------------
constexpr int kGemvWarps = 4;   // output rows per block of 128 threads
// 16-byte chunks each thread loads before it uses the first: with 8, a row of
// 2048 f16 (or 4096 q8_0) columns is one round of loads per warp. (4 read
// the 1.1B model at 618 tok/s, 8 with the attention, norm and RoPE changes
// beside it at 773; one block of four warps per row instead, 769 for f16
// and 647 for q8_0: bench -p 512 -n 128 -r 5 on an H200.)
constexpr int kGemvUnroll = 8;
constexpr int kMaxMats = 3;

// One launch over up to three matrices of the same type and width, their
// rows numbered one after the other.
struct GemvJob {
    const void* values[kMaxMats];
    const unsigned short* scales[kMaxMats];
    float* y[kMaxMats];
    int n_rows[kMaxMats];
    int row_end[kMaxMats];  // rows of matrices 0..m together; unused ones repeat the total
    int n_mats;
    int n_cols;
    int accumulate;  // 1: y += x·Wᵀ
};

// acc[t] += the chunk's weights · x[t, col …] for every token of the batch.
template <DeviceType T, int NT>
__device__ __forceinline__ void dot_chunk(const RawChunk& raw, const float* __restrict__ x, int n_cols, int col,
                                          int n_tokens, float* acc) {
    constexpr int K = ChunkTraits<T>::cols;
    float wv[K];
    dequant<T>(raw, wv);
#pragma unroll
    for (int t = 0; t < NT; ++t) {
        if (t < n_tokens) {
            // x rows are n_cols (a multiple of 32) floats: every chunk is 16-byte aligned.
            const float4* xp = reinterpret_cast<const float4*>(x + static_cast<std::size_t>(t) * n_cols + col);
            float s = acc[t];
#pragma unroll
            for (int k = 0; k < K / 4; ++k) {
                const float4 xv = __ldg(xp + k);
                s = fmaf(wv[4 * k + 0], xv.x, s);
                s = fmaf(wv[4 * k + 1], xv.y, s);
                s = fmaf(wv[4 * k + 2], xv.z, s);
                s = fmaf(wv[4 * k + 3], xv.w, s);
            }
            acc[t] = s;
        }
    }
}

// One warp per output row; NT >= n_tokens accumulators per thread.
template <DeviceType T, int NT>
__global__ void __launch_bounds__(kGemvWarps* kWarpSize)
    gemv_kernel(GemvJob job, const float* __restrict__ x, int n_tokens) {
    const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
    int row = blockIdx.x * kGemvWarps + warp;
    if (row >= job.row_end[kMaxMats - 1]) return;  // the whole warp leaves: no shuffle is left half-done
    // Which matrix the row belongs to (selected without indexing the
    // parameter arrays by a variable, which would copy them to local memory).
    DeviceMatrix w{T, job.n_rows[0], job.n_cols, job.values[0], job.scales[0]};
    float* y = job.y[0];
    if (row >= job.row_end[0]) {
        if (row < job.row_end[1]) {
            row -= job.row_end[0];
            w = DeviceMatrix{T, job.n_rows[1], job.n_cols, job.values[1], job.scales[1]};
            y = job.y[1];
        } else {
            row -= job.row_end[1];
            w = DeviceMatrix{T, job.n_rows[2], job.n_cols, job.values[2], job.scales[2]};
            y = job.y[2];
        }
    }

    float acc[NT];
#pragma unroll
    for (int t = 0; t < NT; ++t) acc[t] = 0.0f;
    constexpr int K = ChunkTraits<T>::cols;
    constexpr int step = kWarpSize * K;  // columns the warp covers per chunk
    const int n_cols = w.n_cols;
    // Each round issues all its loads (those inside the row) before the
    // first is used; the sums still run in column order.
    for (int c = lane * K; c < n_cols; c += kGemvUnroll * step) {
        RawChunk raw[kGemvUnroll];
#pragma unroll
        for (int u = 0; u < kGemvUnroll; ++u)
            if (c + u * step < n_cols) raw[u] = load_raw<T>(w, row, c + u * step);
#pragma unroll
        for (int u = 0; u < kGemvUnroll; ++u)
            if (c + u * step < n_cols) dot_chunk<T, NT>(raw[u], x, n_cols, c + u * step, n_tokens, acc);
    }

#pragma unroll
    for (int t = 0; t < NT; ++t) acc[t] = warp_sum(acc[t]);
    if (lane == 0) {
#pragma unroll
        for (int t = 0; t < NT; ++t) {
            if (t < n_tokens) {
                float* dst = y + static_cast<std::size_t>(t) * w.n_rows + row;
                *dst = job.accumulate ? *dst + acc[t] : acc[t];
            }
        }
    }
}

template <DeviceType T>
void launch_gemv_typed(const GemvJob& job, const float* x, int n_tokens, cudaStream_t stream) {
    const int rows = job.row_end[kMaxMats - 1];
    const dim3 grid((rows + kGemvWarps - 1) / kGemvWarps), block(kGemvWarps * kWarpSize);
    if (n_tokens <= 1)
        gemv_kernel<T, 1><<<grid, block, 0, stream>>>(job, x, n_tokens);
    else if (n_tokens <= 2)
        gemv_kernel<T, 2><<<grid, block, 0, stream>>>(job, x, n_tokens);
    else if (n_tokens <= 4)
        gemv_kernel<T, 4><<<grid, block, 0, stream>>>(job, x, n_tokens);
    else
        gemv_kernel<T, kGemvMaxTokens><<<grid, block, 0, stream>>>(job, x, n_tokens);
    CUDA_CHECK(cudaGetLastError());
}

void launch_gemv(DeviceType type, const GemvJob& job, const float* x, int n_tokens, cudaStream_t stream) {
    switch (type) {
        case DeviceType::f32: return launch_gemv_typed<DeviceType::f32>(job, x, n_tokens, stream);
        case DeviceType::f16: return launch_gemv_typed<DeviceType::f16>(job, x, n_tokens, stream);
        case DeviceType::q8_0: return launch_gemv_typed<DeviceType::q8_0>(job, x, n_tokens, stream);
        case DeviceType::q4_0: return launch_gemv_typed<DeviceType::q4_0>(job, x, n_tokens, stream);
    }
}

GemvJob gemv_job(const DeviceMatrix* ws, float* const* ys, int n_mats, bool accumulate) {
    GemvJob job{};
    int rows = 0;
    for (int m = 0; m < n_mats; ++m) {
        job.values[m] = ws[m].values;
        job.scales[m] = ws[m].scales;
        job.y[m] = ys[m];
        job.n_rows[m] = ws[m].n_rows;
        rows += ws[m].n_rows;
        job.row_end[m] = rows;
    }
    for (int m = n_mats; m < kMaxMats; ++m) job.row_end[m] = rows;  // never selected: row < rows
    job.n_mats = n_mats;
    job.n_cols = ws[0].n_cols;
    job.accumulate = accumulate ? 1 : 0;
    return job;
}

// ---- GEMM ---------------------------------------------------------------------
constexpr int kTileThreads = 256;

// out[r, :] = W[r0 + r, :] as float, one chunk per thread.
template <DeviceType T>
__global__ void __launch_bounds__(kTileThreads) dequantize_rows_kernel(DeviceMatrix w, int r0, int n_rows, float* out) {
    constexpr int K = ChunkTraits<T>::cols;
    const int chunks_per_row = w.n_cols / K;
    const long long total = static_cast<long long>(n_rows) * chunks_per_row;
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
         i += static_cast<long long>(gridDim.x) * blockDim.x) {
        const int r = static_cast<int>(i / chunks_per_row);
        const int c = static_cast<int>(i % chunks_per_row) * K;
        float v[K];
        dequant<T>(load_raw<T>(w, r0 + r, c), v);
        float4* dst = reinterpret_cast<float4*>(out + static_cast<std::size_t>(r) * w.n_cols + c);
#pragma unroll
        for (int k = 0; k < K / 4; ++k) dst[k] = make_float4(v[4 * k], v[4 * k + 1], v[4 * k + 2], v[4 * k + 3]);
    }
}

void dequantize_rows(const DeviceMatrix& w, int r0, int n_rows, float* out, cudaStream_t stream) {
    const long long chunks = static_cast<long long>(n_rows) * w.n_cols / 4;  // an upper bound for every type
    const int blocks = static_cast<int>(std::min<long long>((chunks + kTileThreads - 1) / kTileThreads, 4096));
    switch (w.type) {
        case DeviceType::f32:
            dequantize_rows_kernel<DeviceType::f32><<<blocks, kTileThreads, 0, stream>>>(w, r0, n_rows, out);
            break;
        case DeviceType::f16:
            dequantize_rows_kernel<DeviceType::f16><<<blocks, kTileThreads, 0, stream>>>(w, r0, n_rows, out);
            break;
        case DeviceType::q8_0:
            dequantize_rows_kernel<DeviceType::q8_0><<<blocks, kTileThreads, 0, stream>>>(w, r0, n_rows, out);
            break;
        case DeviceType::q4_0:
            dequantize_rows_kernel<DeviceType::q4_0><<<blocks, kTileThreads, 0, stream>>>(w, r0, n_rows, out);
            break;
    }
    CUDA_CHECK(cudaGetLastError());
}

// Row-major y [n_tokens, n_rows] = x [n_tokens, n_cols] · W[n_rows, n_cols]ᵀ is,
// in cuBLAS's column-major terms, Y (n_rows × n_tokens) = Wᵀ · X with W read
// as an n_cols × n_rows matrix (lda = n_cols) and transposed.
void gemm(const DeviceMatrix& w, const float* x, int n_tokens, float* y, bool accumulate, const MatmulContext& ctx) {
    const float alpha = 1.0f, beta = accumulate ? 1.0f : 0.0f;
    if (w.type == DeviceType::f32) {
        CUBLAS_CHECK(cublas_api().sgemm(ctx.cublas, CUBLAS_OP_T, CUBLAS_OP_N, w.n_rows, n_tokens, w.n_cols, &alpha,
                                        static_cast<const float*>(w.values), w.n_cols, x, w.n_cols, &beta, y, w.n_rows));
        return;
    }
    const std::size_t fit = ctx.tile ? ctx.tile_floats / static_cast<std::size_t>(w.n_cols) : 0;
    const int tile_rows = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(w.n_rows), fit));
    if (tile_rows < 1)
        throw Error("cuda matmul: no scratch tile for a row of " + std::to_string(w.n_cols) +
                    " columns (the backend sizes it for the widest matrix)");
    for (int r0 = 0; r0 < w.n_rows; r0 += tile_rows) {
        const int rows = std::min(tile_rows, w.n_rows - r0);
        dequantize_rows(w, r0, rows, ctx.tile, ctx.stream);
        // Stream order keeps the next tile's dequantization after this GEMM's reads.
        CUBLAS_CHECK(cublas_api().sgemm(ctx.cublas, CUBLAS_OP_T, CUBLAS_OP_N, rows, n_tokens, w.n_cols, &alpha, ctx.tile,
                                        w.n_cols, x, w.n_cols, &beta, y + r0, w.n_rows));
    }
}

}  // namespace

void matmul(const DeviceMatrix& w, const float* x, int n_tokens, float* y, bool accumulate, const MatmulContext& ctx) {
    if (n_tokens <= 0 || w.n_rows <= 0) return;
    if (n_tokens <= kGemvMaxTokens) {
        float* const ys[1] = {y};
        launch_gemv(w.type, gemv_job(&w, ys, 1, accumulate), x, n_tokens, ctx.stream);
    } else {
        gemm(w, x, n_tokens, y, accumulate, ctx);
    }
}

void matmul_many(const DeviceMatrix* ws, float* const* ys, int n_mats, const float* x, int n_tokens,
                 const MatmulContext& ctx) {
    if (n_tokens <= 0 || n_mats <= 0) return;
    bool fuse = n_tokens <= kGemvMaxTokens && n_mats <= kMaxMats;
    for (int m = 1; m < n_mats && fuse; ++m) fuse = ws[m].type == ws[0].type && ws[m].n_cols == ws[0].n_cols;
    if (fuse) {
        launch_gemv(ws[0].type, gemv_job(ws, ys, n_mats, false), x, n_tokens, ctx.stream);
        return;
    }
    for (int m = 0; m < n_mats; ++m) matmul(ws[m], x, n_tokens, ys[m], false, ctx);
}

}  // namespace sixstep::gpu
