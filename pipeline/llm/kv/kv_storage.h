// KvStorage: the memory half of the paged KV cache. The block manager
// (kv_blocks.h) decides which physical block holds which positions; a
// storage holds the blocks' keys and values where its backend computes —
// host memory for the CPU (HostKvStorage below), device memory for a GPU.
//
// Every block has the same layout, all layers together:
//     block b: for layer l: K [block_size, kv_dim]    kv_dim = n_head_kv · head_dim
//                           V [block_size, kv_dim]
// Memory is allocated block by block the first time the manager hands a
// block out, so a cache sized for a long context costs only what is used.
#pragma once
#include <cstddef>
#include <string_view>
#include <vector>

#include "pipeline/core/aligned.h"

namespace sixstep::llm {

// The shape of one position's keys and values.
struct KvShape {
    int n_layer = 0;     // transformer layers
    int n_head_kv = 0;   // key/value heads per layer (GQA: fewer than query heads)
    int head_dim = 0;    // elements per head
    int elem_bytes = 4;  // bytes per element (float32 today)

    int kv_dim() const { return n_head_kv * head_dim; }
    // 2 (K and V) × n_layer × n_head_kv × head_dim × bytes per element.
    std::size_t bytes_per_token() const { return 2 * static_cast<std::size_t>(n_layer) * kv_dim() * elem_bytes; }
    std::size_t bytes_per_token_layer() const { return 2 * static_cast<std::size_t>(kv_dim()) * elem_bytes; }
};

class KvStorage {
public:
    virtual ~KvStorage() = default;
    virtual std::string_view kind() const = 0;  // "host", "cuda"
    // Makes block `block` usable (allocates its memory). Called once per
    // block, the first time it is handed out.
    virtual void allocate(int block) = 0;
    // Copies every layer's K and V of block src into block dst (copy-on-write).
    virtual void copy_block(int src, int dst) = 0;
    virtual std::size_t bytes_allocated() const = 0;
};

// Keys and values in host memory, float32, for the CPU backend.
class HostKvStorage : public KvStorage {
public:
    HostKvStorage(const KvShape& shape, int block_size, int n_blocks);

    std::string_view kind() const override { return "host"; }
    void allocate(int block) override;
    void copy_block(int src, int dst) override;
    std::size_t bytes_allocated() const override { return n_allocated_ * block_floats_ * sizeof(float); }

    // The base of one block's K or V rows in one layer: [block_size, kv_dim].
    float* k(int block, int layer) { return base(block, layer, 0); }
    float* v(int block, int layer) { return base(block, layer, 1); }
    const float* k(int block, int layer) const { return const_cast<HostKvStorage*>(this)->base(block, layer, 0); }
    const float* v(int block, int layer) const { return const_cast<HostKvStorage*>(this)->base(block, layer, 1); }

private:
    float* base(int block, int layer, int kv) {
        return blocks_[static_cast<std::size_t>(block)].data() +
               (static_cast<std::size_t>(layer) * 2 + kv) * static_cast<std::size_t>(block_size_) * kv_dim_;
    }

    int block_size_ = 0;
    int kv_dim_ = 0;
    std::size_t block_floats_ = 0;  // all layers, K and V
    std::size_t n_allocated_ = 0;
    std::vector<AlignedVector<float>> blocks_;  // [n_blocks], empty until first use
};

}  // namespace sixstep::llm
