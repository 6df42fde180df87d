// CUDA_CHECK / CUBLAS_CHECK: every CUDA runtime and cuBLAS call in gpu/ goes
// through one of these, so a failure becomes one sixstep::Error naming the
// call site and CUDA's own words instead of a crash or a silent wrong answer:
//     gpu/cuda_backend.cpp:212: cudaMalloc(&p, bytes): out of memory (cudaErrorMemoryAllocation)
// Kernel launches are checked with CUDA_CHECK(cudaGetLastError()) right after
// the launch; errors that happen while a kernel runs surface at the next
// synchronizing call, which is checked the same way.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace sixstep::gpu {

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line);

}  // namespace sixstep::gpu

#define CUDA_CHECK(call)                                                                   \
    do {                                                                                   \
        const cudaError_t sixstep_cuda_err_ = (call);                                      \
        if (sixstep_cuda_err_ != cudaSuccess)                                              \
            ::sixstep::gpu::throw_cuda_error(sixstep_cuda_err_, #call, __FILE__, __LINE__); \
    } while (0)

#define CUBLAS_CHECK(call)                                                                        \
    do {                                                                                          \
        const cublasStatus_t sixstep_cublas_status_ = (call);                                     \
        if (sixstep_cublas_status_ != CUBLAS_STATUS_SUCCESS)                                      \
            ::sixstep::gpu::throw_cublas_error(sixstep_cublas_status_, #call, __FILE__, __LINE__); \
    } while (0)
