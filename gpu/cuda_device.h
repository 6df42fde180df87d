// CudaDevice: one GPU as the backend uses it — its index, name and memory,
// the stream on which every kernel and copy of the backend is queued (so the
// KV cache's block copies, the weights' upload and the forward pass run in
// the order they were asked for), and a cuBLAS handle bound to that stream.
// The backend and every KV cache it makes share one, so a cache may outlive
// its backend.
//
// The current device is a per-thread setting in CUDA, and the engine may call
// a backend from a worker thread other than the one that made it: every entry
// point calls make_current() first.
#pragma once
#include <cstddef>
#include <optional>
#include <string>

#include "gpu/cuda_check.h"

namespace sixstep::gpu {

class CudaDevice {
public:
    // Throws sixstep::Error when there is no device `index`.
    explicit CudaDevice(int index);
    ~CudaDevice();
    CudaDevice(const CudaDevice&) = delete;
    CudaDevice& operator=(const CudaDevice&) = delete;

    int index() const { return index_; }
    const std::string& name() const { return name_; }            // "NVIDIA H200"
    std::size_t total_bytes() const { return total_bytes_; }     // device memory
    int compute_capability() const { return cc_; }               // 90 for 9.0
    cudaStream_t stream() const { return stream_; }
    cublasHandle_t cublas() const { return cublas_; }

    void make_current() const { CUDA_CHECK(cudaSetDevice(index_)); }
    void synchronize() const { CUDA_CHECK(cudaStreamSynchronize(stream_)); }

private:
    int index_ = 0;
    std::string name_;
    std::size_t total_bytes_ = 0;
    int cc_ = 0;
    cudaStream_t stream_ = nullptr;
    cublasHandle_t cublas_ = nullptr;
};

// Why no CUDA device can run this build's kernels, or nothing when device 0
// can: "no CUDA device (cudaGetDeviceCount: CUDA driver version is
// insufficient for CUDA runtime version)". Any error counts as "no GPU" —
// without one, cudaGetDeviceCount fails with 35 (no driver) or 34 (a stub
// library). Asked once per process; the answer is kept.
std::optional<std::string> device_unavailable();

// Whether this build's kernels can run on the current device: cudaSuccess,
// or the error CUDA gives for a kernel with no image for its architecture.
// (probe.cu)
cudaError_t probe_kernel_image();

}  // namespace sixstep::gpu
