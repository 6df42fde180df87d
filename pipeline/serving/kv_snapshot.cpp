#include "pipeline/serving/kv_snapshot.h"

#include <algorithm>

namespace sixstep::serving {

int KvSnapshot::n_used() const {
    return static_cast<int>(std::count_if(blocks.begin(), blocks.end(), [](const KvBlockView& b) { return b.refs > 0; }));
}

int KvSnapshot::n_shared() const {
    return static_cast<int>(std::count_if(blocks.begin(), blocks.end(), [](const KvBlockView& b) { return b.refs > 1; }));
}

int KvSnapshot::n_cached_only() const {
    return static_cast<int>(
        std::count_if(blocks.begin(), blocks.end(), [](const KvBlockView& b) { return b.cached && b.refs == 1; }));
}

long long KvSnapshot::n_filled() const {
    long long n = 0;
    for (const KvBlockView& b : blocks) n += b.filled;
    return n;
}

long long KvSnapshot::n_held() const {
    if (contiguous) {
        long long units = 0;
        for (const ContiguousRegion& r : regions) units += r.size;
        return units * block_size;
    }
    return static_cast<long long>(n_used()) * block_size;
}

namespace {

// Each request's run, from its first block: the blocks its tokens reach,
// then the reserved rest. Blocks outside every run are free.
void lay_out_contiguous(KvSnapshot& s, std::vector<ContiguousRegion> regions) {
    s.contiguous = true;
    s.regions = std::move(regions);
    s.free_list.clear();
    std::vector<KvBlockView> laid(static_cast<std::size_t>(s.n_blocks));
    for (const ContiguousRegion& r : s.regions) {
        const auto table = std::find_if(s.tables.begin(), s.tables.end(),
                                        [&](const KvTableView& t) { return t.request == r.owner; });
        const int n_tokens = table == s.tables.end() ? 0 : table->n_tokens;
        if (table != s.tables.end()) table->blocks.clear();
        for (int i = 0; i < r.size && r.begin + i < s.n_blocks; ++i) {
            const int at = r.begin + i;
            KvBlockView& v = laid[static_cast<std::size_t>(at)];
            v.reserved_for = r.owner;
            const int in_block = std::clamp(n_tokens - i * s.block_size, 0, s.block_size);
            if (in_block == 0) continue;
            v.refs = 1;
            v.filled = in_block;
            v.owners = {r.owner};
            table->blocks.push_back(at);
        }
    }
    for (int b = s.n_blocks - 1; b >= 0; --b)
        if (laid[static_cast<std::size_t>(b)].reserved_for < 0) s.free_list.push_back(b);
    s.blocks = std::move(laid);
}

}  // namespace

KvSnapshot snapshot_kv(const llm::KvBlocks& kv, std::span<const KvSeqOwner> owners, const PrefixCache* cache,
                       const ContiguousAllocator* contiguous, double t_ms) {
    KvSnapshot s;
    s.t_ms = t_ms;
    s.n_blocks = kv.n_blocks();
    s.block_size = kv.block_size();
    s.blocks.resize(static_cast<std::size_t>(s.n_blocks));
    for (int b = 0; b < s.n_blocks; ++b) {
        KvBlockView& v = s.blocks[static_cast<std::size_t>(b)];
        v.refs = kv.ref_count(b);
        v.cached = cache && cache->cached(b);
        if (v.cached) v.filled = s.block_size;  // only full blocks are cached
    }
    s.free_list = kv.free_list();
    std::vector<KvSeqOwner> sorted(owners.begin(), owners.end());
    std::sort(sorted.begin(), sorted.end(), [](const KvSeqOwner& a, const KvSeqOwner& b) { return a.request < b.request; });
    for (const KvSeqOwner& o : sorted) {
        KvTableView t;
        t.request = o.request;
        t.n_tokens = kv.n_tokens(o.seq);
        t.blocks = kv.block_table(o.seq);
        for (std::size_t i = 0; i < t.blocks.size(); ++i) {
            KvBlockView& v = s.blocks[static_cast<std::size_t>(t.blocks[i])];
            v.owners.push_back(o.request);
            const int in_block = t.n_tokens - static_cast<int>(i) * s.block_size;
            v.filled = std::max(v.filled, std::clamp(in_block, 0, s.block_size));
        }
        s.tables.push_back(std::move(t));
    }
    if (contiguous) lay_out_contiguous(s, contiguous->regions());
    return s;
}

}  // namespace sixstep::serving
