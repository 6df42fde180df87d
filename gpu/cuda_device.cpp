#include "gpu/cuda_device.h"

#include <fmt/format.h>

#include "gpu/cublas_api.h"
#include "pipeline/core/error.h"

namespace sixstep::gpu {

CudaDevice::CudaDevice(int index) : index_(index) {
    int n = 0;
    CUDA_CHECK(cudaGetDeviceCount(&n));
    if (index < 0 || index >= n)
        throw Error(fmt::format("cuda backend: no CUDA device {} (this machine has {}: 0..{})", index, n, n - 1));
    make_current();
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
    name_ = prop.name;
    total_bytes_ = prop.totalGlobalMem;
    cc_ = prop.major * 10 + prop.minor;
    // A blocking stream (not cudaStreamNonBlocking): work queued on the
    // legacy default stream, such as a plain cudaMemcpy, is ordered with it.
    CUDA_CHECK(cudaStreamCreate(&stream_));
    CUBLAS_CHECK(cublas_api().create(&cublas_));
    CUBLAS_CHECK(cublas_api().set_stream(cublas_, stream_));
    // Plain float32 GEMMs: no TF32 tensor-core rounding, so the GPU agrees
    // with the CPU to float32 precision (a speed knob for later, measured).
    CUBLAS_CHECK(cublas_api().set_math_mode(cublas_, CUBLAS_DEFAULT_MATH));
}

CudaDevice::~CudaDevice() {
    // No throwing from here; at process exit CUDA may already be shut down.
    if (cudaSetDevice(index_) != cudaSuccess) return;
    if (cublas_) static_cast<void>(cublas_api().destroy(cublas_));
    if (stream_) static_cast<void>(cudaStreamDestroy(stream_));
}

std::optional<std::string> device_unavailable() {
    static const std::optional<std::string> why = []() -> std::optional<std::string> {
        int n = 0;
        const cudaError_t err = cudaGetDeviceCount(&n);
        if (err != cudaSuccess) {
            static_cast<void>(cudaGetLastError());
            return fmt::format("no CUDA device (cudaGetDeviceCount: {})", cudaGetErrorString(err));
        }
        if (n == 0) return std::string("no CUDA device (cudaGetDeviceCount found none)");
        if (cudaSetDevice(0) != cudaSuccess) {
            static_cast<void>(cudaGetLastError());
            return std::string("no CUDA device (cudaSetDevice(0) failed)");
        }
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
            static_cast<void>(cudaGetLastError());
            return std::string("no CUDA device (cudaGetDeviceProperties(0) failed)");
        }
        if (const cudaError_t probe = probe_kernel_image(); probe != cudaSuccess)
            return fmt::format("CUDA device 0 ({}, compute capability {}.{}) cannot run this build's kernels "
                               "(built for architectures {}): {}",
                               prop.name, prop.major, prop.minor, SIXSTEP_CUDA_ARCHITECTURES, cudaGetErrorString(probe));
        if (const std::optional<std::string> no_blas = cublas_unavailable())
            return fmt::format("CUDA device 0 ({}) is here, but cuBLAS is not: {}", prop.name, *no_blas);
        return std::nullopt;
    }();
    return why;
}

}  // namespace sixstep::gpu
