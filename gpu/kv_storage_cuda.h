// CudaKvStorage: the paged KV cache's blocks in device memory — the
// KvStorage (pipeline/llm/kv/kv_storage.h) of the CUDA backend, with the
// host storage's block layout, float32:
//     block b: for layer l: K [block_size, kv_dim], then V [block_size, kv_dim]
// Each block is allocated (and zeroed) the first time the block manager hands
// it out, so a cache sized for a long context costs only what is used. The
// kernels find a block through a device array of block base pointers, kept
// up to date as blocks are allocated; the block tables themselves stay with
// the manager (KvBlocks) and are uploaded with each batch.
//
// Every operation is queued on the device's stream, in order with the
// forward passes that read the blocks.
#pragma once
#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

#include "gpu/cuda_device.h"
#include "gpu/device_buffer.h"
#include "pipeline/llm/kv/kv_storage.h"

namespace sixstep::gpu {

class CudaKvStorage : public llm::KvStorage {
public:
    CudaKvStorage(std::shared_ptr<const CudaDevice> device, const llm::KvShape& shape, int block_size, int n_blocks);
    ~CudaKvStorage() override;

    std::string_view kind() const override { return "cuda"; }
    void allocate(int block) override;
    void copy_block(int src, int dst) override;
    std::size_t bytes_allocated() const override { return n_allocated_ * block_bytes_; }

    const CudaDevice& device() const { return *device_; }
    float* const* block_pointers() const { return block_ptrs_dev_.data(); }  // device [n_blocks]
    int block_size() const { return block_size_; }

private:
    std::shared_ptr<const CudaDevice> device_;
    int block_size_ = 0;
    std::size_t block_bytes_ = 0;         // all layers, K and V
    std::size_t n_allocated_ = 0;
    std::vector<float*> blocks_;          // [n_blocks] device memory, null until first use
    DeviceBuffer<float*> block_ptrs_dev_;  // the same pointers, on the device
};

}  // namespace sixstep::gpu
