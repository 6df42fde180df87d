#include "pipeline/llm/kv/kv_storage.h"

#include <algorithm>

#include <fmt/format.h>

#include "pipeline/core/error.h"

namespace sixstep::llm {

HostKvStorage::HostKvStorage(const KvShape& shape, int block_size, int n_blocks)
    : block_size_(block_size),
      kv_dim_(shape.kv_dim()),
      block_floats_(2 * static_cast<std::size_t>(shape.n_layer) * block_size * shape.kv_dim()),
      blocks_(static_cast<std::size_t>(n_blocks)) {
    if (shape.elem_bytes != static_cast<int>(sizeof(float)))
        throw Error(fmt::format("KV cache: host storage holds float32, not {}-byte elements", shape.elem_bytes));
}

void HostKvStorage::allocate(int block) {
    auto& b = blocks_.at(static_cast<std::size_t>(block));
    if (!b.empty()) return;
    // Zeroed, so a copy-on-write of a half-filled block never reads
    // indeterminate values; the cost is paid once per block, on first use.
    b.assign(block_floats_, 0.0f);
    ++n_allocated_;
}

void HostKvStorage::copy_block(int src, int dst) {
    const auto& s = blocks_.at(static_cast<std::size_t>(src));
    auto& d = blocks_.at(static_cast<std::size_t>(dst));
    if (s.empty() || d.empty())
        throw Error(fmt::format("KV cache: copy of block {} into {} before either was allocated", src, dst));
    std::copy_n(s.data(), block_floats_, d.data());
}

}  // namespace sixstep::llm
