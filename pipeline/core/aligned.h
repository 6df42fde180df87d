// Buffers that start on a cache line. The SIMD kernels read activations
// and KV rows in 32- or 64-byte vectors; from a 16-byte aligned start (what
// malloc gives) one load in two or four straddles two cache lines, and which
// buffer got which alignment was down to the order of allocations: two
// alike 1-thread backends decoded 1–2 % apart, the later one slower.
#pragma once
#include <cstddef>
#include <new>
#include <vector>

namespace sixstep {

inline constexpr std::size_t cache_line_bytes = 64;

// A std::allocator that aligns every allocation to a cache line.
template <typename T>
struct CacheAlignedAllocator {
    using value_type = T;
    CacheAlignedAllocator() = default;
    template <typename U>
    CacheAlignedAllocator(const CacheAlignedAllocator<U>&) noexcept {}
    T* allocate(std::size_t n) {
        if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
        return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{cache_line_bytes}));
    }
    void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, std::align_val_t{cache_line_bytes}); }
    template <typename U>
    bool operator==(const CacheAlignedAllocator<U>&) const noexcept { return true; }
};

template <typename T>
using AlignedVector = std::vector<T, CacheAlignedAllocator<T>>;

}  // namespace sixstep
