#include "pipeline/llm/kv/kv_cache.h"

#include <fmt/format.h>

#include "pipeline/core/error.h"

namespace sixstep::llm {

namespace {

KvBlocksParams checked_block_params(const KvCacheParams& p) {
    if (p.n_layer <= 0 || p.n_head_kv <= 0 || p.head_dim <= 0 || p.n_ctx <= 0)
        throw Error(fmt::format("KV cache: invalid shape (n_layer {}, n_head_kv {}, head_dim {}, n_ctx {})", p.n_layer,
                                p.n_head_kv, p.head_dim, p.n_ctx));
    return {p.n_ctx, p.block_size, p.n_blocks};
}

}  // namespace

KvCache::KvCache(const KvCacheParams& params, std::unique_ptr<KvStorage> storage)
    : params_(params), blocks_(checked_block_params(params)), storage_(std::move(storage)) {
    params_.n_blocks = blocks_.n_blocks();
    if (!storage_) storage_ = std::make_unique<HostKvStorage>(params_.shape(), params_.block_size, params_.n_blocks);
    if (storage_->kind() == "host") host_ = static_cast<HostKvStorage*>(storage_.get());
    blocks_.set_on_first_use([](void* self, int block) { static_cast<KvStorage*>(self)->allocate(block); },
                             storage_.get());
}

HostKvStorage& KvCache::host() {
    if (!host_) throw Error(fmt::format("KV cache: the cache lives in {} memory, not on the host", storage_->kind()));
    return *host_;
}
const HostKvStorage& KvCache::host() const { return const_cast<KvCache*>(this)->host(); }

void KvCache::reserve(int seq, int pos_begin, int n_total) {
    copies_.clear();
    blocks_.reserve(seq, pos_begin, n_total, copies_);
    for (const BlockCopy& c : copies_) storage_->copy_block(c.src, c.dst);
}

float* KvCache::row(int layer, int seq, int pos, int kv) {
    const int bs = params_.block_size;
    const int b = blocks_.block_table(seq)[static_cast<std::size_t>(pos / bs)];
    HostKvStorage& h = host();
    return (kv ? h.v(b, layer) : h.k(b, layer)) + static_cast<std::size_t>(pos % bs) * kv_dim();
}

KvCacheStats KvCache::stats() const {
    KvCacheStats st;
    const KvShape shape = params_.shape();
    st.n_blocks = params_.n_blocks;
    st.block_size = params_.block_size;
    st.bytes_per_token_layer = shape.bytes_per_token_layer();
    st.bytes_per_token = shape.bytes_per_token();
    st.bytes_total = st.bytes_per_token * params_.block_size * static_cast<std::size_t>(params_.n_blocks);
    st.bytes_allocated = storage_->bytes_allocated();
    for (int s : blocks_.sequences()) {
        ++st.n_sequences;
        st.n_tokens += blocks_.n_tokens(s);
    }
    st.n_blocks_used = blocks_.n_used();
    st.n_blocks_shared = blocks_.n_shared();
    const std::size_t block_bytes_layer = st.bytes_per_token_layer * params_.block_size;
    st.bytes_used = block_bytes_layer * params_.n_layer * st.n_blocks_used;
    st.bytes_used_per_layer.assign(params_.n_layer, block_bytes_layer * st.n_blocks_used);
    return st;
}

}  // namespace sixstep::llm
