// Matrix products of the forward pass: y = x · Wᵀ for a weight matrix stored
// in a GGUF file (F32, F16, Q8_0 or Q4_0), without dequantizing it.
//
// W has n_rows (outputs) rows of n_cols (inputs), row-major as in GGUF/ggml:
// ne[0] = n_cols is the contiguous dimension. x holds n_tokens rows of n_cols
// floats; y receives n_tokens rows of n_rows floats.
//
// How it stays fast:
// - every output is a dot product of one weight row and one activation row,
//   and both are contiguous, so the inner loop is a plain SIMD stream;
// - a tile of R weight rows × C tokens is computed at once, so each weight
//   vector loaded from memory is used C times and each activation vector R
//   times (decode has C = 1 and is bound by the memory read of W);
// - for quantized weights the activation rows are quantized to Q8_0 once per
//   matmul and the products are int8 × int8 → int32 (AVX2 maddubs, or VNNI
//   dpbusd where present), scaled per block of 32;
// - output rows are split across the thread pool, each thread with its own
//   slice of W, so the threads never write the same cache line of y twice.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "pipeline/llm/gguf/ggml_type.h"
#include "pipeline/llm/gguf/weight_matrix.h"

namespace sixstep::llm {

class ThreadPool;

// Activations quantized to Q8_0 blocks, for quantized matmuls: scales are
// kept as float (not fp16) since they are made once and read many times.
struct QuantizedActivations {
    int n_rows = 0, n_cols = 0, n_blocks = 0;  // n_blocks per row
    std::vector<std::int8_t> qs;               // [n_rows, n_cols]
    std::vector<float> d;                      // [n_rows, n_blocks]
    void quantize(const float* x, int rows, int cols);
};

// Scratch reused across calls (one per forward context).
struct MatmulScratch {
    QuantizedActivations q8;
};

// y[t, o] = Σ_i W[o, i] · x[t, i]. pool may be null (single-threaded).
void matmul(const WeightMatrix& w, const float* x, int n_tokens, float* y, ThreadPool* pool, MatmulScratch& scratch);

// Several matrices applied to the same input (Q, K, V; gate, up) in one
// parallel region: ys[m][t, o] = Σ_i ws[m][o, i] · x[t, i].
void matmul_many(const WeightMatrix* const* ws, float* const* ys, int n_mats, const float* x, int n_tokens,
                 ThreadPool* pool, MatmulScratch& scratch);

// The oracle: dequantizes one weight row at a time and accumulates in double.
void matmul_ref(const WeightMatrix& w, const float* x, int n_tokens, float* y);

// Q8_0 × Q8_0 dot product over n_blocks blocks (weights from the file,
// activations quantized with QuantizedActivations).
float dot_q8_0(const block_q8_0* w, const std::int8_t* xq, const float* xd, int n_blocks);
float dot_q4_0(const block_q4_0* w, const std::int8_t* xq, const float* xd, int n_blocks);

}  // namespace sixstep::llm
