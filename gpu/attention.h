// Attention over the paged KV cache, on the device.
//
// The cache's memory is CudaKvStorage's (kv_storage_cuda.h): a table of
// block base pointers, each block laid out as on the host
// (pipeline/llm/kv/kv_storage.h):
//     block b: for layer l: K [block_size, kv_dim], then V [block_size, kv_dim]
// Position p of a sequence lives in block table[p / block_size], row
// p % block_size. The block tables of the batch's sequences are uploaded
// with the batch (one flat array; token i's table starts at table_off[i]).
//
// kv_store writes each token's k and v rows into its slot; attention then
// computes, for every (token, head) pair, softmax(q·kᵀ / sqrt(head_dim)) · v
// over positions 0..pos of the token's own sequence — prefill and decode
// alike, several sequences in one batch. Grouped-query attention: query
// head h reads K/V head h / (n_head / n_head_kv).
#pragma once
#include <cuda_runtime.h>

namespace sixstep::gpu {

// The largest head the attention kernel takes (elements).
inline constexpr int kAttentionMaxHeadDim = 256;

// Where one layer's keys and values live.
struct KvLayerView {
    float* const* blocks = nullptr;  // device [n_blocks] block base pointers
    int block_size = 0;              // positions per block
    int kv_dim = 0;                  // n_head_kv · head_dim
    int layer = 0;
};

// k, v: device [n_tokens, kv_dim]. Token i goes to block slot_block[i], row
// pos[i] % block_size; slot_block[i] < 0 skips it (a later token of the same
// batch writes the same position, and the last one wins, as on the CPU).
void kv_store(const float* k, const float* v, const int* slot_block, const int* pos, int n_tokens,
              const KvLayerView& kv, cudaStream_t stream);

struct AttentionArgs {
    const float* q = nullptr;      // device [n_tokens, n_head, head_dim], after RoPE
    float* out = nullptr;          // device [n_tokens, n_head, head_dim] (kqv_out)
    float* kq = nullptr;           // device [n_tokens, n_head, kq_stride] softmax weights, or null
    int kq_stride = 0;             // entries per row of kq (the batch's longest context)
    const int* pos = nullptr;      // device [n_tokens]: token i attends to positions 0..pos[i]
    const int* table_off = nullptr;  // device [n_tokens]: where token i's block table starts in `tables`
    const int* tables = nullptr;   // device: the block tables of the batch's sequences, back to back
    int n_tokens = 0;
    int n_head = 0;
    int n_head_kv = 0;
    int head_dim = 0;              // <= kAttentionMaxHeadDim
    float scale = 1.0f;            // 1 / sqrt(head_dim)
};

// kq, when given, receives the softmax weights of positions 0..pos[i]; the
// caller zeroes the rest.
void attention(const AttentionArgs& args, const KvLayerView& kv, cudaStream_t stream);

}  // namespace sixstep::gpu
