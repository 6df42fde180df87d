#include "pipeline/serving/contiguous_allocator.h"

#include <algorithm>

#include <fmt/format.h>

#include "pipeline/core/error.h"

namespace sixstep::serving {

ContiguousAllocator::ContiguousAllocator(int capacity) : capacity_(capacity) {
    if (capacity < 1) throw Error(fmt::format("contiguous KV: capacity {} must be >= 1", capacity));
}

int ContiguousAllocator::largest_hole() const {
    int largest = 0, at = 0;
    for (const auto& [begin, r] : by_begin_) {
        largest = std::max(largest, begin - at);
        at = begin + r.size;
    }
    return std::max(largest, capacity_ - at);
}

std::optional<int> ContiguousAllocator::allocate(int owner, int size) {
    if (size < 1) throw Error(fmt::format("contiguous KV: cannot reserve {} units", size));
    if (holds(owner)) throw Error(fmt::format("contiguous KV: request {} already holds a region", owner));
    int at = 0;
    auto place = [&](int begin) {
        by_begin_[begin] = {owner, begin, size};
        by_owner_[owner] = begin;
        n_used_ += size;
        return begin;
    };
    for (const auto& [begin, r] : by_begin_) {
        if (begin - at >= size) return place(at);
        at = begin + r.size;
    }
    if (capacity_ - at >= size) return place(at);
    return std::nullopt;
}

void ContiguousAllocator::free(int owner) {
    const auto it = by_owner_.find(owner);
    if (it == by_owner_.end()) throw Error(fmt::format("contiguous KV: request {} holds no region", owner));
    n_used_ -= by_begin_.at(it->second).size;
    by_begin_.erase(it->second);
    by_owner_.erase(it);
}

std::vector<ContiguousRegion> ContiguousAllocator::regions() const {
    std::vector<ContiguousRegion> out;
    for (const auto& [begin, r] : by_begin_) out.push_back(r);
    return out;
}

}  // namespace sixstep::serving
