#include "pipeline/llm/kv/kv_cache.h"

#include <fmt/format.h>

#include "pipeline/core/error.h"

namespace sixstep::llm {

KvCache::KvCache(const KvCacheParams& params) : params_(params) {
    if (params_.n_layer <= 0 || params_.n_head_kv <= 0 || params_.head_dim <= 0 || params_.n_ctx <= 0)
        throw Error(fmt::format("KV cache: invalid shape (n_layer {}, n_head_kv {}, head_dim {}, n_ctx {})",
                                params_.n_layer, params_.n_head_kv, params_.head_dim, params_.n_ctx));
    if (params_.block_size <= 0) throw Error(fmt::format("KV cache: invalid block size {}", params_.block_size));
    if (params_.n_blocks <= 0) params_.n_blocks = (params_.n_ctx + params_.block_size - 1) / params_.block_size;
    kv_dim_ = params_.n_head_kv * params_.head_dim;
    data_.assign(block_offset(params_.n_blocks, 0, 0), 0.0f);
    free_.reserve(params_.n_blocks);
    // A stack handing out low block numbers first keeps a lone sequence contiguous.
    for (int b = params_.n_blocks - 1; b >= 0; --b) free_.push_back(b);
}

KvCache::Sequence& KvCache::sequence(int seq) {
    if (seq < 0 || seq >= static_cast<int>(seqs_.size()) || !seqs_[seq].live)
        throw Error(fmt::format("KV cache: no sequence {}", seq));
    return seqs_[seq];
}
const KvCache::Sequence& KvCache::sequence(int seq) const { return const_cast<KvCache*>(this)->sequence(seq); }

int KvCache::add_sequence() {
    for (int i = 0; i < static_cast<int>(seqs_.size()); ++i) {
        if (!seqs_[i].live) {
            seqs_[i] = Sequence{true, 0, {}};
            return i;
        }
    }
    seqs_.push_back(Sequence{true, 0, {}});
    return static_cast<int>(seqs_.size()) - 1;
}

void KvCache::free_sequence(int seq) {
    Sequence& s = sequence(seq);
    for (auto it = s.blocks.rbegin(); it != s.blocks.rend(); ++it) free_.push_back(*it);
    s = Sequence{};
}

bool KvCache::has_sequence(int seq) const {
    return seq >= 0 && seq < static_cast<int>(seqs_.size()) && seqs_[seq].live;
}

void KvCache::clear() {
    for (int i = 0; i < static_cast<int>(seqs_.size()); ++i)
        if (seqs_[i].live) free_sequence(i);
}

void KvCache::reserve(int seq, int n_total) {
    Sequence& s = sequence(seq);
    if (n_total > params_.n_ctx)
        throw Error(fmt::format("KV cache full: sequence {} needs {} positions but the context holds {} (n_ctx)", seq,
                                n_total, params_.n_ctx));
    const int need = (n_total + params_.block_size - 1) / params_.block_size;
    const int extra = need - static_cast<int>(s.blocks.size());
    if (extra > static_cast<int>(free_.size()))
        throw Error(fmt::format("KV cache full: sequence {} needs {} more blocks of {} positions but only {} of {} "
                                "are free",
                                seq, extra, params_.block_size, free_.size(), params_.n_blocks));
    for (int i = 0; i < extra; ++i) {
        s.blocks.push_back(free_.back());
        free_.pop_back();
    }
}

void KvCache::commit(int seq, int n_total) {
    Sequence& s = sequence(seq);
    if (n_total > static_cast<int>(s.blocks.size()) * params_.block_size)
        throw Error(fmt::format("KV cache: sequence {} commits {} positions but only reserved {}", seq, n_total,
                                s.blocks.size() * params_.block_size));
    if (n_total > s.n_tokens) s.n_tokens = n_total;
}

int KvCache::n_tokens(int seq) const { return sequence(seq).n_tokens; }

void KvCache::truncate(int seq, int n) {
    Sequence& s = sequence(seq);
    if (n < 0) n = 0;
    if (n < s.n_tokens) s.n_tokens = n;
    const int keep = (s.n_tokens + params_.block_size - 1) / params_.block_size;
    while (static_cast<int>(s.blocks.size()) > keep) {
        free_.push_back(s.blocks.back());
        s.blocks.pop_back();
    }
}

const std::vector<int>& KvCache::block_table(int seq) const { return sequence(seq).blocks; }

float* KvCache::row(int layer, int seq, int pos, int kv) {
    Sequence& s = seqs_[seq];
    const int b = s.blocks[pos / params_.block_size];
    return data_.data() + block_offset(b, layer, kv) + static_cast<std::size_t>(pos % params_.block_size) * kv_dim_;
}

KvCacheStats KvCache::stats() const {
    KvCacheStats st;
    st.n_blocks = params_.n_blocks;
    st.block_size = params_.block_size;
    st.bytes_per_token_layer = 2 * static_cast<std::size_t>(kv_dim_) * sizeof(float);
    st.bytes_per_token = st.bytes_per_token_layer * params_.n_layer;
    st.bytes_total = data_.size() * sizeof(float);
    for (const auto& s : seqs_) {
        if (!s.live) continue;
        ++st.n_sequences;
        st.n_tokens += s.n_tokens;
        st.n_blocks_used += static_cast<int>(s.blocks.size());
    }
    const std::size_t block_bytes_layer = st.bytes_per_token_layer * params_.block_size;
    st.bytes_used = block_bytes_layer * params_.n_layer * st.n_blocks_used;
    st.bytes_used_per_layer.assign(params_.n_layer, block_bytes_layer * st.n_blocks_used);
    return st;
}

}  // namespace sixstep::llm
