#include "pipeline/llm/kv/kv_blocks.h"

#include <algorithm>

#include <fmt/format.h>

#include "pipeline/core/error.h"

namespace sixstep::llm {

void check_kv_pool(int kv_blocks, int block_size) {
    if (kv_blocks < 1 || kv_blocks > max_kv_blocks)
        throw Error(fmt::format("kv blocks {}: the pool needs 1 to {} blocks", kv_blocks, max_kv_blocks));
    if (block_size < 1 || block_size > max_block_size)
        throw Error(fmt::format("block size {}: a block holds 1 to {} positions", block_size, max_block_size));
}

KvBlocks::KvBlocks(const KvBlocksParams& params) : params_(params) {
    if (params_.n_ctx <= 0) throw Error(fmt::format("KV cache: invalid context {} (n_ctx)", params_.n_ctx));
    if (params_.block_size <= 0 || params_.block_size > max_block_size)
        throw Error(fmt::format("KV cache: block size {}: a block holds 1 to {} positions", params_.block_size,
                                max_block_size));
    if (params_.n_blocks <= 0) params_.n_blocks = blocks_for(params_.n_ctx);
    refs_.assign(params_.n_blocks, 0);
    touched_.assign(params_.n_blocks, 0);
    free_.reserve(params_.n_blocks);
    // A stack handing out low block numbers first keeps a lone sequence contiguous.
    for (int b = params_.n_blocks - 1; b >= 0; --b) free_.push_back(b);
}

KvBlocks::Sequence& KvBlocks::sequence(int seq) {
    if (seq < 0 || seq >= static_cast<int>(seqs_.size()) || !seqs_[seq].live)
        throw Error(fmt::format("KV cache: no sequence {}", seq));
    return seqs_[seq];
}
const KvBlocks::Sequence& KvBlocks::sequence(int seq) const { return const_cast<KvBlocks*>(this)->sequence(seq); }

int KvBlocks::n_shared() const {
    return static_cast<int>(std::count_if(refs_.begin(), refs_.end(), [](int r) { return r > 1; }));
}

int KvBlocks::ref_count(int block) const {
    if (block < 0 || block >= params_.n_blocks) throw Error(fmt::format("KV cache: no block {}", block));
    return refs_[block];
}

int KvBlocks::take_block() {
    const int b = free_.back();
    free_.pop_back();
    refs_[b] = 1;
    if (!touched_[b]) {
        touched_[b] = 1;
        if (on_first_use_) on_first_use_(on_first_use_ctx_, b);
    }
    return b;
}

void KvBlocks::retain(int block) {
    if (ref_count(block) == 0) throw Error(fmt::format("KV cache: block {} is free: nothing to retain", block));
    ++refs_[block];
}

void KvBlocks::release(int block) {
    if (ref_count(block) == 0) throw Error(fmt::format("KV cache: block {} is already free", block));
    if (--refs_[block] == 0) free_.push_back(block);
}

int KvBlocks::add_sequence() {
    for (int i = 0; i < static_cast<int>(seqs_.size()); ++i) {
        if (!seqs_[i].live) {
            seqs_[i] = Sequence{true, 0, {}};
            return i;
        }
    }
    seqs_.push_back(Sequence{true, 0, {}});
    return static_cast<int>(seqs_.size()) - 1;
}

int KvBlocks::fork_sequence(int src) {
    const Sequence copy = sequence(src);
    const int s = add_sequence();
    seqs_[s] = copy;
    for (int b : copy.blocks) ++refs_[b];
    return s;
}

void KvBlocks::free_sequence(int seq) {
    Sequence& s = sequence(seq);
    // Last block first, so a lone sequence gets the same blocks back next time.
    for (auto it = s.blocks.rbegin(); it != s.blocks.rend(); ++it) release(*it);
    s = Sequence{};
}

bool KvBlocks::has_sequence(int seq) const {
    return seq >= 0 && seq < static_cast<int>(seqs_.size()) && seqs_[seq].live;
}

void KvBlocks::clear() {
    for (int i = 0; i < static_cast<int>(seqs_.size()); ++i)
        if (seqs_[i].live) free_sequence(i);
}

std::vector<int> KvBlocks::sequences() const {
    std::vector<int> ids;
    for (int i = 0; i < static_cast<int>(seqs_.size()); ++i)
        if (seqs_[i].live) ids.push_back(i);
    return ids;
}

void KvBlocks::reserve(int seq, int pos_begin, int pos_end, std::vector<BlockCopy>& copies) {
    Sequence& s = sequence(seq);
    if (pos_end <= pos_begin) return;
    if (pos_end > params_.n_ctx)
        throw Error(fmt::format("KV cache full: sequence {} needs {} positions but the context holds {} (n_ctx)", seq,
                                pos_end, params_.n_ctx));
    const int have = static_cast<int>(s.blocks.size());
    const int need = blocks_for(pos_end);
    const int fresh = std::max(0, need - have);
    // Existing blocks this write touches that someone else also owns.
    int shared = 0;
    for (int i = pos_begin / params_.block_size; i < std::min(have, need); ++i) shared += refs_[s.blocks[i]] > 1;
    if (fresh + shared > n_free())
        throw Error(fmt::format("KV cache full: sequence {} needs {} more blocks of {} positions but only {} of {} "
                                "are free",
                                seq, fresh + shared, params_.block_size, n_free(), params_.n_blocks));
    for (int i = pos_begin / params_.block_size; i < std::min(have, need); ++i) {
        int& b = s.blocks[i];
        if (refs_[b] <= 1) continue;
        const int copy = take_block();
        copies.push_back({b, copy});
        release(b);
        b = copy;
    }
    for (int i = 0; i < fresh; ++i) s.blocks.push_back(take_block());
}

void KvBlocks::commit(int seq, int n_total) {
    Sequence& s = sequence(seq);
    if (n_total > static_cast<int>(s.blocks.size()) * params_.block_size)
        throw Error(fmt::format("KV cache: sequence {} commits {} positions but only reserved {}", seq, n_total,
                                s.blocks.size() * params_.block_size));
    if (n_total > s.n_tokens) s.n_tokens = n_total;
}

int KvBlocks::n_tokens(int seq) const { return sequence(seq).n_tokens; }

void KvBlocks::truncate(int seq, int n) {
    Sequence& s = sequence(seq);
    if (n < 0) n = 0;
    if (n < s.n_tokens) s.n_tokens = n;
    const int keep = blocks_for(s.n_tokens);
    while (static_cast<int>(s.blocks.size()) > keep) {
        release(s.blocks.back());
        s.blocks.pop_back();
    }
}

void KvBlocks::adopt(int seq, std::span<const int> blocks) {
    Sequence& s = sequence(seq);
    if (!s.blocks.empty()) throw Error(fmt::format("KV cache: sequence {} is not empty: cannot adopt blocks", seq));
    const int n = static_cast<int>(blocks.size()) * params_.block_size;
    if (n > params_.n_ctx)
        throw Error(fmt::format("KV cache full: sequence {} needs {} positions but the context holds {} (n_ctx)", seq, n,
                                params_.n_ctx));
    for (int b : blocks)
        if (b < 0 || b >= params_.n_blocks || refs_[b] == 0)
            throw Error(fmt::format("KV cache: block {} is not in use: cannot adopt it", b));
    for (int b : blocks) {
        ++refs_[b];
        s.blocks.push_back(b);
    }
    s.n_tokens = n;
}

const std::vector<int>& KvBlocks::block_table(int seq) const { return sequence(seq).blocks; }

}  // namespace sixstep::llm
