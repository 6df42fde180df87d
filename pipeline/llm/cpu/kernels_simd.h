// The SIMD kernel table: the hot loops of the CPU backend, compiled once per
// instruction set and called through function pointers chosen at run time.
//
//   kernels_scalar.cpp   no flags (the x86-64 baseline, or any CPU)
//   kernels_avx2.cpp     -mavx2 -mfma -mf16c
//   kernels_avx512.cpp   -mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx512vnni
//
// Each of them includes kernels_simd.inc inside a namespace of its own, so
// one source holds the algorithms and the compiler flags pick the vector
// width. matmul.cpp and kernels.cpp call simd_kernels(), which returns the
// table of the level cpu_simd() chose. Internal to pipeline/llm/cpu.
#pragma once
#include <cstddef>
#include <cstdint>

#include "pipeline/llm/cpu/cpu_simd.h"
#include "pipeline/llm/cpu/matmul.h"
#include "pipeline/llm/gguf/interleaved_rows.h"

namespace sixstep::llm {

// Activation rows quantized to Q8_0 (see QuantizedActivations), as pointers.
struct Q8Rows {
    const std::int8_t* qs = nullptr;  // [n_tokens, n_cols]
    const float* d = nullptr;         // [n_tokens, n_blocks]
    int n_cols = 0, n_blocks = 0;
    const float* s = nullptr;         // [n_tokens, n_blocks]: d · Σ qs of each block
};

// Activation rows packed for the GEMM: groups of gemm_tokens tokens, each
// group [n_cols][gemm_tokens] (the token index fastest), zero past the last
// token, so that one vector load reads one column of gemm_tokens tokens.
struct PackedRows {
    const float* data = nullptr;  // [n_groups, n_cols, gemm_tokens]
    int n_cols = 0, n_groups = 0;
};

// Which matmul path a batch of n tokens takes, for one kind of weight: the
// one-row dot products below tile_min_tokens, tile_rows_float from there,
// the GEMM from gemm_min_tokens. The crossovers are measured (see [TABLE] in
// kernels_simd.inc) and differ by weight type and level.
struct MatmulPaths {
    int tile_min_tokens = 0;  // batches of at least this many tokens use tile_rows_float (0: never)
    int tile_min_tokens_in_cache = 0;  // the same for weights that stay in cache (matmul.h)
    int gemm_min_tokens = 0;  // batches of at least this many tokens use the GEMM (0: never)
};

struct SimdKernels {
    CpuSimd level = CpuSimd::scalar;
    int row_grain = 1;        // rows per unit of parallel work: a multiple of every row tile below, and of 8 (interleaved rows)
    int gemm_tokens = 0;      // tokens per packed group of the GEMM (0: no GEMM at this level)
    int gemm_rows = 0;        // rows per GEMM tile: the per-thread buffer holds gemm_rows × n_cols floats
    int tile_rows = 1;        // rows per tile of tile_rows_float
    MatmulPaths f32;          // F32 weights
    MatmulPaths f16;          // F16 weights
    MatmulPaths quant;        // Q8_0 and Q4_0 weights (no tile_rows_float: tile_min_tokens 0)
    MatmulPaths q4_0x8;       // Q4_0 weights with interleaved rows (WeightMatrix::interleaved)
    MatmulPaths q8_0x8;       // Q8_0 weights with interleaved rows

    // ---- matmul: rows [r0, r1) of y[n_tokens, w.n_rows] ---------------------------
    // Dot-product tiles (decode, small batches); F32/F16 weights.
    void (*dot_rows_float)(const WeightMatrix& w, const float* x, int n_tokens, float* y, int r0, int r1) = nullptr;
    // Tiles of tile_rows rows × several tokens (batches below the GEMM); F32/F16
    // weights, r1 - r0 a multiple of tile_rows.
    void (*tile_rows_float)(const WeightMatrix& w, const float* x, int n_tokens, float* y, int r0, int r1) = nullptr;
    // Dot-product tiles on int8; Q8_0/Q4_0 weights, activations in Q8_0.
    // one_stream: interleaved rows one group of eight at a time, also at
    // AVX-512 (weights streamed from memory; matmul.h).
    void (*dot_rows_quant)(const WeightMatrix& w, const Q8Rows& x, int n_tokens, float* y, int r0, int r1,
                           bool one_stream) = nullptr;
    // The GEMM (prefill): wbuf holds gemm_rows × n_cols floats of this thread.
    void (*gemm_rows_fn)(const WeightMatrix& w, const PackedRows& x, int n_tokens, float* y, int r0, int r1,
                         float* wbuf) = nullptr;
    // Packs tokens [g·gemm_tokens, (g+1)·gemm_tokens) of x into group g of out.
    void (*pack_group)(const float* x, int n_cols, int n_tokens, int g, float* out) = nullptr;
    // Quantizes rows [r0, r1) of x to Q8_0: qs [rows, n_cols], d [rows, n_cols/32],
    // and, unless sums is null, each block's d · Σ qs into sums [rows, n_cols/32].
    void (*quantize_q8_0)(const float* x, int n_cols, std::int8_t* qs, float* d, float* sums, int r0, int r1) = nullptr;

    // ---- attention (see kernels.h) -------------------------------------------------
    void (*attn_scores)(const float* q, int n_qh, int hd, const float* k, std::size_t k_stride, int n_pos, float scale,
                        float* out, std::size_t out_stride) = nullptr;
    void (*attn_values)(const float* a, std::size_t a_stride, int n_qh, const float* v, std::size_t v_stride, int n_pos,
                        int hd, float* out) = nullptr;

    // ---- row kernels (see kernels.h) -----------------------------------------------
    float (*dot_f32)(const float* a, const float* b, int n) = nullptr;
    float (*dot_f16)(const std::uint16_t* w, const float* x, int n) = nullptr;
    void (*axpy)(float* y, float a, const float* x, int n) = nullptr;
    void (*fp16_to_fp32_row)(const std::uint16_t* x, float* y, int n) = nullptr;
    void (*rmsnorm)(float* y, const float* x, const float* w, int n, float eps) = nullptr;
    void (*softmax)(float* x, int n) = nullptr;
    void (*swiglu)(float* gate, const float* up, int n) = nullptr;
};

// The table of the level cpu_simd() chose.
const SimdKernels& simd_kernels();

// One table per compiled level (the x86 ones exist only in x86 builds).
const SimdKernels& simd_kernels_scalar();
const SimdKernels& simd_kernels_avx2();
const SimdKernels& simd_kernels_avx512();

}  // namespace sixstep::llm
