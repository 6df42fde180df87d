#include "pipeline/serving/prefix_cache.h"

#include <algorithm>
#include <tuple>

namespace sixstep::serving {

namespace {

std::uint64_t splitmix64(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

}  // namespace

std::uint64_t block_hash(std::uint64_t parent, std::span<const int> block_tokens) {
    std::uint64_t h = splitmix64(parent ^ 0x70726566697863ULL);
    for (int t : block_tokens) h = splitmix64(h ^ static_cast<std::uint32_t>(t));
    return h;
}

void extend_block_hashes(std::span<const int> tokens, int block_size, std::vector<std::uint64_t>& hashes) {
    const std::size_t bs = static_cast<std::size_t>(block_size);
    for (std::size_t i = hashes.size(); (i + 1) * bs <= tokens.size(); ++i)
        hashes.push_back(block_hash(i == 0 ? 0 : hashes[i - 1], tokens.subspan(i * bs, bs)));
}

PrefixCache::PrefixCache(llm::KvBlocks& blocks) : blocks_(blocks) {}

PrefixCache::~PrefixCache() { clear(); }

std::vector<int> PrefixCache::match(std::span<const int> tokens, std::span<const std::uint64_t> hashes,
                                    int max_blocks) const {
    const std::size_t bs = static_cast<std::size_t>(blocks_.block_size());
    const std::size_t n = std::min({hashes.size(), tokens.size() / bs, static_cast<std::size_t>(std::max(0, max_blocks))});
    std::vector<int> hit;
    for (std::size_t i = 0; i < n; ++i) {
        const auto it = by_hash_.find(hashes[i]);
        if (it == by_hash_.end()) break;
        const Entry& e = it->second;
        const std::uint64_t parent = i == 0 ? 0 : hashes[i - 1];
        if (e.parent != parent || !std::equal(e.tokens.begin(), e.tokens.end(), tokens.begin() + static_cast<std::ptrdiff_t>(i * bs))) break;
        hit.push_back(e.block);
    }
    return hit;
}

void PrefixCache::touch(std::span<const int> blocks) {
    // One tick for all: among them the deepest is evicted first.
    const long long now = ++tick_;
    for (int b : blocks) {
        const auto it = by_block_.find(b);
        if (it != by_block_.end()) by_hash_.at(it->second).last_use = now;
    }
}

void PrefixCache::insert(std::span<const int> tokens, std::span<const std::uint64_t> hashes,
                         std::span<const int> table, int n_full) {
    const std::size_t bs = static_cast<std::size_t>(blocks_.block_size());
    const long long now = ++tick_;
    for (std::size_t i = 0; i < static_cast<std::size_t>(n_full); ++i) {
        const auto it = by_hash_.find(hashes[i]);
        if (it != by_hash_.end()) {
            it->second.last_use = std::max(it->second.last_use, now);
            continue;
        }
        const int block = table[i];
        if (by_block_.count(block)) continue;  // cached under another key: never, as full blocks do not change
        Entry e;
        e.parent = i == 0 ? 0 : hashes[i - 1];
        e.tokens.assign(tokens.begin() + static_cast<std::ptrdiff_t>(i * bs),
                        tokens.begin() + static_cast<std::ptrdiff_t>((i + 1) * bs));
        e.block = block;
        e.depth = static_cast<int>(i);
        e.last_use = now;
        blocks_.retain(block);
        by_block_[block] = hashes[i];
        by_hash_.emplace(hashes[i], std::move(e));
        ++stats_.n_inserted;
    }
}

int PrefixCache::n_evictable() const {
    int n = 0;
    for (const auto& [b, h] : by_block_) n += blocks_.ref_count(b) == 1;
    return n;
}

int PrefixCache::n_evictable_among(std::span<const int> blocks) const {
    int n = 0;
    for (int b : blocks) n += cached(b) && blocks_.ref_count(b) == 1;
    return n;
}

void PrefixCache::drop(std::uint64_t hash) {
    const auto it = by_hash_.find(hash);
    const int block = it->second.block;
    by_block_.erase(block);
    by_hash_.erase(it);
    blocks_.release(block);
}

int PrefixCache::evict(int n) {
    if (n <= 0) return 0;
    // (last use, −depth, hash): oldest first, deepest first among equals.
    std::vector<std::tuple<long long, int, std::uint64_t>> victims;
    for (const auto& [h, e] : by_hash_)
        if (blocks_.ref_count(e.block) == 1) victims.emplace_back(e.last_use, -e.depth, h);
    const std::size_t k = std::min(victims.size(), static_cast<std::size_t>(n));
    std::partial_sort(victims.begin(), victims.begin() + static_cast<std::ptrdiff_t>(k), victims.end());
    for (std::size_t i = 0; i < k; ++i) drop(std::get<2>(victims[i]));
    stats_.n_evicted += static_cast<long long>(k);
    return static_cast<int>(k);
}

void PrefixCache::clear() {
    while (!by_hash_.empty()) drop(by_hash_.begin()->first);
}

}  // namespace sixstep::serving
