// DeviceBuffer / PinnedBuffer: owning arrays in device memory and in
// page-locked host memory (what an asynchronous copy needs). They only grow:
// ensure(n) reallocates when n elements do not fit and keeps nothing, since
// the backend's scratch is rewritten by every forward pass.
//
//     DeviceBuffer<float> x;
//     x.ensure(n_tokens * n_embd);          // cudaMalloc only when it grows
//     kernel<<<…, stream>>>(x.data(), …);
#pragma once
#include <cstddef>
#include <utility>

#include "gpu/cuda_check.h"

namespace sixstep::gpu {

struct DeviceMemory {
    static void* allocate(std::size_t bytes) {
        void* p = nullptr;
        CUDA_CHECK(cudaMalloc(&p, bytes));
        return p;
    }
    static void release(void* p) noexcept { static_cast<void>(cudaFree(p)); }
};

struct PinnedMemory {
    static void* allocate(std::size_t bytes) {
        void* p = nullptr;
        CUDA_CHECK(cudaMallocHost(&p, bytes));
        return p;
    }
    static void release(void* p) noexcept { static_cast<void>(cudaFreeHost(p)); }
};

template <typename T, typename Memory>
class Buffer {
public:
    Buffer() = default;
    explicit Buffer(std::size_t n) { ensure(n); }
    ~Buffer() { release(); }
    Buffer(Buffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
    Buffer& operator=(Buffer&& o) noexcept {
        if (this != &o) {
            release();
            p_ = std::exchange(o.p_, nullptr);
            n_ = std::exchange(o.n_, 0);
        }
        return *this;
    }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;

    // At least n elements afterwards; the old contents are lost when it grows.
    void ensure(std::size_t n) {
        if (n <= n_) return;
        release();
        p_ = static_cast<T*>(Memory::allocate(n * sizeof(T)));
        n_ = n;
    }
    T* data() { return p_; }
    const T* data() const { return p_; }
    std::size_t size() const { return n_; }
    std::size_t bytes() const { return n_ * sizeof(T); }

private:
    // Errors are ignored here: a destructor must not throw, and at process
    // exit the CUDA context may already be gone (cudaErrorCudartUnloading).
    void release() noexcept {
        if (p_) Memory::release(p_);
        p_ = nullptr;
        n_ = 0;
    }
    T* p_ = nullptr;
    std::size_t n_ = 0;
};

template <typename T>
using DeviceBuffer = Buffer<T, DeviceMemory>;
template <typename T>
using PinnedBuffer = Buffer<T, PinnedMemory>;

}  // namespace sixstep::gpu
