// KvSnapshot: the KV pool at one moment, as plain data a panel can draw and a
// test can check — which request owns which block, which blocks are shared
// (a cached prefix adopted by several requests), which only the prefix cache
// keeps, how full each block is, the free list in the order it hands blocks
// out, and, under the contiguous layout, each request's reserved run.
// Under the contiguous layout the blocks are laid out as the reservations
// place them: a request's tokens at the start of its own run, the rest of
// the run reserved and empty (the simulation keeps the real keys and values
// in paged blocks; the map shows the memory the layout would use).
//
//     KvSnapshot s = scheduler.kv_snapshot();
//     for (const KvBlockView& b : s.blocks)      // [n_blocks]
//         draw(b.owners, b.refs > 1, b.cached, b.filled / double(s.block_size));
#pragma once
#include <span>
#include <vector>

#include "pipeline/llm/kv/kv_blocks.h"
#include "pipeline/serving/contiguous_allocator.h"
#include "pipeline/serving/prefix_cache.h"

namespace sixstep::serving {

struct KvBlockView {
    int refs = 0;             // owners: sequences plus the prefix cache; 0 = free
    int filled = 0;           // positions holding keys and values, 0 .. block_size
    bool cached = false;      // kept by the prefix cache
    std::vector<int> owners;  // request ids whose block tables hold it, ascending
    int reserved_for = -1;    // contiguous layout: the request whose run it is in; -1 = none
};

struct KvTableView {
    int request = -1;         // request id
    int n_tokens = 0;         // positions filled
    std::vector<int> blocks;  // logical block i → physical block
};

struct KvSnapshot {
    double t_ms = 0;                          // virtual time
    int n_blocks = 0;                         // blocks in the pool
    int block_size = 0;                       // positions per block
    std::vector<KvBlockView> blocks;          // [n_blocks]
    std::vector<int> free_list;               // free blocks; the next handed out is the last
    std::vector<KvTableView> tables;          // running requests, by request id
    bool contiguous = false;                  // the contiguous layout: requests reserve runs up front
    std::vector<ContiguousRegion> regions;    // contiguous layout: reserved runs (in blocks), by address

    int n_used() const;                       // blocks with an owner
    int n_shared() const;                     // blocks with more than one owner
    int n_cached_only() const;                // blocks only the prefix cache holds
    long long n_filled() const;               // positions holding keys and values, each block once
    // Positions set aside for requests: blocks in use (paged) or reserved
    // runs (contiguous), times the block size.
    long long n_held() const;
};

// Which request a KV sequence belongs to.
struct KvSeqOwner {
    int request = -1;
    int seq = -1;
};

// A snapshot of blocks; cache and contiguous are optional (null: none).
KvSnapshot snapshot_kv(const llm::KvBlocks& blocks, std::span<const KvSeqOwner> owners, const PrefixCache* cache,
                       const ContiguousAllocator* contiguous, double t_ms);

}  // namespace sixstep::serving
