// PrefixCache: KV blocks kept for later requests that start with the same
// tokens (a shared system prompt, a conversation's history, a preempted
// request coming back) — vLLM's automatic prefix caching, on the block
// manager's reference counts (llm/kv/kv_blocks.h).
//
// Only full blocks are cached. Block i of a sequence is keyed by a hash of its
// own block_size tokens and of the hash of block i−1 — so the key stands for
// every token from position 0 to the block's end, and a block is reused only
// where everything before it matches too (attention at a position depends on
// every earlier token). The cache holds one reference to each cached block
// (KvBlocks::retain); a request that matches adopts the blocks (KvBlocks::adopt),
// which adds an owner each, and skips computing those positions. Full blocks
// are never written again, so sharing them is safe; the cache also keeps each
// block's tokens and its parent's hash and compares them on a match, so a hash
// collision cannot hand out the wrong keys and values.
//
// When the pool runs short, blocks that only the cache holds are freed, least
// recently used first; among blocks used at the same moment the deepest goes
// first, so a prefix is trimmed from its end and its head stays reachable.
//
//     PrefixCache cache(kv.blocks());
//     std::vector<std::uint64_t> h;
//     extend_block_hashes(tokens, kv.blocks().block_size(), h);
//     std::vector<int> hit = cache.match(tokens, h, max_blocks);   // blocks of the longest cached prefix
//     kv.blocks().adopt(seq, hit);                                  // share them: hit.size()·block_size positions
//     cache.touch(hit);
//     … after a forward pass filled more blocks …
//     cache.insert(tokens, h, kv.block_table(seq), n_full_blocks);
//     cache.evict(3);                                               // free 3 blocks nobody else holds
#pragma once
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "pipeline/llm/kv/kv_blocks.h"

namespace sixstep::serving {

// The key of a block: its tokens and the key of the block before it (0 for
// the first block).
std::uint64_t block_hash(std::uint64_t parent, std::span<const int> block_tokens);
// Appends to `hashes` the key of every full block of `tokens` not yet hashed
// (hashes.size() blocks are already): a request's keys grow as it generates.
void extend_block_hashes(std::span<const int> tokens, int block_size, std::vector<std::uint64_t>& hashes);

struct PrefixCacheStats {
    long long n_inserted = 0;  // blocks ever cached
    long long n_evicted = 0;   // blocks freed to make room
};

class PrefixCache {
public:
    explicit PrefixCache(llm::KvBlocks& blocks);
    ~PrefixCache();  // lets go of every block it holds
    PrefixCache(const PrefixCache&) = delete;
    PrefixCache& operator=(const PrefixCache&) = delete;

    // The physical blocks that hold the longest cached run of tokens' first
    // full blocks, at most max_blocks of them (hashes: extend_block_hashes of
    // tokens). Looking changes nothing: touch() the blocks a request adopts.
    std::vector<int> match(std::span<const int> tokens, std::span<const std::uint64_t> hashes, int max_blocks) const;
    // Marks cached blocks as used now (for the LRU order).
    void touch(std::span<const int> blocks);
    // Offers a sequence's first n_full blocks (table[i] holds tokens of block
    // i): each whose key is not cached yet is retained and keyed. A key
    // already cached under another physical block keeps that block.
    void insert(std::span<const int> tokens, std::span<const std::uint64_t> hashes, std::span<const int> table,
                int n_full);
    // Frees up to n blocks that only the cache holds, least recently used
    // first (deepest first among equals). Returns how many it freed.
    int evict(int n);
    void clear();  // lets go of every block

    int size() const { return static_cast<int>(by_hash_.size()); }  // blocks cached
    int n_evictable() const;                                        // of them, held by nobody else
    // Of these blocks, how many only the cache holds (matching them would
    // take them out of the evictable pool).
    int n_evictable_among(std::span<const int> blocks) const;
    bool cached(int block) const { return by_block_.count(block) != 0; }
    const PrefixCacheStats& stats() const { return stats_; }

private:
    struct Entry {
        std::uint64_t parent = 0;
        std::vector<int> tokens;   // [block_size] the block's tokens
        int block = -1;            // physical block
        int depth = 0;             // block index within its sequence
        long long last_use = 0;    // tick of the last match or insert
    };
    void drop(std::uint64_t hash);

    llm::KvBlocks& blocks_;
    std::unordered_map<std::uint64_t, Entry> by_hash_;
    std::unordered_map<int, std::uint64_t> by_block_;
    long long tick_ = 0;
    PrefixCacheStats stats_;
};

}  // namespace sixstep::serving
