// Matrix products of the forward pass: y = x · Wᵀ for a weight matrix stored
// in a GGUF file (F32, F16, Q8_0 or Q4_0), without dequantizing it as a whole.
//
// W has n_rows (outputs) rows of n_cols (inputs), row-major as in GGUF/ggml:
// ne[0] = n_cols is the contiguous dimension. x holds n_tokens rows of n_cols
// floats; y receives n_tokens rows of n_rows floats.
//
// How it stays fast (the kernels are in kernels_simd.inc, one copy per
// instruction set, picked at run time: cpu_simd.h):
// - decode and small batches compute dot products of one weight row and C
//   activation rows, all contiguous: each weight vector loaded from memory
//   serves C tokens, and W is read row after row as one sequential stream
//   (decode has C = 1 and is bound by that read); from 4–5 (F32) or 6 (F16)
//   tokens up to the GEMM, F32 and F16 weights go through tiles of several
//   rows × several tokens instead, which load each activation vector once
//   per tile of rows;
// - for quantized weights there, the activation rows are quantized to Q8_0
//   once per matmul and the products are int8 × int8 → int32 (AVX2 maddubs,
//   or VNNI dpbusd), scaled per block of 32;
// - larger batches (prefill) use a GEMM with the tokens in the vector lanes
//   (from a batch size that depends on the weight type): x is
//   packed once per matmul as columns of 16 or 32 tokens, and each weight is
//   broadcast against a column; F16 rows are converted and Q8_0/Q4_0 rows
//   dequantized to F32 once per tile of rows, not once per token (on AVX2,
//   without VNNI, an F32 FMA costs less per product than int8 maddubs with
//   its scales; the activations then stay in F32 too);
// - a model whose weights all fit in one core's L2 cache (a draft model
//   for speculative decoding) is not read from memory at all after its first
//   token: the reason for the one-row stream above is gone, and decode goes
//   through the tiles of several rows too, whose horizontal sums are shared
//   (WeightHome::l2; the forward pass decides from the model's size);
// - at AVX-512 the interleaved Q4_0/Q8_0 rows go sixteen at a time, two
//   groups of eight side by side in each register, unless the model is
//   streamed from memory (WeightHome::memory): there the two groups are two
//   streams, and one at a time decoded faster (below, kernels_simd.inc);
// - output rows are handed to the threads in chunks from a shared counter
//   (thread_pool.h), so a thread that the OS preempts does not hold the
//   others back; each output is computed by one tile whatever the split, so
//   results are the same bits for any number of threads.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "pipeline/core/aligned.h"
#include "pipeline/llm/cpu/thread_pool.h"
#include "pipeline/llm/gguf/ggml_type.h"
#include "pipeline/llm/gguf/weight_matrix.h"

namespace sixstep::llm {

// Where a model's weights sit while decode passes read them, token after
// token: in one core's L2, in a larger cache (or not known), or in memory.
enum class WeightHome { l2, cache, memory };

// Scratch reused across calls (one per forward context).
struct MatmulScratch {
    AlignedVector<std::int8_t> q8_qs;        // activations in Q8_0: (n_tokens, n_cols)
    AlignedVector<float> q8_d;               // their scales: (n_tokens, n_cols / 32)
    AlignedVector<float> q8_s;               // their blocks' sums times the scales: (n_tokens, n_cols / 32)
    AlignedVector<float> packed;             // activations packed for the GEMM
    std::vector<AlignedVector<float>> rows;  // per thread: weight rows converted to F32
};

// y[t, o] = Σ_i W[o, i] · x[t, i]. pool may be null (single-threaded).
void matmul(const WeightMatrix& w, const float* x, int n_tokens, float* y, ThreadPool* pool, MatmulScratch& scratch,
            WeightHome home = WeightHome::cache);

// Several matrices applied to the same input (Q, K, V; gate, up) in one
// parallel region: ys[m][t, o] = Σ_i ws[m][o, i] · x[t, i].
void matmul_many(const WeightMatrix* const* ws, float* const* ys, int n_mats, const float* x, int n_tokens,
                 ThreadPool* pool, MatmulScratch& scratch, WeightHome home = WeightHome::cache);

// The same matmul written as steps of a list that a ThreadPool runs
// (ThreadPool::run) or a caller runs in order: the activations' conversion,
// then the rows. The checks and the choice of each matrix's path happen
// here; the steps read x and write ys when they run, and borrow scratch
// until then. At most 4 matrices.
void matmul_steps(ThreadPool::Steps& steps, const WeightMatrix* const* ws, float* const* ys, int n_mats,
                  const float* x, int n_tokens, int n_threads, MatmulScratch& scratch, WeightHome home = WeightHome::cache);

// The oracle: dequantizes one weight row at a time and accumulates in double.
void matmul_ref(const WeightMatrix& w, const float* x, int n_tokens, float* y);

}  // namespace sixstep::llm
