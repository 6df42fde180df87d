// KvBlocks: the bookkeeping half of the paged KV cache — which sequence owns
// which block — with no memory of its own, so every backend (host memory for
// the CPU, device memory for a GPU) shares the same block tables.
//
// Memory is a pool of n_blocks fixed-size blocks of block_size positions. A
// sequence's block table maps its logical block i (positions i·block_size …)
// to a physical block id. Blocks carry reference counts: a block may appear
// in several tables (a shared prompt prefix, a forked sequence), and returns
// to the free list when its last owner lets go. Writing into a shared block
// first gives the writer a private copy (copy-on-write): reserve() reports
// the copies it decided on, and the storage performs them.
//
//     KvBlocks b({.n_ctx = 512, .block_size = 16, .n_blocks = 64});
//     int s = b.add_sequence();
//     b.reserve(s, 0, 20, copies);   // two blocks; throws "KV cache full: …"
//     b.commit(s, 20);               // positions 0..19 now hold data
//     int t = b.fork_sequence(s);    // shares both blocks (refcount 2)
//     b.reserve(t, 20, 21, copies);  // block 1 is shared: copies = {{old, new}}
//     b.free_sequence(s);            // blocks whose count drops to 0 are free again
#pragma once
#include <cstddef>
#include <span>
#include <vector>

namespace sixstep::llm {

// The most positions one block may hold. Real servers use 16-32; a block
// past this is a typo, and its offsets (block × block size × row) would
// overflow long before the memory ran out.
inline constexpr int max_block_size = 4096;
// Positions per block unless a caller says otherwise (vLLM's default too).
inline constexpr int default_block_size = 16;
// The most blocks a serving pool may have (bookkeeping per block; more is a
// typo, not a cache), and its size unless a caller says otherwise.
inline constexpr int max_kv_blocks = 1 << 20;
inline constexpr int default_kv_blocks = 256;
// A serving pool's shape as traffic and the server take it: 1 ..
// max_kv_blocks blocks of 1 .. max_block_size positions. Throws
// sixstep::Error naming the value out of range.
void check_kv_pool(int kv_blocks, int block_size);

struct KvBlocksParams {
    int n_ctx = 0;         // most positions one sequence may hold, >= 1
    int block_size = default_block_size;  // positions per block, 1 .. max_block_size
    int n_blocks = 0;      // blocks in the pool; 0 → enough for one full sequence (n_ctx)
};

// A block to copy before writing: the writer's table now holds dst.
struct BlockCopy {
    int src = 0;
    int dst = 0;
};

class KvBlocks {
public:
    explicit KvBlocks(const KvBlocksParams& params);

    const KvBlocksParams& params() const { return params_; }
    int block_size() const { return params_.block_size; }
    int n_blocks() const { return params_.n_blocks; }
    int n_free() const { return static_cast<int>(free_.size()); }
    int n_used() const { return params_.n_blocks - n_free(); }
    int n_shared() const;  // blocks with more than one owner
    int ref_count(int block) const;
    // Free blocks; the next one handed out is the last (a stack).
    const std::vector<int>& free_list() const { return free_; }

    // Sequences. Ids are small integers, reused after free_sequence.
    int add_sequence();
    // A new sequence holding the same positions as src, sharing its blocks.
    int fork_sequence(int src);
    void free_sequence(int seq);
    bool has_sequence(int seq) const;
    void clear();  // frees every sequence
    std::vector<int> sequences() const;  // live ids, ascending

    // Makes positions [pos_begin, pos_end) of seq writable: allocates the
    // blocks they need and gives seq private copies of shared blocks they
    // touch (appended to `copies`). Throws "KV cache full: …" when the pool
    // or the context runs out, leaving the tables as they were.
    void reserve(int seq, int pos_begin, int pos_end, std::vector<BlockCopy>& copies);
    // Records that positions up to n_total-1 hold data.
    void commit(int seq, int n_total);
    int n_tokens(int seq) const;
    // Drops positions >= n; blocks no longer needed lose this owner.
    void truncate(int seq, int n);
    // Starts an empty sequence from existing full blocks (a cached prefix):
    // each gains an owner, and the sequence holds blocks.size()·block_size
    // positions.
    void adopt(int seq, std::span<const int> blocks);

    // Owners other than sequences (a prefix cache keeping blocks for later
    // requests) hold blocks with retain() and let go with release().
    void retain(int block);
    void release(int block);

    const std::vector<int>& block_table(int seq) const;
    int blocks_for(int n_positions) const { return (n_positions + params_.block_size - 1) / params_.block_size; }

    // Called with each block id the first time it leaves the free list, so
    // storage can allocate on demand.
    using OnFirstUse = void (*)(void* ctx, int block);
    void set_on_first_use(OnFirstUse fn, void* ctx) { on_first_use_ = fn, on_first_use_ctx_ = ctx; }

private:
    struct Sequence {
        bool live = false;
        int n_tokens = 0;
        std::vector<int> blocks;
    };
    Sequence& sequence(int seq);
    const Sequence& sequence(int seq) const;
    int take_block();

    KvBlocksParams params_;
    std::vector<int> free_;        // free physical blocks (a stack: low ids first)
    std::vector<int> refs_;        // [n_blocks] owners per block
    std::vector<char> touched_;    // [n_blocks] handed out at least once
    std::vector<Sequence> seqs_;
    OnFirstUse on_first_use_ = nullptr;
    void* on_first_use_ctx_ = nullptr;
};

}  // namespace sixstep::llm
