// KvCache: a paged key/value cache, in the spirit of vLLM's PagedAttention.
//
// Attention at position p needs the keys and values of every earlier position
// of the same sequence. Instead of one contiguous [n_ctx] slab per sequence,
// memory is a pool of fixed-size blocks (block_size positions each); every
// sequence owns a block table mapping its logical block i to a physical block.
// Sequences grow one block at a time and give their blocks back when freed,
// so many sequences of different lengths share one pool without fragmentation.
//
// One physical block holds all layers (float32):
//     block b: for layer l: K [block_size, n_head_kv * head_dim]
//                           V [block_size, n_head_kv * head_dim]
// so bytes per token = 2 × n_layer × n_head_kv × head_dim × sizeof(float).
//
//     KvCache kv({.n_layer = 12, .n_head_kv = 2, .head_dim = 64, .n_ctx = 512});
//     int s = kv.add_sequence();
//     kv.reserve(s, n_prompt);          // throws "KV cache full: …" when out of blocks
//     float* k = kv.k(layer, s, pos);   // n_head_kv * head_dim floats
//     kv.free_sequence(s);              // blocks return to the pool
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sixstep::llm {

struct KvCacheParams {
    int n_layer = 0;       // transformer layers
    int n_head_kv = 0;     // key/value heads per layer (GQA: fewer than query heads)
    int head_dim = 0;      // floats per head
    int n_ctx = 0;         // most positions one sequence may hold
    int block_size = 16;   // positions per block, >= 1
    int n_blocks = 0;      // blocks in the pool; 0 → enough for one full sequence (n_ctx)
};

struct KvCacheStats {
    int n_blocks = 0;              // blocks in the pool
    int n_blocks_used = 0;         // blocks owned by some sequence
    int block_size = 0;            // positions per block
    int n_sequences = 0;           // live sequences
    long long n_tokens = 0;        // positions stored, summed over sequences
    std::size_t bytes_per_token = 0;        // all layers, K and V
    std::size_t bytes_per_token_layer = 0;  // one layer, K and V
    std::size_t bytes_total = 0;            // the whole pool
    std::size_t bytes_used = 0;             // blocks in use, all layers
    std::vector<std::size_t> bytes_used_per_layer;  // blocks in use, per layer
};

class KvCache {
public:
    explicit KvCache(const KvCacheParams& params);

    const KvCacheParams& params() const { return params_; }
    int kv_dim() const { return kv_dim_; }  // n_head_kv * head_dim

    // Sequences. Ids are small integers, reused after free_sequence.
    int add_sequence();
    void free_sequence(int seq);
    bool has_sequence(int seq) const;
    void clear();  // frees every sequence

    // Positions 0..n_tokens(seq)-1 are filled. reserve() makes room for
    // positions up to n_total-1 (allocating blocks), throwing
    // "KV cache full: …" when the pool or the context runs out; commit()
    // records that positions up to n_total-1 now hold data.
    void reserve(int seq, int n_total);
    void commit(int seq, int n_total);
    int n_tokens(int seq) const;
    // Drops positions >= n (keeps blocks that are still needed).
    void truncate(int seq, int n);

    // Pointers to one position's K or V row (kv_dim floats) in one layer.
    // The position must have been reserved.
    float* k(int layer, int seq, int pos) { return row(layer, seq, pos, 0); }
    float* v(int layer, int seq, int pos) { return row(layer, seq, pos, 1); }
    const float* k(int layer, int seq, int pos) const { return const_cast<KvCache*>(this)->row(layer, seq, pos, 0); }
    const float* v(int layer, int seq, int pos) const { return const_cast<KvCache*>(this)->row(layer, seq, pos, 1); }

    // For the fast path: the block table of a sequence and the base of a
    // block's K/V rows in one layer ([block_size, kv_dim], row-major).
    const std::vector<int>& block_table(int seq) const;
    const float* block_k(int block, int layer) const { return data_.data() + block_offset(block, layer, 0); }
    const float* block_v(int block, int layer) const { return data_.data() + block_offset(block, layer, 1); }

    KvCacheStats stats() const;
    int n_free_blocks() const { return static_cast<int>(free_.size()); }

private:
    struct Sequence {
        bool live = false;
        int n_tokens = 0;
        std::vector<int> blocks;
    };
    std::size_t block_offset(int block, int layer, int kv) const {
        return (static_cast<std::size_t>(block) * params_.n_layer * 2 + static_cast<std::size_t>(layer) * 2 + kv) *
               static_cast<std::size_t>(params_.block_size) * kv_dim_;
    }
    float* row(int layer, int seq, int pos, int kv);
    Sequence& sequence(int seq);
    const Sequence& sequence(int seq) const;

    KvCacheParams params_;
    int kv_dim_ = 0;
    std::vector<float> data_;
    std::vector<int> free_;  // free physical blocks (a stack)
    std::vector<Sequence> seqs_;
};

}  // namespace sixstep::llm
