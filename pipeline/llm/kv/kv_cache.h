// KvCache: a paged key/value cache, in the spirit of vLLM's PagedAttention.
//
// Attention at position p needs the keys and values of every earlier position
// of the same sequence. Instead of one contiguous [n_ctx] slab per sequence,
// memory is a pool of fixed-size blocks (block_size positions each); every
// sequence owns a block table mapping its logical block i to a physical block.
// Sequences grow one block at a time and give their blocks back when freed,
// so many sequences of different lengths share one pool without fragmentation.
//
// The cache is two halves joined here:
//   KvBlocks   (kv_blocks.h)   which sequence owns which block: block tables,
//                              free list, reference counts, copy-on-write.
//                              The same for every backend.
//   KvStorage  (kv_storage.h)  the blocks' memory where the backend computes,
//                              allocated block by block on first use.
// bytes per token = 2 × n_layer × n_head_kv × head_dim × bytes per element.
//
//     KvCache kv({.n_layer = 12, .n_head_kv = 2, .head_dim = 64, .n_ctx = 512});
//     int s = kv.add_sequence();
//     kv.reserve(s, n_prompt);          // throws "KV cache full: …" when out of blocks
//     kv.commit(s, n_prompt);           // after the forward pass wrote them
//     float* k = kv.k(layer, s, pos);   // host storage: n_head_kv * head_dim floats
//     kv.free_sequence(s);              // blocks return to the pool
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/llm/kv/kv_blocks.h"
#include "pipeline/llm/kv/kv_storage.h"

namespace sixstep::llm {

struct KvCacheParams {
    int n_layer = 0;       // transformer layers
    int n_head_kv = 0;     // key/value heads per layer (GQA: fewer than query heads)
    int head_dim = 0;      // floats per head
    int n_ctx = 0;         // most positions one sequence may hold
    int block_size = default_block_size;  // positions per block, >= 1
    int n_blocks = 0;      // blocks in the pool; 0 → enough for one full sequence (n_ctx)

    KvShape shape() const { return {n_layer, n_head_kv, head_dim, static_cast<int>(sizeof(float))}; }
};

struct KvCacheStats {
    int n_blocks = 0;              // blocks in the pool
    int n_blocks_used = 0;         // blocks owned by some sequence (or a prefix cache)
    int n_blocks_shared = 0;       // blocks with more than one owner
    int block_size = 0;            // positions per block
    int n_sequences = 0;           // live sequences
    long long n_tokens = 0;        // positions stored, summed over sequences
    std::size_t bytes_per_token = 0;        // all layers, K and V
    std::size_t bytes_per_token_layer = 0;  // one layer, K and V
    std::size_t bytes_total = 0;            // the whole pool, if every block were allocated
    std::size_t bytes_used = 0;             // blocks in use, all layers
    std::size_t bytes_allocated = 0;        // memory actually allocated (grows on demand)
    std::vector<std::size_t> bytes_used_per_layer;  // blocks in use, per layer
};

class KvCache {
public:
    // storage: null → host memory (the CPU backend's).
    explicit KvCache(const KvCacheParams& params, std::unique_ptr<KvStorage> storage = nullptr);
    KvCache(const KvCache&) = delete;
    KvCache& operator=(const KvCache&) = delete;

    const KvCacheParams& params() const { return params_; }
    int kv_dim() const { return params_.n_head_kv * params_.head_dim; }

    KvBlocks& blocks() { return blocks_; }
    const KvBlocks& blocks() const { return blocks_; }
    KvStorage& storage() { return *storage_; }
    const KvStorage& storage() const { return *storage_; }
    // The host storage; throws when this cache lives on another device.
    HostKvStorage& host();
    const HostKvStorage& host() const;

    // Sequences. Ids are small integers, reused after free_sequence.
    int add_sequence() { return blocks_.add_sequence(); }
    int fork_sequence(int src) { return blocks_.fork_sequence(src); }
    void free_sequence(int seq) { blocks_.free_sequence(seq); }
    bool has_sequence(int seq) const { return blocks_.has_sequence(seq); }
    void clear() { blocks_.clear(); }

    // Positions 0..n_tokens(seq)-1 are filled. reserve() makes positions
    // [pos_begin, n_total) writable (allocating blocks, copying shared ones),
    // throwing "KV cache full: …" when the pool or the context runs out;
    // commit() records that positions up to n_total-1 now hold data.
    void reserve(int seq, int n_total) { reserve(seq, n_tokens(seq), n_total); }
    void reserve(int seq, int pos_begin, int n_total);
    void commit(int seq, int n_total) { blocks_.commit(seq, n_total); }
    int n_tokens(int seq) const { return blocks_.n_tokens(seq); }
    // Drops positions >= n (keeps blocks that are still needed).
    void truncate(int seq, int n) { blocks_.truncate(seq, n); }
    const std::vector<int>& block_table(int seq) const { return blocks_.block_table(seq); }

    // Host storage: one position's K or V row (kv_dim floats) in one layer.
    // The position must have been reserved.
    float* k(int layer, int seq, int pos) { return row(layer, seq, pos, 0); }
    float* v(int layer, int seq, int pos) { return row(layer, seq, pos, 1); }
    const float* k(int layer, int seq, int pos) const { return const_cast<KvCache*>(this)->row(layer, seq, pos, 0); }
    const float* v(int layer, int seq, int pos) const { return const_cast<KvCache*>(this)->row(layer, seq, pos, 1); }

    KvCacheStats stats() const;
    int n_free_blocks() const { return blocks_.n_free(); }

private:
    float* row(int layer, int seq, int pos, int kv);

    KvCacheParams params_;
    KvBlocks blocks_;
    std::unique_ptr<KvStorage> storage_;
    HostKvStorage* host_ = nullptr;  // storage_, when it is host memory
    std::vector<BlockCopy> copies_;  // scratch for reserve()
};

}  // namespace sixstep::llm
