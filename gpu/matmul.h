// Matrix products on the device: y = x · Wᵀ, the convention of
// pipeline/llm/cpu/matmul.h — W [n_rows, n_cols] (a DeviceMatrix in any of its
// types), x [n_tokens, n_cols] and y [n_tokens, n_rows] float32, row-major,
// all in device memory, queued on ctx.stream.
//
// Two paths, chosen by the number of tokens:
// - GEMV (n_tokens <= kGemvMaxTokens: decode, small batches). One warp per
//   output row streams the row once — each thread 16 bytes at a time, several
//   loads in flight, dequantized in registers — and applies it to every token
//   of the batch. Decode is bound by reading W, so this reads W exactly once
//   and nothing else of size.
// - GEMM (more tokens: prefill, large batches). cuBLAS SGEMM in float32: f32
//   weights as they are; other types first dequantized into a float scratch
//   tile of rows (ctx.tile), one tile at a time, never the whole matrix
//   unless it fits in one tile. Compute bound, so the extra pass over the
//   tile costs little next to the GEMM itself.
#pragma once
#include <cstddef>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "gpu/device_matrix.h"

namespace sixstep::gpu {

// The largest batch the GEMV path takes; larger ones go to cuBLAS.
inline constexpr int kGemvMaxTokens = 8;

struct MatmulContext {
    cudaStream_t stream = nullptr;
    cublasHandle_t cublas = nullptr;  // bound to `stream`
    float* tile = nullptr;            // scratch of tile_floats floats for the GEMM path of non-f32 weights
    std::size_t tile_floats = 0;      // at least n_cols of the widest matrix
};

// y[t, o] = Σ_i W[o, i] · x[t, i]; with accumulate, y[t, o] += that.
// Throws sixstep::Error when a GEMM needs a tile and ctx has none big enough.
void matmul(const DeviceMatrix& w, const float* x, int n_tokens, float* y, bool accumulate, const MatmulContext& ctx);

// Up to three matrices applied to the same x (Q, K, V; gate, up):
// ys[m] = x · ws[m]ᵀ. When they share type and width and the batch is small,
// one launch covers all of them, so a small matrix (K, V under GQA) does not
// leave most of the GPU idle for a launch of its own.
void matmul_many(const DeviceMatrix* ws, float* const* ys, int n_mats, const float* x, int n_tokens,
                 const MatmulContext& ctx);

}  // namespace sixstep::gpu
