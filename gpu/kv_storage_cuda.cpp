#include "gpu/kv_storage_cuda.h"

#include <fmt/format.h>

#include "pipeline/core/error.h"

namespace sixstep::gpu {

CudaKvStorage::CudaKvStorage(std::shared_ptr<const CudaDevice> device, const llm::KvShape& shape, int block_size,
                             int n_blocks)
    : device_(std::move(device)),
      block_size_(block_size),
      block_bytes_(2 * static_cast<std::size_t>(shape.n_layer) * block_size * shape.kv_dim() * sizeof(float)),
      blocks_(static_cast<std::size_t>(n_blocks), nullptr) {
    if (shape.elem_bytes != static_cast<int>(sizeof(float)))
        throw Error(fmt::format("KV cache: cuda storage holds float32, not {}-byte elements", shape.elem_bytes));
    device_->make_current();
    block_ptrs_dev_.ensure(blocks_.size());
    // Null pointers until first use: a kernel that reads an unallocated block
    // faults loudly instead of reading another sequence's keys.
    CUDA_CHECK(cudaMemsetAsync(block_ptrs_dev_.data(), 0, block_ptrs_dev_.bytes(), device_->stream()));
    device_->synchronize();
}

CudaKvStorage::~CudaKvStorage() {
    if (cudaSetDevice(device_->index()) != cudaSuccess) return;
    static_cast<void>(cudaStreamSynchronize(device_->stream()));
    for (float* b : blocks_)
        if (b) static_cast<void>(cudaFree(b));
}

void CudaKvStorage::allocate(int block) {
    float*& b = blocks_.at(static_cast<std::size_t>(block));
    if (b) return;
    device_->make_current();
    void* p = nullptr;
    CUDA_CHECK(cudaMalloc(&p, block_bytes_));
    b = static_cast<float*>(p);
    ++n_allocated_;
    // Zeroed, as the host storage does, so that a copy-on-write of a
    // half-filled block never carries leftovers.
    CUDA_CHECK(cudaMemsetAsync(p, 0, block_bytes_, device_->stream()));
    // The source is an element of blocks_, which never moves and is never
    // rewritten once set, so an asynchronous read of it is safe.
    CUDA_CHECK(cudaMemcpyAsync(block_ptrs_dev_.data() + block, &b, sizeof(float*), cudaMemcpyHostToDevice,
                               device_->stream()));
}

void CudaKvStorage::copy_block(int src, int dst) {
    float* s = blocks_.at(static_cast<std::size_t>(src));
    float* d = blocks_.at(static_cast<std::size_t>(dst));
    if (!s || !d) throw Error(fmt::format("KV cache: copy of block {} into {} before either was allocated", src, dst));
    device_->make_current();
    CUDA_CHECK(cudaMemcpyAsync(d, s, block_bytes_, cudaMemcpyDeviceToDevice, device_->stream()));
}

}  // namespace sixstep::gpu
